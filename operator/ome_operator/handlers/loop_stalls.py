"""How long the event loop (which answers admission reviews) last stood still, for ``/readyz``.

A paused process (SIGSTOP, a frozen container, a starved node) answers nothing, so its readiness
probe times out and the webhook Service stops sending it reviews. Once it runs again, ``/readyz``
(served from another thread) could answer before the loop has caught up, and the caches the
reviews read are as old as the pause until the watches deliver what they missed. ``StallWatch``
ticks on the loop every ``INTERVAL`` seconds: a loop that has not ticked for ``THRESHOLD``
seconds is stalled now, and one whose last stall (a tick that late) ended less than ``SETTLE``
seconds ago is still settling. Both make the replica unready (README, "High availability").
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["INTERVAL", "SETTLE", "THRESHOLD", "StallWatch"]

#: Seconds between ticks of the loop.
INTERVAL = 0.5
#: Seconds without a tick that make a stall: far above any pass the loop runs (a few ms) and a
#: garbage collection (tens of ms), below the webhooks' 10 s timeout.
THRESHOLD = 3.0
#: Seconds a replica stays unready after a stall: for its watches to deliver what they missed.
SETTLE = 5.0


class StallWatch:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._ticked = clock()
        #: The last stall: its length and when it ended; none yet.
        self._last: tuple[float, float] | None = None

    async def run(self) -> None:
        """Tick until cancelled."""
        while True:
            await asyncio.sleep(INTERVAL)
            self.tick()

    def tick(self) -> None:
        now = self._clock()
        if now - self._ticked >= THRESHOLD:
            self._last = (now - self._ticked, now)
        self._ticked = now

    def unready_reason(self) -> str | None:
        """Why the loop cannot be trusted with reviews now (None: it can); any thread."""
        now = self._clock()
        if now - self._ticked >= THRESHOLD:
            return f"the event loop has not run for {now - self._ticked:.0f} s"
        if self._last is not None and now - self._last[1] < SETTLE:
            return (
                f"the event loop stood still for {self._last[0]:.0f} s; "
                f"ready {SETTLE:g} s after it ran again"
            )
        return None
