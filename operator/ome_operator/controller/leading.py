"""Leadership: the controllers run only while this replica holds the leader Lease.

Every replica watches and serves the webhook; the one that holds the Lease also reconciles.
``Leadership`` tries to take the Lease every ``retry`` seconds, renews it as often once it holds
it, and calls ``on_elected`` once. A leader that cannot renew for ``renew_deadline`` stops
leading the only safe way: ``on_lost`` (the process ends, as client-go's leaders do, and its
pod restarts as a follower), so two replicas never write at once. On any stop, ``stop`` ends
the renewals, the controllers drain their passes for no longer than the last renewal keeps the
Lease (``held_for``: after a loss, that is a few seconds at most), and ``release`` hands it to
the next leader without waiting for it to expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable

from ..cluster.errors import ApiError
from ..cluster.leases import LeaseElector

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
        """Seconds this replica may still write: the Lease's duration from the last renewal
        sent, less one retry period for the clocks of the others; 0 when never held."""
        terms = self._elector.terms
        return max(0.0, self._renewed + terms.duration - terms.retry - self._clock())

    async def release(self) -> None:
        """After ``stop`` and once the controllers stopped writing: hand the Lease over."""
        if self.leading:
            with contextlib.suppress(ApiError):
                await asyncio.to_thread(self._elector.release)
            self.leading = False

    async def _run(self) -> None:
        terms = self._elector.terms
        while True:
            asked = self._clock()
            try:
                held = await asyncio.to_thread(self._elector.try_acquire_or_renew)
            except ApiError as exc:
                logger.warning(
                    "Failed to take or renew the leader Lease",
                    extra={"identity": self._elector.identity, "error": str(exc)},
                )
                held = False
            now = self._clock()
            if held:
                self._renewed = asked
                if not self.leading:
                    self.leading = True
                    logger.info("Leading", extra={"identity": self._elector.identity})
                    self._on_elected()
            elif self.leading and now - self._renewed >= terms.renew_deadline:
                logger.error(
                    "Lost the leader Lease; stopping so that one replica reconciles",
                    extra={"identity": self._elector.identity},
                )
                self.leading = False
                self._on_lost()
                return
            await asyncio.sleep(terms.retry)
