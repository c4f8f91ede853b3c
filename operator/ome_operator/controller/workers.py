"""The worker loop every controller of the operator runs: ``count`` tasks take keys from a
``WorkQueue`` once the watches have listed, process one key each at a time, and hand it back
(with backoff when the pass failed). ``stop`` lets the passes under way finish their writes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from .queue import WorkQueue

__all__ = ["DRAIN_SECONDS", "UNEXPECTED_ERROR", "Workers"]

#: What a pass that ended in an exception no rule handles logs, before what it reconciles.
UNEXPECTED_ERROR = "Unexpected error reconciling"
#: Seconds stop() gives the passes under way to finish their writes.
DRAIN_SECONDS = 10.0


class Workers:
    """``count`` tasks calling ``process(key)`` (True: retry the key with backoff)."""

    def __init__(
        self,
        queue: WorkQueue,
        process: Callable[[Hashable], Awaitable[bool]],
        *,
        what: str,
        fields: Callable[[Any], dict[str, str]],
        logger: logging.Logger,
    ) -> None:
        self.queue = queue
        self._process = process
        #: What a key names, and its log fields, for the line of an unexpected error.
        self._what, self._fields = what, fields
        self._logger = logger
        self._tasks: list[asyncio.Task[None]] = []
        self._passing: set[asyncio.Task[None] | None] = set()
        self._stopping = False

    @property
    def tasks(self) -> tuple[asyncio.Task[None], ...]:
        return tuple(self._tasks)

    def start(self, count: int, synced: asyncio.Event) -> None:
        """Start the tasks (once); they take keys once ``synced`` is set."""
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._work(synced)) for _ in range(count)]

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        """Stop taking keys, let the passes under way finish (up to ``drain`` seconds: a pass
        cut between its writes leaves them half done for the next operator), then stop."""
        self._stopping = True
        passing = [task for task in self._tasks if task in self._passing]
        for task in self._tasks:
            if task not in self._passing:
                task.cancel()
        if passing and drain > 0:
            await asyncio.wait(passing, timeout=drain)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _work(self, synced: asyncio.Event) -> None:
        await synced.wait()
        task = asyncio.current_task()
        while not self._stopping:
            key = await self.queue.get()
            failed = True
            self._passing.add(task)
            try:
                failed = await self._process(key)
            except Exception:  # a bug must not kill the worker; the key is retried
                self._logger.exception(f"{UNEXPECTED_ERROR} {self._what}", extra=self._fields(key))
            finally:
                self._passing.discard(task)
                self.queue.done(key, failed=failed)
