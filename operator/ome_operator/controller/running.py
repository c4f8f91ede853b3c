"""The InferenceService controller: workers that reconcile queued keys and apply the plans.

Its own watches (``watches``) keep its caches current and queue keys: an InferenceService
change queues it, a runtime change the InferenceServices it can move (S9), a change to a written
object its owner. Each pass reads a snapshot, asks the pure core for a plan, then writes through
the API in a worker thread: objects in plan order, deletions, the status (only when it changed)
and events (once per identical decision, OPEN-09). Failures come back with exponential backoff;
parked passes wait for a watched change (S9). A pass that cannot complete for a reason the
author can fix says so on the InferenceService (``ReconcileFailed``).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cluster.api import ApiError, KubeApi, resource_version
from ..cluster.applying import apply_object, merge_patch_between, with_owner
from ..core.conditions import RECONCILE_FAILED, failed_status
from ..core.operator_config import OperatorConfig
from ..core.reconciling import Event, Outcome, ReconcilePlan, Snapshot, reconcile
from ..core.rendering.events import event_about
from ..metrics import Metrics
from ..models import InferenceService, InvalidResourceError, from_manifest
from .queue import Backoff, WorkQueue
from .snapshot import Caches, snapshot_for
from .watches import InferenceServiceFeed, Watched, Watches, kind_named

__all__ = ["MALFORMED", "Controller"]

#: Reason of the Warning event on a runtime, model or accelerator class that does not parse.
MALFORMED = "MalformedResource"
#: API answers that mean the server refuses what the operator renders for an InferenceService
#: (a bad field, a value out of range, an object too large, no permission), not a passing
#: failure: the InferenceService is told (``ReconcileFailed``); the pass is retried with backoff.
REFUSALS = frozenset({400, 403, 413, 422})

logger = logging.getLogger("ome_operator.controller")

Key = tuple[str, str]


_UNSEEN = object()


def _identity(obj: Mapping[str, Any]) -> tuple[tuple[Any, Any, Any], Any]:
    """(kind, namespace, name) of an object, and its resourceVersion."""
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace"), meta.get("name")), meta.get("resourceVersion")


_VOLATILE = ("status", "resourceVersion", "managedFields")


def _essence(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a reconcile depends on: everything but status and bookkeeping metadata."""
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k not in _VOLATILE}
    return {**{k: v for k, v in body.items() if k != "status"}, "metadata": meta}


class OwnerGoing(Exception):
    """The InferenceService is gone or being deleted, though the watch has not said so yet."""


def _owned_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    uid = (owner.get("metadata") or {}).get("uid")
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(ref.get("uid") == uid for ref in refs)


