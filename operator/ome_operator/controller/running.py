"""The InferenceService controller, an instance of the controller runtime (``runtime``).

Its declaration (``Controller.declaration``) says what it watches and what each change
re-queues: an InferenceService change itself, a change to an object it owns its owner (unless
it echoes the controller's own write: ``write_record``), a runtime change the InferenceServices
whose pass it can change (``core.requeue``), a configuration change every InferenceService.
Each pass reads a snapshot, asks the pure core for a plan, then writes through the API in a
worker thread (``writing``): objects in plan order, deletions, events, then the status.
Failures come back with exponential backoff; parked passes wait for a watched change. A pass
that cannot complete for a reason the author can fix says so on the InferenceService
(``ReconcileFailed``; docs/reference/status-and-events.md).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
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
from ..models.object_metadata import Key, identity_of
from .configuring import ConfigSource
from .queue import Backoff, WorkQueue
from .replicas import ReplicaController
from .runtime import (
    DONE,
    DRAIN_SECONDS,
    RETRY,
    ControllerRuntime,
    ControllerSpec,
    OwnerGoing,
    Result,
    Trigger,
)
from .runtime_changes import subjects
from .snapshot import Caches, snapshot_for
from .store import InferenceServiceStore
from .watches import InferenceServiceFeed, Watched, Watches
from .writing import BY, PlanWriter, StatusTargetGone, now

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
    #: The optional kinds whose API the cluster does not serve (looked up at start:
    #: ``LeaderWorkerSet``, ``ScaledObject``); they are neither watched nor written.
    missing: frozenset[str] = frozenset()
    workers: int = 4
    store: InferenceServiceStore = field(default_factory=InferenceServiceStore)
    #: Makes the client of each informer (a connection of its own), for start().
    watch_api: Callable[[], KubeApi] | None = None
    #: The InferenceReplica controller beside it (OMENative Instances), started and stopped
    #: with it; it reads the InferenceReplicas of this controller's cache.
    replicas: ReplicaController | None = None
    #: A namespace's labels, for the pod policy's exceptions (``namespace_labels``; None: no
    #: labels, the policy at its strictest); shared with the webhook.
    namespace_labels: Callable[[str], Mapping[str, str]] | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    #: The API factory and namespaces start() was given, for start_working().
    _started: tuple[Callable[[], KubeApi], tuple[str | None, ...]] | None = None

    def __post_init__(self) -> None:
        self.writer = PlanWriter(self.api_factory, self.caches.objects.record, self._requeue_soon)
        for source in self.caches.sources:
            source.malformed.subscribe(self.set_aside)
        self.runtime = ControllerRuntime(
            self.declaration(),
            self.reconcile,
            logger=logger,
            backoff=self.backoff,
            metrics=self.metrics,
        )

    def declaration(self) -> ControllerSpec:
        """What this controller is for, what it owns and what else it watches, with the keys
        each change re-queues."""
        caches, config = self.caches, self.config_source
        owned = caches.objects
        watched = [
            Trigger(index.kind, index.changed.subscribe, self._runtime_keys)
            for index in (caches.serving_runtimes, caches.cluster_serving_runtimes)
        ]
        if isinstance(config, ConfigSource):
            # Every pass reads the configuration: a change that decides differently re-queues
            # every InferenceService.
            watched.append(Trigger("ConfigMap", config.changed.subscribe, self._every_key))
        return ControllerSpec(
            kind="InferenceService",
            key_field="inferenceService",
            read=self._read,
            keys=lambda: list(self.store),
            owns=tuple(
                Trigger(kind, functools.partial(owned.listen, kind), self._owner_key)
                for kind in owned.KINDS
            ),
            watches=tuple(watched),
        )

    # -- feeding -----------------------------------------------------------------------------

    @property
    def isvcs(self) -> Mapping[Key, dict[str, Any]]:
        """The InferenceServices as the watch shows them (read only: the store writes them)."""
        return self.store.bodies

    @property
    def queue(self) -> WorkQueue:
        return self.runtime.queue

    def _read(self, key: Key) -> dict[str, Any] | None:
        """The InferenceService as the watch shows it, or as its status write answered since."""
        return self.caches.objects.record.current(("InferenceService", *key), self.store.get(key))

    def seen(self, key: Key, body: Mapping[str, Any]) -> None:
        """The watch shows an InferenceService as it now is: decide again unless only its
        status or bookkeeping moved."""
        self.caches.objects.record.saw(body, False)
        if self.store.seen(key, body):
            self.runtime.enqueue(key)

    def gone(self, key: Key) -> None:
        """The watch shows an InferenceService deleted: forget everything about it."""
        self.store.forget(key)
        self.writer.forget(key)
        self.metrics.track_modes(key, ())
        self.metrics.track_unresolved(key, False)
        self.runtime.gone(key)

    def requeue(self, namespace: str | None = None) -> None:
        """Re-queue every InferenceService of ``namespace`` (None: of every namespace)."""
        self.runtime.requeue_all(namespace)

    def _every_key(self) -> list[Key]:
        return sorted(self.store)

    def _runtime_keys(
        self, obj: Mapping[str, Any], before: ServingRuntime | None, after: ServingRuntime | None
    ) -> Iterator[Key]:
        """A runtime changed: the InferenceServices whose pass it can change
        (``core.requeue``), in key order; none when nothing a pass reads changed."""
        if not decision_inputs_changed(before, after):
            return
        changed = [r for r in (before, after) if r is not None]

        def in_scope(namespace: str) -> bool:
            return any(r.seen_from(namespace) for r in changed)

        for isvc, snapshot in subjects(self.store, self.caches, in_scope):
            if needs_pass(isvc, snapshot, before, after):
                yield isvc.namespace, isvc.name

    def _owner_key(
        self, namespace: str, isvc: str, obj: Mapping[str, Any], deleted: bool = False
    ) -> list[Key]:
        """An owned object changed: its owner, unless the event only echoes a write of this
        controller (whose answer may not have reached the worker yet)."""
        if self.caches.objects.record.is_echo(obj, BY, deleted):
            return []
        return [(namespace, isvc)] if (namespace, isvc) in self.store else []

    def _requeue_soon(self, key: Key) -> None:
        """A pass for ``key``, from a worker thread."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self.runtime.enqueue, key)

    # -- running -----------------------------------------------------------------------------

    def start(
        self,
        api_factory: Callable[[], KubeApi],
        namespaces: tuple[str | None, ...] = (None,),
        *,
        work: bool = True,
    ) -> None:
        """Start the watches, and with ``work`` the workers (``start_working``); without, a
        follower queues nothing. Once only."""
        self._loop = asyncio.get_running_loop()
        self._started = (api_factory, namespaces)
        self.runtime.following = not work
        isvcs = InferenceServiceFeed(lambda: self.store.bodies, self.seen, self.gone)
        config = self.config_source
        self.watches.start(
            api_factory,
            [
                Watched(resource_named("InferenceService"), isvcs),
                *self.caches.watched(missing=self.missing),
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
        once every watch has listed, every InferenceService gets a pass. Once only."""
        if self._started is None:
            raise RuntimeError("start() the watches before the workers")
        api_factory, namespaces = self._started
        self.runtime.work(self.workers, self.watches.synced)
        if self.replicas is not None:
            self.replicas.start(api_factory, namespaces, self.watches.synced)

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        """Let the passes under way (of both controllers, side by side) finish for up to
        ``drain`` seconds, then stop watching."""
        stopping = [self.runtime.stop(drain)]
        if self.replicas is not None:
            stopping.append(self.replicas.stop(drain))
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

    async def process(self, key: Key) -> Result:
        """One pass over an InferenceService, as the runtime's workers run it."""
        return await self.runtime.process(key)

    async def reconcile(self, key: Key, body: Mapping[str, Any]) -> Result:
        """Reconcile one InferenceService (the runtime's reconciler)."""
        started, outcome = time.monotonic(), Outcome.ERROR
        try:
            try:
                isvc = from_manifest(body)
            except InvalidResourceError as exc:
                # Nothing can be decided for it until it changes (its change re-queues it).
                logger.error(
                    "Invalid InferenceService",
                    extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
                )
                await asyncio.to_thread(self._report_failure, key, body, str(exc))
                outcome = Outcome.PARKED
                return DONE
            snapshot = snapshot_for(isvc, self.caches, missing=self.missing, now=now())
            plan, outcome, result = await asyncio.to_thread(self._pass, key, body, isvc, snapshot)
            self._record(key, plan)
            return result
        except (OwnerGoing, NamespaceTerminating):
            outcome = Outcome.PARKED
            raise
        finally:
            self.metrics.record_reconcile(outcome, time.monotonic() - started)

    def _pass(
        self, key: Key, body: Mapping[str, Any], isvc: InferenceService, snapshot: Snapshot
    ) -> tuple[ReconcilePlan, Outcome, Result]:
        """Decide and write, in a worker thread (the config read and writes block)."""
        # The configuration is read here, off the event loop: it may be re-read from the API.
        labels = self.namespace_labels(isvc.namespace) if self.namespace_labels else {}
        plan = reconcile(
            isvc, replace(snapshot, config=self.config_source(), namespace_labels=labels)
        )
        try:
            self.writer.write(key, body, snapshot.existing, plan)
        except StatusTargetGone:
            logger.info(
                "InferenceService was deleted; its status is not written",
                extra={"namespace": key[0], "inferenceService": key[1]},
            )
            return plan, Outcome.PARKED, DONE
        except NameConflict as conflict:
            # Someone else's object, not watched (unlabelled): told once, looked at again
            # slowly (its removal re-queues nothing), and at once when the InferenceService
            # changes; never written (docs/troubleshooting.md, "NameConflict").
            record = conflict.log_record(key[0])
            logger.error(record.message, extra=dict(record.fields))
            self._report(self.writer.report_conflict, key, body, conflict)
            return plan, Outcome.PARKED, Result(after=self.writer.taken.recheck_in(key))
        except (NotLeading, NamespaceTerminating, OwnerGoing):
            raise  # the runtime's rules
        except AlreadyExists as exc:
            # A name taken by an object the watch has not delivered yet: by the retry (with
            # backoff) the cache holds it, or it is someone else's (``NameConflict``).
            logger.info(
                "Object exists but is not in the watch cache yet; retrying",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
            )
            return plan, Outcome.ERROR, RETRY
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
            if isinstance(exc, Refused):
                self._report_failure(key, body, str(exc))
            return plan, Outcome.ERROR, RETRY
        return plan, plan.outcome, RETRY if plan.outcome is Outcome.ERROR else DONE

    def _report_failure(self, key: Key, body: Mapping[str, Any], message: str) -> None:
        """Tell the InferenceService's author why no pass completes (``ReconcileFailed``)."""
        self._report(self.writer.report_failure, key, body, message)

    def _report(self, report: Callable[..., Any], key: Key, *args: Any) -> None:
        """Report through the status and an event; a failure is logged (the next pass, or the
        recheck, tries again)."""
        try:
            report(key, *args)
        except NamespaceTerminating:
            self.runtime.namespace_terminating(key[0])  # its deletion events end this
        except ApiError as exc:
            logger.warning(
                "Failed to report a failed reconcile",
                extra={"namespace": key[0], "inferenceService": key[1], "error": str(exc)},
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
