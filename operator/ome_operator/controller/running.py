"""The InferenceService controller: workers that reconcile queued keys and apply the plans.

Its own watches (``watches``) keep its caches current and queue keys: an InferenceService
change queues it, a runtime change the InferenceServices whose pass it can change
(``core.requeue``), a change to a written object its owner. Each pass reads a snapshot, asks the
pure core for a plan, then writes through the API in a worker thread (``writing``): objects in
plan order, deletions, events, then the status. Failures come back with exponential backoff;
parked passes wait for a watched change. A pass that cannot complete for a reason the author
can fix says so on the InferenceService (``ReconcileFailed``; docs/reference/status-and-events.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.errors import AlreadyExists, ApiError, NamespaceTerminating, Refused
from ..cluster.leases import NotLeading
from ..cluster.resources import resource_named
from ..core.operator_config import OperatorConfig
from ..core.ownership import NameConflict
from ..core.reconciling import Event, Outcome, ReconcilePlan, Snapshot, reconcile
from ..core.requeue import decision_inputs_changed, needs_pass
from ..metrics import Metrics
from ..models import InferenceService, InvalidResourceError, ServingRuntime, from_manifest
from .configuring import ConfigSource
from .queue import Backoff, WorkQueue
from .replicas import ReplicaController
from .runtime_changes import subjects
from .snapshot import Caches, snapshot_for
from .store import InferenceServiceStore
from .watches import InferenceServiceFeed, Key, Watched, Watches
from .workers import DRAIN_SECONDS, Workers
from .writing import OwnerGoing, PlanWriter, StatusTargetGone, identity_of, now

__all__ = ["MALFORMED", "Controller"]

#: Reason of the Warning event on a runtime, model or accelerator class that does not parse.
MALFORMED = "MalformedResource"

logger = logging.getLogger("ome_operator.controller")


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
    store: InferenceServiceStore = field(default_factory=InferenceServiceStore)
    _queue: WorkQueue | None = None
    #: The worker tasks, from start() on.
    passes: Workers | None = None
    #: Makes the client of each informer (a connection of its own), for start().
    watch_api: Callable[[], KubeApi] | None = None
    #: The InferenceReplica controller beside it (OMENative Instances), started and stopped
    #: with it; it reads the InferenceReplicas of this controller's cache.
    replicas: ReplicaController | None = None
    #: Namespaces the API server answered NamespaceTerminating for: their InferenceServices are
    #: not reconciled again (their deletion events follow); forgotten with the last of them.
    _terminating: set[str] = field(default_factory=set)
    _loop: asyncio.AbstractEventLoop | None = None
    #: The API factory and namespaces start() was given, for start_working().
    _started: tuple[Callable[[], KubeApi], tuple[str | None, ...]] | None = None
    #: A namespace's labels, for the pod policy's exceptions (``namespace_labels``; None: no
    #: labels, the policy at its strictest); shared with the webhook.
    namespace_labels: Callable[[str], Mapping[str, str]] | None = None

    # -- feeding -----------------------------------------------------------------------------

    @property
    def isvcs(self) -> Mapping[Key, dict[str, Any]]:
        """The InferenceServices as the watch shows them (read only: the store writes them)."""
        return self.store.bodies

    @property
    def queue(self) -> WorkQueue:
        if self._queue is None:
            self._queue = WorkQueue(self.backoff, name="inferenceservice", metrics=self.metrics)
        return self._queue

    def seen(self, key: Key, body: Mapping[str, Any]) -> None:
        """The watch shows an InferenceService as it now is: decide again unless only its
        status or bookkeeping moved."""
        if self.store.seen(key, body):
            self._enqueue(key)

    def gone(self, key: Key) -> None:
        """The watch shows an InferenceService deleted: forget everything about it."""
        self.store.forget(key)
        self.writer.forget(key)
        self.metrics.track_modes(key, ())
        self.metrics.track_unresolved(key, False)
        self.queue.forget(key)
        if key[0] in self._terminating and not self.store.holds_namespace(key[0]):
            self._terminating.discard(key[0])

    def requeue(self, namespace: str | None = None) -> None:
        """Re-queue every InferenceService of ``namespace`` (None: of every namespace)."""
        for key in sorted(self.store):
            if namespace is None or key[0] == namespace:
                self._enqueue(key)

    def runtime_changed(
        self,
        obj: Mapping[str, Any],
        before: ServingRuntime | None,
        after: ServingRuntime | None,
    ) -> None:
        """A runtime changed: re-queue the InferenceServices whose pass it can change
        (``core.requeue``), in key order; none when nothing a pass reads changed."""
        if not decision_inputs_changed(before, after):
            return
        changed = [r for r in (before, after) if r is not None]

        def in_scope(namespace: str) -> bool:
            return any(r.seen_from(namespace) for r in changed)

        for isvc, snapshot in subjects(self.store, self.caches, in_scope):
            if needs_pass(isvc, snapshot, before, after):
                self._enqueue((isvc.namespace, isvc.name))

    def requeue_owner(self, namespace: str, isvc: str | None) -> None:
        if isvc and (namespace, isvc) in self.store:
            self._enqueue((namespace, isvc))

    def _enqueue(self, key: Key) -> None:
        """Queue a pass; a follower (started without workers) queues nothing: once elected, it
        queues every InferenceService (``start_working``)."""
        following = self._started is not None and self.passes is None
        if not following:
            self.queue.add(key)

    def owned_changed(
        self, namespace: str, isvc: str | None, obj: Mapping[str, Any], deleted: bool = False
    ) -> None:
        """An owned object changed: re-queue its owner, unless the event only echoes a write
        of this controller (whose answer may not have reached the worker yet)."""
        if deleted and isvc:
            self.writer.saw_deleted((namespace, isvc), obj)
        if not self.writer.echoes.is_echo(obj, deleted):
            self.requeue_owner(namespace, isvc)

    # -- running -----------------------------------------------------------------------------

    def __post_init__(self) -> None:
        self.writer = PlanWriter(self.api_factory, self.caches.objects, self.requeue_owner)
        caches = self.caches
        caches.objects.on_change = self.owned_changed
        caches.serving_runtimes.on_change = self.runtime_changed
        caches.cluster_serving_runtimes.on_change = self.runtime_changed
        for source in caches.sources:
            source.on_malformed = self.set_aside
        if isinstance(self.config_source, ConfigSource):
            # Every pass reads the configuration: a change that decides differently re-queues
            # every InferenceService.
            self.config_source.on_change = self.requeue

    def start(
        self,
        api_factory: Callable[[], KubeApi],
        namespaces: tuple[str | None, ...] = (None,),
        *,
        work: bool = True,
    ) -> None:
        """Start the watches, and with ``work`` the workers (``start_working``). Once only."""
        self._loop = self.writer.loop = asyncio.get_running_loop()
        self._started = (api_factory, namespaces)
        isvcs = InferenceServiceFeed(lambda: self.store.bodies, self.seen, self.gone)
        config = self.config_source
        self.watches.start(
            api_factory,
            [
                Watched(resource_named("InferenceService"), isvcs),
                *self.caches.watched(leader_worker_sets=self.lws_installed),
                *([config.watched()] if isinstance(config, ConfigSource) else []),
            ],
            namespaces,
            retry_delay=self.backoff.delay,
            on_failure=self.metrics.record_watch_failure,
        )
        if work:
            self.start_working()

    def start_working(self) -> None:
        """Start the workers and the InferenceReplica controller (a leader does, once elected);
        they take keys once every watch has listed. Once only."""
        if self._started is None:
            raise RuntimeError("start() the watches before the workers")
        api_factory, namespaces = self._started
        if self.passes is None:
            self.passes = Workers(
                self.queue,
                lambda key: self.process(key),  # looked up per pass
                what="InferenceService",
                fields=lambda key: {"namespace": key[0], "inferenceService": key[1]},
                logger=logger,
            )
            self.passes.start(self.workers, self.watches.synced)
            self.requeue()  # elected late: everything the watches hold gets a pass
        if self.replicas is not None:
            self.replicas.start(api_factory, namespaces, self.watches.synced)

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        """Let the passes under way (of both controllers, side by side) finish for up to
        ``drain`` seconds, then stop watching."""
        stopping = [] if self.replicas is None else [self.replicas.stop(drain)]
        if self.passes is not None:
            stopping.append(self.passes.stop(drain))
        await asyncio.gather(*stopping)
        await self.watches.stop()

    def set_aside(self, obj: Mapping[str, Any], problem: str) -> None:
        """A runtime, model or accelerator class that does not parse: it is left out of every
        decision until it changes. Logged, and a Warning event on it, once per version."""
        (kind, namespace, name), _ = identity_of(obj)
        logger.error(
            "Ignoring a malformed object until it changes",
            extra={"kind": kind, "namespace": namespace, "resource": name, "error": problem},
        )
        if self._loop is not None:
            event = Event("Warning", MALFORMED, f"{problem}; it is ignored until it changes")
            self._loop.run_in_executor(None, self.writer.post_about, obj, event)

    async def process(self, key: Key) -> bool:
        """Reconcile one InferenceService; True when it must be retried with backoff."""
        body = self.store.get(key)
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
            self.store.wrote_status(key, body, written)
            self.metrics.record_reconcile(Outcome.PARKED, time.monotonic() - started)
            return False
        snapshot = snapshot_for(isvc, self.caches, lws_installed=self.lws_installed, now=now())
        plan, outcome, written = await asyncio.to_thread(self._pass, key, body, isvc, snapshot)
        self.store.wrote_status(key, body, written)
        self._record(key, plan)
        self.metrics.record_reconcile(outcome, time.monotonic() - started)
        return outcome is Outcome.ERROR

    def _pass(
        self, key: Key, body: Mapping[str, Any], isvc: InferenceService, snapshot: Snapshot
    ) -> tuple[ReconcilePlan, Outcome, dict[str, Any] | None]:
        """Decide and write, in a worker thread (the config read and writes block); also returns
        the InferenceService as the status write left it (None: no status written)."""
        # The configuration is read here, off the event loop: it may be re-read from the API.
        labels = self.namespace_labels(isvc.namespace) if self.namespace_labels else {}
        plan = reconcile(
            isvc, replace(snapshot, config=self.config_source(), namespace_labels=labels)
        )
        try:
            written = self.writer.write(key, body, snapshot.existing, plan)
        except OwnerGoing:
            logger.info(
                "InferenceService is being deleted; its objects are not adopted",
                extra={"namespace": key[0], "inferenceService": key[1]},
            )
            return plan, Outcome.PARKED, None
        except StatusTargetGone:
            logger.info(
                "InferenceService was deleted; its status is not written",
                extra={"namespace": key[0], "inferenceService": key[1]},
            )
            return plan, Outcome.PARKED, None
        except NotLeading:
            # The Lease is no longer held with margin (the process is stopping): no write was
            # sent, and the next leader's pass does this one. Leadership logged the loss.
            return plan, Outcome.ERROR, None
        except NameConflict as conflict:
            # Someone else's object, not watched (unlabelled): told once, looked at again
            # slowly (its removal re-queues nothing), and at once when the InferenceService
            # changes; never written (docs/troubleshooting.md, "NameConflict").
            record = conflict.log_record(key[0])
            logger.error(record.message, extra=dict(record.fields))
            assert self._loop is not None
            delay = self.writer.taken.recheck_in(key)
            self._loop.call_soon_threadsafe(self.queue.add_after, key, delay)
            return plan, Outcome.PARKED, self._report_conflict(key, body, conflict)
        except NamespaceTerminating:
            # Its InferenceServices go with it: their deletion events end this, not a retry.
            self._terminating.add(key[0])
            logger.info(
                "Namespace is being deleted; InferenceService not reconciled",
                extra={"namespace": key[0], "inferenceService": key[1]},
            )
            return plan, Outcome.PARKED, None
        except AlreadyExists as exc:
            # A name taken by an object the watch has not delivered yet: by the retry (with
            # backoff) the cache holds it, or it is someone else's (``NameConflict``).
            logger.info(
                "Object exists but is not in the watch cache yet; retrying",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            return plan, Outcome.ERROR, None
        except ApiError as exc:
            logger.error(
                "Failed to write InferenceService workloads",
                extra={
                    "namespace": key[0],
                    "inferenceService": key[1],
                    "error": str(exc),
                    "status": exc.status,
                },
            )
            # A refusal (a bad field, a value out of range, an object too large, no permission)
            # is no passing failure: the InferenceService is told (``ReconcileFailed``).
            refused = isinstance(exc, Refused)
            return (
                plan,
                Outcome.ERROR,
                self._report_failure(key, body, str(exc)) if refused else None,
            )
        return plan, plan.outcome, written

    def _report_conflict(
        self, key: Key, body: Mapping[str, Any], conflict: NameConflict
    ) -> dict[str, Any] | None:
        """Tell the InferenceService's author whose name is taken (``NameConflict``); the
        object as the status write left it (None: nothing written)."""
        try:
            return self.writer.report_conflict(key, body, conflict)
        except ApiError as exc:  # the recheck tries again
            logger.warning(
                "Failed to report a failed reconcile",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            return None

    def _report_failure(
        self, key: Key, body: Mapping[str, Any], message: str
    ) -> dict[str, Any] | None:
        """Tell the InferenceService's author why no pass completes (``ReconcileFailed``);
        the object as the status write left it (None: nothing written)."""
        try:
            return self.writer.report_failure(key, body, message)
        except ApiError as exc:  # the next pass tries again
            if isinstance(exc, NamespaceTerminating):
                self._terminating.add(key[0])  # its deletion events end this
            logger.warning(
                "Failed to report a failed reconcile",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            return None

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