def _recheck_owner(api: KubeApi, owner: Mapping[str, Any]) -> None:
    """Before adopting an object (it lacks our owner reference), read the InferenceService
    itself, not the cache: the garbage collector removes owner references of an owner being
    deleted with ``--cascade=orphan``, and its watch event may come before the owner's; an
    adoption then would have the collector delete what it just orphaned. As client-go's
    ``RecheckDeletionTimestamp`` does."""
    try:
        fresh = api.get(owner)
    except ApiError as exc:
        if exc.status == 404:
            raise OwnerGoing() from None
        raise
    meta, uid = fresh.get("metadata") or {}, (owner.get("metadata") or {}).get("uid")
    if meta.get("deletionTimestamp") or meta.get("uid") != uid:
        raise OwnerGoing()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Controller:
    api_factory: Callable[[], KubeApi]
    config_source: Callable[[], OperatorConfig]
    metrics: Metrics
    caches: Caches = field(default_factory=Caches)
    watches: Watches = field(default_factory=Watches)
    backoff: Backoff = field(default_factory=Backoff)
    lws_installed: bool = True
    workers: int = 4
    isvcs: dict[Key, dict[str, Any]] = field(default_factory=dict)
    _queue: WorkQueue | None = None
    _api: KubeApi | None = None
    #: Per InferenceService, the generation its posted events were decided at, and their
    #: (reason, message): an identical decision of the same generation is posted once (OPEN-09).
    _posted: dict[Key, tuple[Any, set[tuple[str, str]]]] = field(default_factory=dict)
    #: Namespaces the API server answered NamespaceTerminating for: their InferenceServices are
    #: not reconciled again (their deletion events follow); forgotten with the last of them.
    _terminating: set[str] = field(default_factory=set)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    #: (kind, namespace, name) -> resourceVersion of the object as this controller last wrote it.
    _own_writes: dict[tuple[Any, Any, Any], Any] = field(default_factory=dict)
    #: Objects being written now, and the versions their watch events showed meanwhile.
    _writing: set[tuple[Any, Any, Any]] = field(default_factory=set)
    _unconfirmed: dict[tuple[Any, Any, Any], Any] = field(default_factory=dict)
    _echo_lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: asyncio.AbstractEventLoop | None = None

    # -- feeding -----------------------------------------------------------------------------

    @property
    def queue(self) -> WorkQueue:
        if self._queue is None:
            self._queue = WorkQueue(self.backoff)
        return self._queue

    def seen(self, key: Key, body: Mapping[str, Any]) -> None:
        """The watch shows an InferenceService as it now is: decide again unless only its
        status or bookkeeping moved."""
        known = self.isvcs.get(key)
        if known is not None and _essence(known) == _essence(body):
            self.isvcs[key] = dict(body)
            return
        self.observe(key, body)

    def observe(self, key: Key, body: Mapping[str, Any] | None) -> None:
        """An InferenceService changed (``None``: it is gone)."""
        if body is None:
            self.isvcs.pop(key, None)
            self._posted.pop(key, None)
            self.metrics.track_modes(key, ())
            self.metrics.track_unresolved(key, False)
            self.queue.forget(key)
            if key[0] in self._terminating and not any(k[0] == key[0] for k in self.isvcs):
                self._terminating.discard(key[0])
            return
        self.isvcs[key] = dict(body)
        self.queue.add(key)

    def requeue(self, namespace: str | None = None) -> None:
        """Re-queue every InferenceService of ``namespace`` (None: of every namespace, S9)."""
        for key in sorted(self.isvcs):
            if namespace is None or key[0] == namespace:
                self.queue.add(key)

    def requeue_owner(self, namespace: str, isvc: str | None) -> None:
        if isvc and (namespace, isvc) in self.isvcs:
            self.queue.add((namespace, isvc))

    def owned_changed(
        self, namespace: str, isvc: str | None, obj: Mapping[str, Any], deleted: bool = False
    ) -> None:
        """An owned object changed: re-queue its owner, unless the event only echoes a write
        of this controller (whose answer may not have reached the worker yet)."""
        identity, version = _identity(obj)
        if deleted:
            with self._echo_lock:
                self._own_writes.pop(identity, None)  # nothing left to echo
        else:
            with self._echo_lock:
                if version is not None and self._own_writes.get(identity) == version:
                    return
                if identity in self._writing:
                    self._unconfirmed[identity] = version
                    return
        self.requeue_owner(namespace, isvc)

    # -- running -----------------------------------------------------------------------------

    def __post_init__(self) -> None:
        caches = self.caches
        caches.objects.on_change = self.owned_changed
        caches.serving_runtimes.on_change = lambda obj: self.requeue(_identity(obj)[0][1] or "")
        caches.cluster_serving_runtimes.on_change = lambda obj: self.requeue(None)
        for source in caches.sources:
            source.on_malformed = self.set_aside

    def start(
        self,
        api_factory: Callable[[], KubeApi],
        namespaces: tuple[str | None, ...] = (None,),
    ) -> None:
        """Start the watches and the workers; the workers take keys once every watch has
        listed. Once only."""
        self._loop = asyncio.get_running_loop()
        isvcs = InferenceServiceFeed(lambda: self.isvcs, self.seen, self._gone)
        self.watches.start(
            api_factory,
            [
                Watched(kind_named("InferenceService"), isvcs),
                *self.caches.watched(leader_worker_sets=self.lws_installed),
            ],
            namespaces,
            retry_delay=self.backoff.delay,
        )
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._work()) for _ in range(self.workers)]

    def _gone(self, key: Key) -> None:
        self.observe(key, None)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self.watches.stop()

    def set_aside(self, obj: Mapping[str, Any], problem: str) -> None:
        """A runtime, model or accelerator class that does not parse: it is left out of every
        decision until it changes. Logged, and a Warning event on it, once per version."""
        (kind, namespace, name), _ = _identity(obj)
        logger.error(
            "Ignoring a malformed object until it changes",
            extra={"kind": kind, "namespace": namespace, "resource": name, "error": problem},
        )
        if self._loop is not None:
            event = Event("Warning", MALFORMED, f"{problem}; it is ignored until it changes")
            self._loop.run_in_executor(None, self._post_about, obj, event)

    async def _work(self) -> None:
        await self.watches.synced.wait()
        while True:
            key = await self.queue.get()
            failed = True
            try:
                failed = await self.process(key)
            except Exception:  # a bug must not kill the worker; the key is retried
                logger.exception(
                    "Unexpected error reconciling InferenceService",
                    extra={"namespace": key[0], "inferenceService": key[1]},
                )
            finally:
                self.queue.done(key, failed=failed)

    async def process(self, key: Key) -> bool:
        """Reconcile one InferenceService; True when it must be retried with backoff."""
        body = self.isvcs.get(key)
        if body is None or key[0] in self._terminating:
            return False
        started = time.monotonic()
        if (body.get("metadata") or {}).get("deletionTimestamp"):
            return False  # the garbage collector's now, parsed or not (as the core decides)
        try:
            isvc = from_manifest(body)
        except InvalidResourceError as exc:
            # Nothing can be decided for it until it changes (its change re-queues it).
            logger.error(
                "Invalid InferenceService",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            written = await asyncio.to_thread(self._report_failure, key, body, str(exc))
            self._keep_status(key, body, written)
            self.metrics.record_reconcile(Outcome.PARKED, time.monotonic() - started)
            return False
        snapshot = snapshot_for(isvc, self.caches, lws_installed=self.lws_installed, now=_now())
        plan, outcome, written = await asyncio.to_thread(self._pass, key, body, isvc, snapshot)
        self._keep_status(key, body, written)
        self._record(key, plan)
        self.metrics.record_reconcile(outcome, time.monotonic() - started)
        return outcome is Outcome.ERROR

    def _keep_status(
        self, key: Key, body: Mapping[str, Any], written: Mapping[str, Any] | None
    ) -> None:
        """Take the status this pass wrote while the watch has not caught up with it: a pass
        before it does must not see the old status (a second write, a repeated event). Only
        the status is taken: a spec change in between still arrives as a change."""
        known = self.isvcs.get(key)
        if (
            written is not None
            and known is not None
            and resource_version(known) == resource_version(body)
        ):
            self.isvcs[key] = {**known, "status": written.get("status") or {}}

    def _pass(
        self, key: Key, body: Mapping[str, Any], isvc: InferenceService, snapshot: Snapshot
    ) -> tuple[ReconcilePlan, Outcome, dict[str, Any] | None]:
        """Decide and write, in a worker thread (the config read and writes block); also returns
        the InferenceService as the status write left it (None: no status written)."""
        plan = reconcile(isvc, snapshot, self.config_source())
        try:
            written = self._write(key, body, snapshot.existing, plan)
        except OwnerGoing:
            logger.info(
                "InferenceService is being deleted; its objects are not adopted",
                extra={"namespace": key[0], "inferenceService": key[1]},
            )
            return plan, Outcome.PARKED, None
        except ApiError as exc:
            if "NamespaceTerminating" in exc.causes:
                # Its InferenceServices go with it: their deletion events end this, not a retry.
                self._terminating.add(key[0])
                logger.info(
                    "Namespace is being deleted; InferenceService not reconciled",
                    extra={"namespace": key[0], "inferenceService": key[1]},
                )
                return plan, Outcome.PARKED, None
            if exc.reason == "AlreadyExists":
                # Created by a pass whose object the watch has not delivered yet: by the retry
                # (with backoff) the cache holds it. A race, not a failure.
                logger.info(
                    "Object exists but is not in the watch cache yet; retrying",
                    extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
                )
                return plan, Outcome.ERROR, None
            logger.error(
                "Failed to write InferenceService workloads",
                extra={
                    "namespace": key[0],
                    "inferenceService": key[1],
                    "error": str(exc),
                    "status": exc.status,
                },
            )
            refused = exc.status in REFUSALS
            return (
                plan,
                Outcome.ERROR,
                self._report_failure(key, body, str(exc)) if refused else None,
            )
        return plan, plan.outcome, written

    def _report_failure(
        self, key: Key, body: Mapping[str, Any], message: str
    ) -> dict[str, Any] | None:
        """Tell the InferenceService's author why no pass completes: ``Ready=False``, reason
        ``ReconcileFailed``, and one Warning event per distinct message. Returns the object as
        the status write left it (None: nothing written)."""
        api, old = self._client(), body.get("status") or {}
        status = failed_status(old, message, now=_now())
        try:
            written = None
            if status != old:
                patch = merge_patch_between(old if isinstance(old, dict) else {}, status)
                written = api.merge_patch(body, {"status": patch}, subresource="status")
            self._post(api, key, body, Event("Warning", RECONCILE_FAILED, message))
        except ApiError as exc:  # the next pass tries again
            if "NamespaceTerminating" in exc.causes:
                self._terminating.add(key[0])  # its deletion events end this
            logger.warning(
                "Failed to report a failed reconcile",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            return None
        return written

    # -- writing (worker thread) ---------------------------------------------------------------

    def _client(self) -> KubeApi:
        if self._api is None:
            self._api = self.api_factory()
        return self._api

    def _write(
        self,
        key: Key,
        body: Mapping[str, Any],
        existing: Mapping[tuple[str, str], Any],
        plan: ReconcilePlan,
    ) -> dict[str, Any] | None:
        api = self._client()
        for record in plan.logs:
            level = logging.ERROR if record.level == "error" else logging.INFO
            logger.log(level, record.message, extra=dict(record.fields))
        for obj in plan.apply:
            current = existing.get((obj["kind"], obj["metadata"]["name"]))
            if current is not None and not _owned_by(current, body):
                _recheck_owner(api, body)
            try:
                self._apply(api, key, with_owner(obj, body), current)
            except ApiError as exc:  # say which object: the server's text may not
                message = f"cannot write {obj['kind']} {obj['metadata']['name']}: {exc.message}"
                raise ApiError(exc.status, message, exc.reason, exc.causes) from None
        for obj in plan.delete:
            api.delete(obj)
        written = None
        if plan.status is not None and plan.status != (body.get("status") or {}):
            patch = merge_patch_between(body.get("status") or {}, plan.status)
            written = api.merge_patch(body, {"status": patch}, subresource="status")
        for event in plan.events:
            self._post(api, key, body, event)
        return written

    def _apply(
        self, api: KubeApi, key: Key, desired: Mapping[str, Any], current: Mapping[str, Any] | None
    ) -> None:
        """Apply one object, noting the write so that its watch echo does not re-queue."""
        identity, _ = _identity(desired)
        with self._echo_lock:
            self._writing.add(identity)
        written = None
        try:
            written = apply_object(api, desired, current)
        finally:
            version = _identity(written)[1] if written is not None else None
            with self._echo_lock:
                self._writing.discard(identity)
                if version is not None:
                    self._own_writes[identity] = version
                seen = self._unconfirmed.pop(identity, _UNSEEN)
            if written is not None and current is not None:
                self._loop.call_soon_threadsafe(self.caches.objects.wrote, written)
            if seen is not _UNSEEN and (version is None or seen != version):
                self._loop.call_soon_threadsafe(self.requeue_owner, *key)

    def _post(self, api: KubeApi, key: Key, body: Mapping[str, Any], event: Event) -> None:
        meta = body["metadata"]
        generation, posted = self._posted.get(key, (None, set()))
        if generation != meta.get("generation"):  # older decisions can never repeat: forget
            generation, posted = meta.get("generation"), set()
        identity = (event.reason, event.message)
        if event.reason != "RuntimeNotFound" and identity in posted:
            return
        api.create(event_about(body, event, _now()))
        if event.reason != "RuntimeNotFound":  # posted on every pass: nothing to remember
            posted.add(identity)
        self._posted[key] = (generation, posted)

    def _post_about(self, obj: Mapping[str, Any], event: Event) -> None:
        """Post an event about any object, in a worker thread; a failure is only logged."""
        try:
            self._client().create(event_about(obj, event, _now()))
        except ApiError as exc:
            (kind, namespace, name), _ = _identity(obj)
            logger.warning(
                "Failed to post an event",
                extra={"kind": kind, "namespace": namespace, "resource": name, "error": str(exc)},
            )

    # -- metrics -------------------------------------------------------------------------------

    def _record(self, key: Key, plan: ReconcilePlan) -> None:
        decisions = plan.decisions
        if decisions.selection is not None:
            self.metrics.record_selection(
                "controller", *decisions.selection, exclusions=decisions.exclusions
            )
        if decisions.named is not None:
            self.metrics.record_named(decisions.named)
        for component, reason in decisions.component_errors:
            self.metrics.record_component_error(component, reason)
        if decisions.modes:
            self.metrics.track_modes(key, decisions.modes)
        if decisions.runtime_unresolved or plan.outcome is Outcome.SUCCESS:
            self.metrics.track_unresolved(key, decisions.runtime_unresolved)
