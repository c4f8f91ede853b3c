"""Leadership: the controllers run only while this replica holds the leader Lease, and write only
while it holds it with margin.

Every replica watches and serves the webhook; the one that holds the Lease also reconciles.
``Leadership`` tries to take the Lease every ``retry`` seconds, renews it as often once it holds
it, and calls ``on_elected`` once. A leader that cannot renew for ``renew_deadline`` stops
leading the only safe way: ``on_lost`` (the process ends, as client-go's leaders do, and its
pod restarts as a follower). On any stop, ``stop`` ends the renewals, the controllers drain their
passes for no longer than the fence lets them write (``held_for``: nothing after a loss), and
``release`` hands the Lease to the next leader without waiting for it to expire.

The fence (``fence``, given to the controllers' client) makes "two replicas never write at once"
hold whatever the process goes through: every write, immediately before it is sent, needs the
last successful renewal to have been sent less than ``renew_deadline`` ago on the monotonic clock
(which runs on while the process is paused, SIGSTOP, or starved); a write that finds otherwise is
not sent (``NotLeading``) and leadership is given up. Another replica takes over only once the
Lease was not renewed for ``duration`` (longer than ``renew_deadline``), so the old leader's last
write was sent at least ``duration - renew_deadline`` seconds (5 s by default) before the new
leader's first. A write may wait for its answer only until the fence closes; its connection is
then reset, so what it sent into a stalled network and had not reached the API server is
dropped, not delivered after the fence closed. (Between the check at the first send and the
bytes reaching the socket there remain a few microseconds in which a pause is not noticed.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable

from ..cluster.errors import ApiError
from ..cluster.leases import LeaseElector, NotLeading

__all__ = ["Leadership"]

logger = logging.getLogger("ome_operator.leadership")


class Leadership:
    def __init__(
        self,
        elector: LeaseElector,
        on_elected: Callable[[], None],
        on_lost: Callable[[], None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._elector, self._on_elected, self._on_lost = elector, on_elected, on_lost
        self._clock = clock
        self.leading = False
        #: When the last successful renewal was sent (the Lease runs from then); never: -inf.
        self._renewed = -math.inf
        self._task: asyncio.Task[None] | None = None
        #: Leadership is given up once, by the loop or by a write the fence refused (a thread).
        self._giving_up = threading.Lock()
        self._given_up = False

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop campaigning and renewing (a Lease held stays held until it expires)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def held_for(self) -> float:
        """Seconds this replica may still write (what the fence still lets through): the renew
        deadline from the last renewal sent; 0 when never held or lost."""
        if not self.leading:
            return 0.0
        return max(0.0, self._renewed + self._elector.terms.renew_deadline - self._clock())

    def fence(self, method: str, path: str) -> float:
        """Asked before each write of the controllers (any thread): the seconds the write may
        wait for its answer, while the last renewal is younger than the renew deadline; else
        ``NotLeading`` (the write is not sent), and a leader gives up leading."""
        deadline = self._elector.terms.renew_deadline
        ago = self._clock() - self._renewed
        if self.leading and ago < deadline:
            return deadline - ago
        if self.leading:
            self._give_up(ago, f"{method} {path}")
        raise NotLeading.refusing(method, path, None if math.isinf(ago) else ago)

    async def release(self) -> None:
        """After ``stop`` and once the controllers stopped writing: hand the Lease over."""
        if self.leading:
            with contextlib.suppress(ApiError):
                await asyncio.to_thread(self._elector.release)
            self.leading = False

    def _give_up(self, ago: float, refused: str | None = None) -> None:
        """Stop leading, once: no write passes the fence from here on; ``on_lost``. ``refused``:
        the write that found the last renewal too old (None: the renewal loop did)."""
        with self._giving_up:
            if self._given_up:
                return
            self._given_up = True
            self.leading = False
        logger.error(
            "Lost the leader Lease; stopping so that one replica reconciles",
            extra={
                "identity": self._elector.identity,
                "renewedAgo": round(ago, 3),
                "noticedBy": refused or "the renewal loop",
            },
        )
        self._on_lost()

    def _expired(self) -> bool:
        """Whether a leader's last renewal is as old as the renew deadline (after a pause too:
        the monotonic clock ran on while the process was stopped)."""
        return self.leading and self._clock() - self._renewed >= self._elector.terms.renew_deadline

    async def _run(self) -> None:
        terms = self._elector.terms
        while True:
            # First, before any renewal: a leader resumed after a pause may no longer hold it.
            if self._expired():
                return self._give_up(self._clock() - self._renewed)
            asked = self._clock()
            try:
                held = await asyncio.to_thread(self._elector.try_acquire_or_renew)
            except ApiError as exc:
                logger.warning(
                    "Failed to take or renew the leader Lease",
                    extra={"identity": self._elector.identity, "error": str(exc)},
                )
                held = False
            if self._given_up:  # a refused write gave up meanwhile
                return
            if held:
                self._renewed = asked
                if not self.leading:
                    self.leading = True
                    logger.info("Leading", extra={"identity": self._elector.identity})
                    self._on_elected()
            elif self._expired():
                return self._give_up(self._clock() - self._renewed)
            await asyncio.sleep(terms.retry)
