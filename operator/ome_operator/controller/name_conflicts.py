"""Names a create found taken by an object the watches do not show (docs/troubleshooting.md,
"NameConflict").

The owned-object caches hold only objects labelled ``ome.io/inferenceservice``; a create refused
as AlreadyExists is either the operator's own create the watch has not shown yet (a race, over
in milliseconds) or someone else's unlabelled object. The operator reads nothing but watches, so
time tells them apart: a name still refused ``GRACE_SECONDS`` after its first refusal is taken by
someone else (``NameConflict``). Such an object is not watched, so its removal re-queues
nothing: the InferenceService is looked at again after ``RECHECK`` (30 s, doubling, at most
5 minutes), and at once when it changes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .queue import Backoff
from .watches import Key

__all__ = ["GRACE_SECONDS", "RECHECK", "TakenNames"]

#: Seconds a name may be refused as taken while the watch catches up with a create of ours.
GRACE_SECONDS = 10.0
#: When an InferenceService whose name is taken by an unwatched object is looked at again.
RECHECK = Backoff(first=30.0, limit=300.0)

Name = tuple[str, str]  # (kind, name)


class TakenNames:
    """Per InferenceService, the names its creates found taken, and since when. Thread-safe:
    passes write in worker threads (one pass per InferenceService at a time)."""

    def __init__(
        self,
        *,
        grace: float | None = None,
        recheck: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        #: None: the module's settings, read at each use.
        self._grace, self._recheck, self._clock = grace, recheck, clock
        self._lock = threading.Lock()
        #: key -> (kind, name) -> when a create of it was first refused
        self._since: dict[Key, dict[Name, float]] = {}
        #: key -> consecutive passes that ended on a taken name
        self._conflicts: dict[Key, int] = {}

    def refused(self, key: Key, kind: str, name: str) -> bool:
        """A create of ``kind``/``name`` for ``key`` was refused as AlreadyExists: True when it
        has been for ``grace`` seconds (someone else's object), False while it may be a race."""
        now = self._clock()
        with self._lock:
            since = self._since.setdefault(key, {}).setdefault((kind, name), now)
        return now - since >= (GRACE_SECONDS if self._grace is None else self._grace)

    def recheck_in(self, key: Key) -> float:
        """A pass of ``key`` ended on a taken name: seconds until it is looked at again."""
        with self._lock:
            self._conflicts[key] = self._conflicts.get(key, 0) + 1
            recheck = RECHECK if self._recheck is None else self._recheck
            return recheck.delay(self._conflicts[key])

    def written(self, key: Key) -> None:
        """Every object of a pass of ``key`` was written: no name of it is taken."""
        with self._lock:
            self._since.pop(key, None)
            self._conflicts.pop(key, None)

    forget = written
