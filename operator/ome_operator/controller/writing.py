"""Carrying out a reconcile plan through the API, in a worker thread (docs/architecture.md).

``PlanWriter`` writes a plan's objects in order (applying only what differs: ``applying``),
its deletions, its events, then its status (only when it changed). Every answer goes to the
record of the operator's writes (``write_record``): a pass before the watch catches up reads
it, and the watch event echoing it re-queues nothing, while any other change does. Events are
decided from the controller's own record too: an identical decision of one generation is posted
once, and ``RuntimeNotFound`` once per message while its condition stays (what was told is
remembered, not read back from the status). Before it adopts an object that lacks the
InferenceService's owner reference (one the core found its own: ``core.ownership``), and before
it creates again what the watch showed deleted, it reads the InferenceService itself
(``runtime.OwnerGoing`` when it is being deleted). A create whose name stays taken by an object
the watches do not show ends the pass with ``NameConflict`` (``name_conflicts``).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.applying import apply_object, apply_status
from ..cluster.errors import AlreadyExists, ApiError, NotFound
from ..cluster.leases import NotLeading
from ..core.conditions import RECONCILE_FAILED, failed_status
from ..core.event_records import RUNTIME_NOT_FOUND, runtime_not_found_told
from ..core.ownership import NameConflict, name_conflict_told
from ..core.plans import Event, LogRecord, ReconcilePlan
from ..core.rendering.events import event_about, once_name
from ..models.object_metadata import Key, controlled_by, identity_of, with_owner
from .name_conflicts import TakenNames
from .packing import compact, expand
from .runtime import recheck_owner
from .write_record import WriteRecord

__all__ = ["BY", "PlanWriter", "StatusTargetGone", "now"]

logger = logging.getLogger("ome_operator.controller")

#: Who the InferenceService controller's writes are by, in the record.
BY = "inferenceservice"
_UNKNOWN = object()


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class StatusTargetGone(Exception):
    """The InferenceService was deleted after the pass read it: its status write found none
    (its deletion event ends its work)."""


class PlanWriter:
    """Writes plans; every method runs in a worker thread except ``forget``."""

    def __init__(
        self,
        api_factory: Callable[[], KubeApi],
        record: WriteRecord,
        requeue: Callable[[Key], None] = lambda key: None,
    ) -> None:
        self.record = record
        #: Told when a write found its object changed by someone else meanwhile: a pass for
        #: that InferenceService (called from the worker thread).
        self._requeue = requeue
        self._api_factory = api_factory
        self._api: KubeApi | None = None
        #: Per InferenceService, the generation its posted events were decided at, and their
        #: (reason, message): an identical decision of one generation is posted once.
        self.posted: dict[Key, tuple[Any, set[tuple[str, str]]]] = {}
        #: Per InferenceService, the RuntimeNotFound message last told while its condition
        #: stands (None: none), from its status when first seen.
        self.not_found: dict[Key, str | None] = {}
        #: Per InferenceService, a digest of the info records its last pass logged.
        self._logged: dict[Key, int] = {}
        #: Names its creates found taken by objects the watches do not show.
        self.taken = TakenNames()

    def client(self) -> KubeApi:
        if self._api is None:
            self._api = self._api_factory()
        return self._api

    def forget(self, key: Key) -> None:
        self.posted.pop(key, None)
        self.not_found.pop(key, None)
        self._logged.pop(key, None)
        self.taken.forget(key)
        self.record.forget_owner(key)

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
            identity = (kind, key[0], name)
            deleted = current is None and self.record.deleted_since_applied(identity)
            if deleted or (current is not None and not controlled_by(current, body)):
                recheck_owner(api, body)
            try:
                handed_over = plan.created_with.get((kind, name))
                self.apply(api, key, with_owner(obj, body), current, handed_over)
            except ApiError as exc:  # say which object: the server's text may not
                if isinstance(exc, AlreadyExists) and self.taken.refused(key, kind, name):
                    raise NameConflict(kind, name, key[1]) from None
                message = f"cannot write {kind} {name}: {exc.message}"
                raise exc.reworded(message) from None
        self.taken.written(key)
        for obj in plan.delete:
            api.delete(obj)
        for event in plan.events:
            self.post(api, key, body, event)
        try:
            return None if plan.status is None else self.write_status(api, key, body, plan.status)
        except NotFound:
            raise StatusTargetGone() from None

    def apply(
        self,
        api: KubeApi,
        key: Key,
        desired: Mapping[str, Any],
        current: Mapping[str, Any] | None,
        handed_over: Mapping[str, Any] | None = None,
    ) -> None:
        """Apply one object, its answer into the record (its watch echo re-queues nothing);
        ``handed_over``: the fields it is created with and then left to others."""
        identity, _ = identity_of(desired)
        held, packed = self.record.last_applied(identity), compact(desired)
        # Rendered as last time (the usual pass): ``desired`` is the last write, no unpacking.
        last = None if held is None else desired if held == packed else expand(held)
        self.record.writing(identity, BY)
        written = None
        try:
            written = apply_object(api, desired, current, self._taken_back, last, handed_over)
            self.record.applied(identity, key, packed)  # what it now has, written or found
        finally:
            if self.record.answered(identity, written, created=current is None, owner=key):
                self._requeue(key)  # changed by someone else meanwhile

    def _taken_back(self, obj: Mapping[str, Any], fields: list[str]) -> None:
        """Fields of ``obj`` someone else changed are taken back: logged once per object and
        set of fields (a field taken back again after another change is logged again)."""
        identity, _ = identity_of(obj)
        if self.record.took_back(identity, tuple(fields)):
            kind, namespace, name = identity
            logger.warning(
                "Taking back fields another manager changed",
                extra={"kind": kind, "namespace": namespace, "resource": name, "fields": fields},
            )

    def write_status(
        self, api: KubeApi, key: Key, body: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """Apply ``status`` (None: it already is); its answer into the record."""
        written = apply_status(api, body, status)
        if written is not None:
            self.record.wrote(BY, written, owner=key)
        if runtime_not_found_told(status) is None:
            self.not_found[key] = None  # its condition left RuntimeNotFound
        return written

    def report_failure(
        self, key: Key, body: Mapping[str, Any], message: str
    ) -> dict[str, Any] | None:
        """``Ready=False``, reason ``ReconcileFailed``, and one Warning event per distinct
        message; the InferenceService as the status write left it (None: nothing written)."""
        api = self.client()
        status = failed_status(body.get("status"), message, now=now())
        written = self.write_status(api, key, body, status)
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
        return self.write_status(api, key, body, status)

    def post(self, api: KubeApi, key: Key, body: Mapping[str, Any], event: Event) -> None:
        """Post ``event`` unless the record says it was told: an identical decision of this
        generation, or the RuntimeNotFound message last told while its condition stands.

        Every event but RuntimeNotFound has one name per generation and message
        (``once_name``), so a restarted operator, which remembers nothing, posts no duplicate:
        the server refuses it as AlreadyExists. RuntimeNotFound's record starts from the
        status a restarted operator finds."""
        if event.reason == RUNTIME_NOT_FOUND:
            told = self.not_found.get(key, _UNKNOWN)
            if told is _UNKNOWN:
                told = runtime_not_found_told(body.get("status"))
            if told != event.message:
                self.not_found[key] = None  # not told until the post goes through
                api.create(event_about(body, event, now()))
            self.not_found[key] = event.message
            return
        meta = body["metadata"]
        generation, posted = self.posted.get(key, (None, set()))
        if generation != meta.get("generation"):  # older decisions can never repeat: forget
            generation, posted = meta.get("generation"), set()
        self.posted[key] = (generation, posted)
        identity = (event.reason, event.message)
        if identity in posted:
            return
        with contextlib.suppress(AlreadyExists):
            api.create(event_about(body, event, now(), name=once_name(body, event)))
        posted.add(identity)

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
