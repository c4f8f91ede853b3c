"""A level-triggered work queue of keys, as controller-runtime has it.

A key is queued at most once; a key enqueued while it is being processed is processed again
afterwards (never twice at the same time); failures come back after an exponential backoff that
a later success resets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from dataclasses import dataclass

__all__ = ["Backoff", "WorkQueue"]


@dataclass(frozen=True)
class Backoff:
    """Delay after the n-th consecutive failure: ``first × 2^(n-1)``, capped at ``limit``."""

    first: float = 0.5
    limit: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.first * 2 ** max(failures - 1, 0), self.limit)


class WorkQueue:
    def __init__(self, backoff: Backoff = Backoff()) -> None:
        self._ready: asyncio.Queue[Hashable] = asyncio.Queue()
        self._queued: set[Hashable] = set()
        self._active: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._failures: dict[Hashable, int] = {}
        self._timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._backoff = backoff

    def add(self, key: Hashable) -> None:
        """Queue ``key`` now (a pending backoff for it is superseded)."""
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        if key in self._active:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._ready.put_nowait(key)

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
        self._queued.discard(key)
        self._active.add(key)
        return key

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
