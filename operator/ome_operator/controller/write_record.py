"""One record of what the operator wrote, kept by both controllers (docs/architecture.md).

As controller-runtime's expectations and kueue's assumed state do, the answer of every write
(a create, an apply, a status) stands for the object until the watch shows it: a pass in
between reads the answer, not the older cached version (``current``), and an object created but
not yet shown counts as there for ``EXPECTATION_SECONDS`` (``unseen``), so nothing is created
twice. The watch event that shows a version a controller wrote is that controller's echo and
re-queues nothing (``is_echo``); a change by anyone else, even one seen while a write is under
way, does (``answered``). Per object it also keeps what was last applied (compacted: the last
write, to tell a field no longer rendered), whether the watch showed the object deleted since,
and the fields last taken back (each logged once).

Entries are dropped when the watch shows the object deleted and nothing was applied to it, or
when its owner goes (``forget_owner``); answers are dropped once the watch has caught up.
Thread-safe: writes answer in worker threads, the watches deliver on the event loop.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..cluster.api import newer_version
from ..cluster.informing import lean
from ..core.rendering.metadata import OWNER_LABEL
from ..models.object_metadata import (
    Identity,
    Key,
    controller_reference,
    identity_of,
    labels_of,
    metadata_of,
)
from .packing import Held, pack, unpack

__all__ = ["EXPECTATION_SECONDS", "WriteRecord"]

#: Seconds an object a controller created counts as there before the watch shows it (so a
#: pass in between does not create it again), as client-go's controller expectations do.
EXPECTATION_SECONDS = 30.0


@dataclass(slots=True)
class _Entry:
    """What the record holds of one object (slots: one per object written)."""

    #: The controller whose write answered last, and the version it answered.
    by: str = ""
    version: str | None = None
    #: The answer (lean, packed) while the watch has not caught up with it; None after.
    answer: Held | None = None
    #: For an answer to a create: until when it counts as there though the watch shows none.
    until: float = 0.0
    #: The InferenceService it was written for (None: not known).
    owner: Key | None = None
    #: What was last applied to it (compacted), for the fields no longer rendered.
    applied: bytes | None = None
    #: Whether the watch showed it deleted after it was applied.
    deleted: bool = False
    #: The fields the last forced apply took back.
    took_back: tuple[str, ...] = ()
    #: For an answer to a create the watch has not shown: where ``unseen`` finds it.
    slot: tuple[Any, Any, str | None] | None = None


class WriteRecord:
    def __init__(
        self,
        expectation_seconds: float = EXPECTATION_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Identity, _Entry] = {}
        #: Objects being written now, by which controller, and the versions their watch events
        #: showed meanwhile (an answer may come after its echo).
        self._writing: dict[Identity, str] = {}
        self._unconfirmed: dict[Identity, Any] = {}
        #: (kind, namespace, owner) -> the objects created for it the watch has not shown yet.
        self._created: dict[tuple[Any, Any, str | None], set[Identity]] = {}
        #: InferenceService -> the objects written for it (what ``forget_owner`` drops).
        self._owned: dict[Key, set[Identity]] = {}
        self._expectation, self._clock = expectation_seconds, clock

    # -- writes --------------------------------------------------------------------------------

    def writing(self, identity: Identity, by: str) -> None:
        """``by`` starts writing the object ``identity``."""
        with self._lock:
            self._writing[identity] = by

    def answered(
        self,
        identity: Identity,
        answer: Mapping[str, Any] | None,
        *,
        created: bool = False,
        owner: Key | None = None,
    ) -> bool:
        """The write of ``identity`` answered ``answer`` (None: it failed); True when the watch
        showed a change by someone else meanwhile."""
        with self._lock:
            by = self._writing.pop(identity, "")
            seen = self._unconfirmed.pop(identity, _UNSEEN)
            version = None if answer is None else identity_of(answer)[1]
            if answer is not None:
                entry = self._entry(identity)
                entry.by, entry.version, entry.deleted = by, version, False
                entry.answer = pack(lean({**answer, "metadata": dict(answer["metadata"])}))
                entry.until = self._clock() + self._expectation if created else 0.0
                self._own(identity, entry, owner)
                self._unslot(identity, entry)
                if created:
                    entry.slot = (identity[0], identity[1], _owner_named(answer))
                    self._created.setdefault(entry.slot, set()).add(identity)
        return seen is not _UNSEEN and (version is None or seen != version)

    def wrote(self, by: str, answer: Mapping[str, Any], **kwargs: Any) -> None:
        """One write's answer, noted at once (nothing waits on its echo meanwhile)."""
        identity, _ = identity_of(answer)
        self.writing(identity, by)
        self.answered(identity, answer, **kwargs)

    def applied(self, identity: Identity, owner: Key, compacted: bytes) -> None:
        """What was last applied to ``identity`` for ``owner`` (compacted)."""
        with self._lock:
            entry = self._entry(identity)
            entry.applied, entry.deleted = compacted, False
            self._own(identity, entry, owner)

    def last_applied(self, identity: Identity) -> bytes | None:
        entry = self._entries.get(identity)
        return None if entry is None else entry.applied

    def deleted_since_applied(self, identity: Identity) -> bool:
        """Whether the watch showed ``identity`` deleted after the operator applied it."""
        entry = self._entries.get(identity)
        return entry is not None and entry.deleted

    def took_back(self, identity: Identity, fields: tuple[str, ...]) -> bool:
        """Note the fields a forced apply took back; True when they are not the ones last
        noted for that object (to be logged)."""
        with self._lock:
            entry = self._entry(identity)
            told, entry.took_back = entry.took_back != fields, fields
        return told

    # -- the watches ---------------------------------------------------------------------------

    def is_echo(self, obj: Mapping[str, Any], by: str, deleted: bool = False) -> bool:
        """Whether a watch event of ``obj`` only echoes a write of ``by`` (an event seen during a
        write of ``by`` is decided when the write answers: ``answered``)."""
        identity, version = identity_of(obj)
        with self._lock:
            if deleted:
                return False
            entry = self._entries.get(identity)
            if entry is not None and entry.by == by and version is not None:
                if entry.version == version:
                    return True
            if self._writing.get(identity) == by:
                # Two versions seen meanwhile: one at least is someone else's change.
                seen = self._unconfirmed.get(identity, version)
                self._unconfirmed[identity] = version if seen == version else _CHANGED
                return True
        return False

    def saw(self, obj: Mapping[str, Any], deleted: bool) -> None:
        """The watch shows ``obj`` as it now is (or deleted): an answer it has caught up with
        stands for nothing any more; a deleted object keeps only that it was applied."""
        identity, version = identity_of(obj)
        with self._lock:
            entry = self._entries.get(identity)
            if entry is None:
                return
            if deleted:
                if entry.applied is None:
                    self._drop(identity)
                else:
                    self._unslot(identity, entry)
                    entry.answer, entry.version, entry.by, entry.deleted = None, None, "", True
            elif entry.answer is not None and not newer_version(entry.version, version):
                entry.answer = None
                self._unslot(identity, entry)

    def _entry(self, identity: Identity) -> _Entry:
        """The entry of ``identity``, made when there is none; its kind and namespace are held
        once for every entry (10,000 objects of a namespace share one string)."""
        entry = self._entries.get(identity)
        if entry is None:
            kind, namespace, name = identity
            shared = (_shared(kind), _shared(namespace), name)
            entry = self._entries[shared] = _Entry()
        return entry

    def _own(self, identity: Identity, entry: _Entry, owner: Key | None) -> None:
        """``identity`` was written for ``owner`` (None: not known, the owner stays); the lock
        is held."""
        if owner is None or owner == entry.owner:
            return
        self._disown(identity, entry)
        entry.owner = owner
        self._owned.setdefault(owner, set()).add(identity)

    def _disown(self, identity: Identity, entry: _Entry) -> None:
        _remove(self._owned, entry.owner, identity)
        entry.owner = None

    def _drop(self, identity: Identity) -> None:
        """Forget ``identity`` (the lock is held)."""
        entry = self._entries.pop(identity)
        self._unslot(identity, entry)
        self._disown(identity, entry)

    def _unslot(self, identity: Identity, entry: _Entry) -> None:
        """``identity`` no longer waits to be shown (the lock is held)."""
        _remove(self._created, entry.slot, identity)
        entry.slot = None

    # -- reads ---------------------------------------------------------------------------------

    def current(self, identity: Identity, cached: Mapping[str, Any] | None) -> Any:
        """The newer of ``cached`` (the watch's version; None: not shown) and the last answer
        for it; a created object the watch has not shown yet counts for a while."""
        entry = self._entries.get(identity)
        held = None if entry is None else entry.answer
        if held is None:
            return cached
        if cached is None:
            return unpack(held) if entry.until > self._clock() else None
        version = metadata_of(cached).get("resourceVersion")
        return unpack(held) if newer_version(entry.version, version) else cached

    def unseen(self, kind: str, namespace: str, owner: str) -> list[dict[str, Any]]:
        """The objects of ``kind`` in ``namespace`` created for ``owner`` (their controller,
        else the InferenceService their label names) that the watch has not shown yet, by
        name."""
        clock = self._clock()
        with self._lock:
            slot = (kind, namespace, owner)
            found, waiting = [], self._created.get(slot, set())
            for identity in sorted(waiting, key=str):
                entry = self._entries.get(identity)
                if entry is None or entry.answer is None or entry.until <= clock:
                    waiting.discard(identity)
                    if entry is not None:
                        entry.slot = None
                else:
                    found.append(unpack(entry.answer))
            if not waiting:
                self._created.pop(slot, None)
        return found

    def forget_owner(self, owner: Key) -> None:
        """The InferenceService ``owner`` is gone: so is what was written for it."""
        with self._lock:
            for identity in list(self._owned.get(owner, ())):
                self._drop(identity)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def waiting(self) -> int:
        """How many created objects wait for the watch to show them (bounded: memory)."""
        return sum(len(identities) for identities in self._created.values())


_UNSEEN = object()
#: Versions seen during a write that differ from each other (one is a change by another).
_CHANGED = object()


def _remove(index: dict[Any, set[Identity]], key: Any, identity: Identity) -> None:
    """``identity`` out of the set ``index`` holds under ``key``; an emptied set goes."""
    held = index.get(key) if key is not None else None
    if held is not None:
        held.discard(identity)
        if not held:
            del index[key]


def _shared(text: Any) -> Any:
    return sys.intern(text) if type(text) is str else text


def _owner_named(obj: Mapping[str, Any]) -> str | None:
    """Whose an unseen object is: its controller's name, else the InferenceService its label
    names."""
    ref = controller_reference(obj)
    return ref.get("name") if ref is not None else labels_of(obj).get(OWNER_LABEL)
