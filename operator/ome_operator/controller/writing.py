"""Carrying out a reconcile plan through the API, in a worker thread (docs/architecture.md).

``PlanWriter`` writes a plan's objects in order (applying only what differs: ``applying``),
its deletions,
its events (an identical decision of one generation once; ``RuntimeNotFound`` once per decision
until the status that records it is written), then its status (only when it changed).
``Echoes`` remembers the versions it wrote, so that the watch event echoing one of its own
writes re-queues nothing, while any other change does. Before it adopts an object that lacks
the InferenceService's owner reference (one the core found its own: ``core.ownership``) it
reads the InferenceService itself (``OwnerGoing`` when it is being deleted). A create whose
name stays taken by an object the watches do not show ends the pass with ``NameConflict``
(``name_conflicts``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.applying import apply_object, apply_status, with_owner
from ..cluster.errors import AlreadyExists, ApiError, NotFound
from ..cluster.leases import NotLeading
from ..core.conditions import RECONCILE_FAILED, failed_status
from ..core.ownership import NameConflict, controller_reference, name_conflict_told
from ..core.plans import Event, LogRecord, ReconcilePlan
from ..core.rendering.events import event_about, once_name
from .name_conflicts import TakenNames
from .owned import OwnedObjects
from .packing import compact, expand
from .watches import Key

__all__ = [
    "Echoes",
    "OwnerGoing",
    "PlanWriter",
    "StatusTargetGone",
    "gone_or_going",
    "identity_of",
    "now",
    "recheck_owner",
]

logger = logging.getLogger("ome_operator.controller")

Identity = tuple[Any, Any, Any]
_UNSEEN = object()
#: Objects whose last taken-back fields are remembered (so each is logged once).
_TOOK_BACK_HELD = 4096
#: The event the core posts with every transition of ``RuntimeReady`` to False
#: (docs/reference/status-and-events.md, Events).
_NOT_FOUND = "RuntimeNotFound"


def identity_of(obj: Mapping[str, Any]) -> tuple[Identity, Any]:
    """(kind, namespace, name) of an object, and its resourceVersion."""
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace"), meta.get("name")), meta.get("resourceVersion")


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class OwnerGoing(Exception):
    """The owner is gone or being deleted, though the watch has not said so yet."""


class StatusTargetGone(Exception):
    """The InferenceService was deleted after the pass read it: its status write found none
    (its deletion event ends its work)."""


def _controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    ref = controller_reference(obj)
    return ref is not None and ref.get("uid") == (owner.get("metadata") or {}).get("uid")


def gone_or_going(found: Mapping[str, Any] | None, uid: Any) -> bool:
    """Whether the owner of ``uid``, as ``found`` (None: not there), is gone, replaced by
    another of its name, or being deleted."""
    meta = (found or {}).get("metadata") or {}
    return meta.get("uid") != uid or bool(meta.get("deletionTimestamp"))


def recheck_owner(api: KubeApi, owner: Mapping[str, Any]) -> None:
    """Before adopting an object (it lacks our owner reference), read the owner (an
    InferenceService, an InferenceReplica) itself, not the cache: the garbage collector removes
    owner references of an owner being deleted with ``--cascade=orphan``, and its watch event
    may come before the owner's; an adoption then would have the collector delete what it just
    orphaned. As client-go's ``RecheckDeletionTimestamp`` does."""
    try:
        fresh = api.get(owner)
    except NotFound:
        raise OwnerGoing() from None
    if gone_or_going(fresh, (owner.get("metadata") or {}).get("uid")):
        raise OwnerGoing()


