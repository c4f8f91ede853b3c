"""The InferenceService controller: workers that reconcile queued keys and apply the plans.

Handlers (kopf) only feed it: they keep its caches current and queue keys. Each pass reads a
snapshot, asks the pure core for a plan, then writes through the API in a worker thread: objects
in plan order, deletions, the status (only when it changed) and events (once per identical
decision, OPEN-09). Failures come back with exponential backoff; parked passes wait for a
watched change (S9).
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cluster.api import ApiError, KubeApi, resource_version
from ..cluster.applying import apply_object, merge_patch_between, with_owner
from ..core.operator_config import OperatorConfig
from ..core.reconciling import Event, Outcome, ReconcilePlan, Snapshot, reconcile
from ..metrics import Metrics
from ..models import InferenceService, InvalidResourceError, from_manifest
from .queue import Backoff, WorkQueue
from .snapshot import Caches, snapshot_for

__all__ = ["EVENT_SOURCE", "Controller"]

#: ``source.component`` of every InferenceService event (OPEN-34).
EVENT_SOURCE = "v1beta1Controllers"

logger = logging.getLogger("ome_operator.controller")

Key = tuple[str, str]


_UNSEEN = object()


def _identity(obj: Mapping[str, Any]) -> tuple[tuple[Any, Any, Any], Any]:
    """(kind, namespace, name) of an object, and its resourceVersion."""
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace"), meta.get("name")), meta.get("resourceVersion")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Controller:
    api_factory: Callable[[], KubeApi]
    config_source: Callable[[], OperatorConfig]
    metrics: Metrics
    caches: Caches = field(default_factory=Caches)
    backoff: Backoff = field(default_factory=Backoff)
    lws_installed: bool = True
    workers: int = 4
    isvcs: dict[Key, dict[str, Any]] = field(default_factory=dict)
    _queue: WorkQueue | None = None
    _api: KubeApi | None = None
    #: Per InferenceService, the generation its posted events were decided at, and their
    #: (reason, message): an identical decision of the same generation is posted once (OPEN-09).
    _posted: dict[Key, tuple[Any, set[tuple[str, str]]]] = field(default_factory=dict)
    _modes: dict[Key, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    _mode_counts: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    _unresolved: set[Key] = field(default_factory=set)
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

    def observe(self, key: Key, body: Mapping[str, Any] | None) -> None:
        """An InferenceService changed (``None``: it is gone)."""
        if body is None:
            self.isvcs.pop(key, None)
            self._posted.pop(key, None)
            self._set_modes(key, ())
            self._unresolved.discard(key)
            self.metrics.set_unresolved(len(self._unresolved))
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
        self.caches.objects.on_change = self.owned_changed

    def start(self) -> None:
        """Start the workers; they take keys once the owned objects are listed."""
        self._loop = asyncio.get_running_loop()
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._work()) for _ in range(self.workers)]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self.caches.objects.stop()

    async def _work(self) -> None:
        await self.caches.objects.synced.wait()
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
        try:
            isvc = from_manifest(body)
        except InvalidResourceError as exc:
            logger.error(
                "Invalid InferenceService",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            self.metrics.record_reconcile(Outcome.PARKED, time.monotonic() - started)
            return False
        snapshot = snapshot_for(isvc, self.caches, lws_installed=self.lws_installed, now=_now())
        plan, outcome, written = await asyncio.to_thread(self._pass, key, body, isvc, snapshot)
        known = self.isvcs.get(key)
        if (
            written is not None
            and known is not None
            and resource_version(known) == resource_version(body)
        ):
            # The watch has not caught up with our own status write yet: a pass before it does
            # must not see the old status (a second write, a repeated RuntimeNotFound event).
            # Only the status is taken: a spec change in between still arrives as a change.
            self.isvcs[key] = {**known, "status": written.get("status") or {}}
        self._record(key, plan)
        self.metrics.record_reconcile(outcome, time.monotonic() - started)
        return outcome is Outcome.ERROR

    def _pass(
        self, key: Key, body: Mapping[str, Any], isvc: InferenceService, snapshot: Snapshot
    ) -> tuple[ReconcilePlan, Outcome, dict[str, Any] | None]:
        """Decide and write, in a worker thread (the config read and writes block); also returns
        the InferenceService as the status write left it (None: no status written)."""
        plan = reconcile(isvc, snapshot, self.config_source())
        try:
            written = self._write(key, body, snapshot.existing, plan)
        except ApiError as exc:
            if "NamespaceTerminating" in exc.causes:
                # Its InferenceServices go with it: their deletion events end this, not a retry.
                self._terminating.add(key[0])
                logger.info(
                    "Namespace is being deleted; InferenceService not reconciled",
                    extra={"namespace": key[0], "inferenceService": key[1]},
                )
                return plan, Outcome.PARKED, None
            logger.error(
                "Failed to write InferenceService workloads",
                extra={
                    "namespace": key[0],
                    "inferenceService": key[1],
                    "error": str(exc),
                    "status": exc.status,
                },
            )
            return plan, Outcome.ERROR, None
        return plan, plan.outcome, written

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
            self._apply(api, key, with_owner(obj, body), current)
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
        now = _now()
        api.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
                "involvedObject": {
                    "apiVersion": body.get("apiVersion", "ome.io/v1beta1"),
                    "kind": "InferenceService",
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "uid": meta.get("uid"),
                    "resourceVersion": meta.get("resourceVersion"),
                },
                "reason": event.reason,
                "message": event.message,
                "type": event.type,
                "source": {"component": EVENT_SOURCE},
                "reportingComponent": EVENT_SOURCE,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
            }
        )
        if event.reason != "RuntimeNotFound":  # posted on every pass: nothing to remember
            posted.add(identity)
        self._posted[key] = (generation, posted)

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
            self._set_modes(key, decisions.modes)
        if decisions.runtime_unresolved:
            self._unresolved.add(key)
        elif plan.outcome is Outcome.SUCCESS:
            self._unresolved.discard(key)
        self.metrics.set_unresolved(len(self._unresolved))

    def _set_modes(self, key: Key, modes: tuple[tuple[str, str], ...]) -> None:
        """Note the (component, mode) pairs of one InferenceService; move only their gauges."""
        before = self._modes.pop(key, ())
        if modes:
            self._modes[key] = modes
        if before == modes:
            return
        self._mode_counts.subtract(before)
        self._mode_counts.update(modes)
        for pair in sorted(set(before) | set(modes)):
            self.metrics.set_components_in_mode(*pair, self._mode_counts[pair])
