"""A level-triggered work queue of keys, as controller-runtime has it.

A key is queued at most once; a key enqueued while it is being processed is processed again
afterwards (never twice at the same time); failures come back after an exponential backoff that
a later success resets.

Given ``metrics``, a queue reports under its ``name`` how many keys wait to be taken (not the
ones in a pass or waiting out a backoff) and how long each waited, from being queued (by
``add``, a backoff ending, or a pass ending that a change came during) to being taken.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from ..metrics import Metrics

__all__ = ["Backoff", "WorkQueue"]


@dataclass(frozen=True)
class Backoff:
    """Delay after the n-th consecutive failure: ``first × 2^(n-1)``, capped at ``limit``."""

    first: float = 0.5
    limit: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.first * 2 ** max(failures - 1, 0), self.limit)


class WorkQueue:
    def __init__(
        self,
        backoff: Backoff = Backoff(),
        *,
        name: str = "",
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ready: asyncio.Queue[Hashable] = asyncio.Queue()
        #: Each key waiting to be taken, with the time it was queued.
        self._queued: dict[Hashable, float] = {}
        self._active: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._failures: dict[Hashable, int] = {}
        self._timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._backoff = backoff
        self._name, self._metrics, self._clock = name, metrics, clock
        self._report_depth()

    def add(self, key: Hashable) -> None:
        """Queue ``key`` now (a pending backoff for it is superseded)."""
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        if key in self._active:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued[key] = self._clock()
            self._ready.put_nowait(key)
            self._report_depth()

    def add_after(self, key: Hashable, delay: float) -> None:
        if key in self._timers or key in self._queued:
            return
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay, self._fire, key)

    def _fire(self, key: Hashable) -> None:
        self._timers.pop(key, None)
        self.add(key)

    async def get(self) -> Hashable:
        key = await self._ready.get()
        queued = self._queued.pop(key)
        self._active.add(key)
        if self._metrics is not None:
            self._metrics.record_queue_wait(self._name, self._clock() - queued)
        self._report_depth()
        return key

    def _report_depth(self) -> None:
        if self._metrics is not None:
            self._metrics.set_queue_depth(self._name, len(self._queued))

    def done(self, key: Hashable, *, failed: bool = False) -> float | None:
        """Finish ``key``; returns the backoff delay when it was scheduled for a retry."""
        self._active.discard(key)
        delay = None
        if failed:
            self._failures[key] = self._failures.get(key, 0) + 1
            delay = self._backoff.delay(self._failures[key])
        else:
            self._failures.pop(key, None)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)
        elif delay is not None:
            self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        """Drop every trace of ``key`` (the object is gone)."""
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        self._failures.pop(key, None)
        self._dirty.discard(key)

    def __len__(self) -> int:
        return len(self._queued) + len(self._active) + len(self._timers)

    def idle(self) -> bool:
        return not self._queued and not self._active