class Echoes:
    """The versions of this controller's own writes, and the watch events seen while one is
    under way (its answer may come after its echo). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: identity -> resourceVersion of the object as this controller last wrote it
        self._written: dict[Identity, Any] = {}
        #: objects being written now, and the versions their watch events showed meanwhile
        self._writing: set[Identity] = set()
        self._unconfirmed: dict[Identity, Any] = {}

    def is_echo(self, obj: Mapping[str, Any], deleted: bool) -> bool:
        """Whether a watch event of ``obj`` only echoes a write of this controller (an event
        seen during a write is decided when the write's answer comes: ``finished``)."""
        identity, version = identity_of(obj)
        with self._lock:
            if deleted:
                self._written.pop(identity, None)  # nothing left to echo
                return False
            if version is not None and self._written.get(identity) == version:
                return True
            if identity in self._writing:
                self._unconfirmed[identity] = version
                return True
        return False

    def started(self, identity: Identity) -> None:
        with self._lock:
            self._writing.add(identity)

    def finished(self, identity: Identity, version: Any) -> bool:
        """The write of ``identity`` answered ``version`` (None: it failed); True when a
        change by someone else was seen meanwhile."""
        with self._lock:
            self._writing.discard(identity)
            if version is not None:
                self._written[identity] = version
            seen = self._unconfirmed.pop(identity, _UNSEEN)
        return seen is not _UNSEEN and (version is None or seen != version)


class PlanWriter:
    """Writes plans; every method runs in a worker thread except ``forget``."""

    def __init__(
        self,
        api_factory: Callable[[], KubeApi],
        objects: OwnedObjects,
        requeue_owner: Callable[[str, str], None],
    ) -> None:
        self.echoes = Echoes()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._api_factory = api_factory
        self._api: KubeApi | None = None
        self._objects = objects
        self._requeue_owner = requeue_owner
        #: Per InferenceService, the generation its posted events were decided at, and their
        #: (reason, message): an identical decision of one generation is posted once.
        self.posted: dict[Key, tuple[Any, set[tuple[str, str]]]] = {}
        #: Per InferenceService, a digest of the info records its last pass logged.
        self._logged: dict[Key, int] = {}
        #: Names its creates found taken by objects the watches do not show.
        self.taken = TakenNames()
        #: Per InferenceService, each object as the operator last wrote it or found it written,
        #: to tell a field it no longer renders (an object it created, whose fields are not yet
        #: its apply record: ``cluster.apply_records``). A restarted operator knows none.
        #: Held compacted (``packing``): a third of its JSON.
        self.rendered: dict[Key, dict[Identity, bytes]] = {}
        #: Per InferenceService, the objects written for it the watch showed deleted since.
        self.gone: dict[Key, set[tuple[str, str]]] = {}
        #: Per object, the fields its last forced apply took back (each logged once).
        self._took_back: dict[Identity, tuple[str, ...]] = {}

    def client(self) -> KubeApi:
        if self._api is None:
            self._api = self._api_factory()
        return self._api

    def saw_deleted(self, key: Key, obj: Mapping[str, Any]) -> None:
        """The watch showed ``obj`` deleted, an object of the InferenceService ``key`` (only
        those this writer wrote are noted: pods come and go)."""
        identity, _ = identity_of(obj)
        if identity in self.rendered.get(key, {}):
            self.gone.setdefault(key, set()).add((identity[0], identity[2]))

    def forget(self, key: Key) -> None:
        self.posted.pop(key, None)
        self.gone.pop(key, None)
        self.rendered.pop(key, None)
        self._logged.pop(key, None)
        self.taken.forget(key)

    def log(self, key: Key, records: tuple[LogRecord, ...]) -> None:
        """Log a pass's records: its errors always (each failed pass, retried with
        backoff, says why), its info records (``Selected runtime``) only when they
        differ from the last ones logged for it (a converged fleet re-queued is silent)."""
        informed = tuple(r for r in records if r.level != "error")
        digest = hash(informed)
        repeated = self._logged.get(key) == digest
        self._logged[key] = digest
        for record in records:
            if record.level == "error":
                logger.error(record.message, extra=dict(record.fields))
            elif not repeated:
                logger.info(record.message, extra=dict(record.fields))

    def write(
        self,
        key: Key,
        body: Mapping[str, Any],
        existing: Mapping[tuple[str, str], Any],
        plan: ReconcilePlan,
    ) -> dict[str, Any] | None:
        """Carry ``plan`` out; the InferenceService as the status write left it (None: no
        status written). ApiError names the object a write failed for; NameConflict says a
        create found its name taken, past ``name_conflicts.GRACE_SECONDS``, by an object the
        watches do not show (the object is not written)."""
        api = self.client()
        self.log(key, plan.logs)
        for obj in plan.apply:
            kind, name = obj["kind"], obj["metadata"]["name"]
            current = existing.get((kind, name))
            # Before adopting, and before creating again what the watch showed deleted (the
            # InferenceService's own deletion may have removed it, its event not here yet),
            # the InferenceService is read itself.
            deleted = current is None and (kind, name) in self.gone.get(key, ())
            if deleted or (current is not None and not _controlled_by(current, body)):
                recheck_owner(api, body)
            try:
                self.apply(api, key, with_owner(obj, body), current)
                self.gone.get(key, set()).discard((kind, name))
            except ApiError as exc:  # say which object: the server's text may not
                if isinstance(exc, AlreadyExists) and self.taken.refused(key, kind, name):
                    raise NameConflict(kind, name, key[1]) from None
                message = f"cannot write {kind} {name}: {exc.message}"
                raise exc.reworded(message) from None
        self.taken.written(key)
        for obj in plan.delete:
            api.delete(obj)
        # Events before the status they go with: the core decides RuntimeNotFound from the
        # status it last wrote, so a status written first would lose the event if its post
        # then failed. Until that status is written the posted event is remembered, so a
        # retry after a failed status write does not post it twice.
        for event in plan.events:
            self.post(api, key, body, event)
        try:
            written = None if plan.status is None else apply_status(api, body, plan.status)
        except NotFound:
            raise StatusTargetGone() from None
        if written is not None:
            self._recorded(key)
        return written

    def apply(
        self, api: KubeApi, key: Key, desired: Mapping[str, Any], current: Mapping[str, Any] | None
    ) -> None:
        """Apply one object, noting the write so that its watch echo does not re-queue."""
        identity, _ = identity_of(desired)
        self.echoes.started(identity)
        written = None
        rendered = self.rendered.setdefault(key, {})
        held, packed = rendered.get(identity), compact(desired)
        # Rendered as last time (the usual pass): ``desired`` is the last write, no unpacking.
        last = None if held is None else desired if held == packed else expand(held)
        try:
            written = apply_object(api, desired, current, self._taken_back, last)
            rendered[identity] = packed  # what the object now has, written or found
        finally:
            version = identity_of(written)[1] if written is not None else None
            changed_meanwhile = self.echoes.finished(identity, version)
            assert self.loop is not None
            if written is not None and current is not None:
                self.loop.call_soon_threadsafe(self._objects.wrote, written)
            if changed_meanwhile:
                self.loop.call_soon_threadsafe(self._requeue_owner, *key)

    def _taken_back(self, obj: Mapping[str, Any], fields: list[str]) -> None:
        """Fields of ``obj`` someone else changed are taken back: logged once per object and
        set of fields (a field taken back again after another change is logged again)."""
        identity, _ = identity_of(obj)
        if self._took_back.get(identity) == tuple(fields):
            return
        if len(self._took_back) >= _TOOK_BACK_HELD:  # the oldest go first
            del self._took_back[next(iter(self._took_back))]
        self._took_back[identity] = tuple(fields)
        kind, namespace, name = identity
        logger.warning(
            "Taking back fields another manager changed",
            extra={"kind": kind, "namespace": namespace, "resource": name, "fields": fields},
        )

    def report_failure(
        self, key: Key, body: Mapping[str, Any], message: str
    ) -> dict[str, Any] | None:
        """``Ready=False``, reason ``ReconcileFailed``, and one Warning event per distinct
        message; the InferenceService as the status write left it (None: nothing written)."""
        api = self.client()
        written = apply_status(api, body, failed_status(body.get("status"), message, now=now()))
        self.post(api, key, body, Event("Warning", RECONCILE_FAILED, message))
        return written

    def report_conflict(
        self, key: Key, body: Mapping[str, Any], conflict: NameConflict
    ) -> dict[str, Any] | None:
        """``Ready=False``, reason ``NameConflict``, and its Warning event once per transition
        (``core.ownership``); the InferenceService as the status write left it (None: nothing
        written)."""
        api = self.client()
        status, events = name_conflict_told(body.get("status"), conflict, now=now())
        for event in events:
            self.post(api, key, body, event)
        return apply_status(api, body, status)

    def post(self, api: KubeApi, key: Key, body: Mapping[str, Any], event: Event) -> None:
        """Post ``event`` unless this generation already did; a RuntimeNotFound is
        remembered across generations until the status that records it is written.

        Every event but RuntimeNotFound (which follows its condition's transitions, and
        the status tells a restarted operator whether it was posted) has one name per
        generation and message (``once_name``), so a restarted operator, which remembers
        nothing, posts no duplicate: the server refuses it as AlreadyExists."""
        meta = body["metadata"]
        generation, posted = self.posted.get(key, (None, set()))
        if generation != meta.get("generation"):  # older decisions can never repeat: forget
            generation = meta.get("generation")
            posted = {(reason, text) for reason, text in posted if reason == _NOT_FOUND}
        self.posted[key] = (generation, posted)
        identity = (event.reason, event.message)
        if identity in posted:
            return
        name = None if event.reason == _NOT_FOUND else once_name(body, event)
        with contextlib.suppress(AlreadyExists):
            api.create(event_about(body, event, now(), name=name))
        posted.add(identity)

    def _recorded(self, key: Key) -> None:
        """The status now records what was posted: a RuntimeNotFound event follows that
        condition's transitions from here on, so it is no longer remembered."""
        found = self.posted.get(key)
        if found is not None:
            kept = {(reason, text) for reason, text in found[1] if reason != _NOT_FOUND}
            self.posted[key] = (found[0], kept)

    def post_about(self, obj: Mapping[str, Any], event: Event) -> None:
        """Post an event about any object; a failure is only logged."""
        try:
            self.client().create(event_about(obj, event, now()))
        except NotLeading:  # a follower: the leader posts it
            return
        except ApiError as exc:
            (kind, namespace, name), _ = identity_of(obj)
            logger.warning(
                "Failed to post an event",
                extra={"kind": kind, "namespace": namespace, "resource": name, "error": str(exc)},
            )
