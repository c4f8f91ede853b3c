"""The InferenceReplica controller: it keeps each InferenceReplica's Instances
(docs/reference/workloads.md).

It runs on the controller runtime beside the InferenceService controller: its own work queue
and workers (``workers.Workers``), the InferenceReplicas from the InferenceService controller's
cache (it listens to their changes), and a watch of its own over the OMENative pods (label
``ome.io/managed-by=OMENative``), found by the InferenceReplica that controls them. Each pass asks
the pure core (``core.instances.plan_instances``) what to do, then writes, in a worker thread:
pods created (with an owner reference to the InferenceReplica), pods deleted (only the pod of
that uid), the ``ome.io/serving`` condition of pods (``pods/status``), and the
InferenceReplica's status when it differs. A pod it would create that exists already with no
controller, labelled for this InferenceReplica and recording the uid of its InferenceService
(left behind by an InferenceReplica deleted with ``--cascade=orphan``, which the
InferenceService controller then made again: ``core.ownership``), is adopted
instead: its owner reference set, after a read of the InferenceReplica itself shows it is not
being deleted. A pod it created counts as there until the watch shows it
(``EXPECTATION_SECONDS`` at most), so a pass in between does not create it again; a create
refused because the pod exists, or a delete of a pod gone or replaced, is no failure: pod names
are the Instances' identity, so no pod is ever made twice. Answers go to the caches on the
event loop, after the pass. Other failures come back with backoff; a refused pod create is
told (``PodsRefused``) and tried again when ``refusals.Refusals`` says it is due.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.applying import apply_status, with_owner
from ..cluster.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    NamespaceTerminating,
    NotFound,
    Refused,
)
from ..cluster.leases import NotLeading
from ..cluster.resources import resource_named
from ..core.instances import InstancePlan, plan_instances
from ..core.ownership import orphaned_for
from ..core.rendering.metadata import MANAGED_BY
from ..metrics import Metrics
from .owned import KindCache, OwnedObjects
from .pod_writes import adopt, pod_reference, set_serving
from .queue import Backoff, WorkQueue
from .refusals import Refusals
from .watches import Key, Watched, Watches, object_key
from .workers import DRAIN_SECONDS, Workers
from .writing import OwnerGoing, gone_or_going, now, recheck_owner

__all__ = ["EXPECTATION_SECONDS", "POD_SELECTOR", "ReplicaController", "controlling_replica"]

logger = logging.getLogger("ome_operator.replicas")


#: Seconds a pod this controller created counts as there before the watch shows it (so a pass
#: in between does not create it again), as client-go's controller expectations do.
EXPECTATION_SECONDS = 30.0
#: The pods this controller watches: the ones it makes.
POD_SELECTOR = ",".join(f"{key}={value}" for key, value in MANAGED_BY.items())


def controlling_replica(pod: Mapping[str, Any]) -> str | None:
    """The name of the InferenceReplica that controls ``pod`` (its controller reference)."""
    for reference in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if reference.get("controller") and reference.get("kind") == "InferenceReplica":
            return reference.get("name")
    return None


class ReplicaController:
    """Keeps every InferenceReplica's Instances; see the module."""

    def __init__(
        self,
        api_factory: Callable[[], KubeApi],
        owned: OwnedObjects,
        *,
        inference_services: Callable[[Key], Mapping[str, Any] | None],
        workers: int = 2,
        backoff: Backoff | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.api_factory = api_factory
        #: The InferenceService held under (namespace, name), None when none is.
        self._inference_services = inference_services
        self.metrics = metrics
        self.owned = owned
        self.replicas: KindCache = owned.caches["InferenceReplica"]
        owned.listen("InferenceReplica", self._replica_changed)
        self.pods = KindCache("Pod", self._pod_changed, owner=controlling_replica)
        self.watches = Watches()
        self.workers = workers
        self.backoff = backoff or Backoff()
        self._queue: WorkQueue | None = None
        self.passes: Workers | None = None
        self._terminating: set[str] = set()
        self._starter: asyncio.Task[None] | None = None
        #: Per InferenceReplica, the pods it created that the watch has not shown yet:
        #: name -> (the created pod, until when it counts). Only the event loop touches it.
        self._expected: dict[Key, dict[str, tuple[dict[str, Any], float]]] = {}
        #: Per InferenceReplica, the last pod create the API server refused, until one succeeds.
        self.refusals = Refusals()

    @property
    def queue(self) -> WorkQueue:
        if self._queue is None:
            self._queue = WorkQueue(self.backoff, name="inferencereplica", metrics=self.metrics)
        return self._queue

    # -- feeding -------------------------------------------------------------------------------

    def _replica_changed(
        self, namespace: str, isvc: str, obj: Mapping[str, Any], deleted: bool
    ) -> None:
        if self.passes is None:
            return  # not started (a follower): start() passes over every InferenceReplica
        key = object_key(obj)
        if deleted:
            self.queue.forget(key)
            self.refusals.forget(key)
            if not any(k[0] == namespace for k in self.replicas.keys()):
                self._terminating.discard(namespace)
        else:
            self.queue.add(key)

    def _pod_changed(
        self, namespace: str, replica: str, obj: Mapping[str, Any], deleted: bool
    ) -> None:
        if self.replicas.named(namespace, replica) is not None:
            self.queue.add((namespace, replica))

    # -- running -------------------------------------------------------------------------------

    def start(
        self,
        api_factory: Callable[[], KubeApi],
        namespaces: tuple[str | None, ...],
        replicas_synced: asyncio.Event,
    ) -> None:
        """Watch the pods; once they and the InferenceReplicas are listed, pass over every
        InferenceReplica (listings report no change), then follow changes. Once only."""
        if self.passes is not None:
            return
        self.watches.start(
            api_factory,
            [Watched(resource_named("Pod"), self.pods, label_selector=POD_SELECTOR)],
            namespaces,
            retry_delay=self.backoff.delay,
            on_failure=self.metrics.record_watch_failure if self.metrics is not None else None,
        )
        ready = asyncio.Event()

        async def when_listed() -> None:
            await replicas_synced.wait()
            await self.watches.synced.wait()
            for key in self.replicas.keys():
                self.queue.add(key)
            ready.set()

        self._starter = asyncio.create_task(when_listed())
        self.passes = Workers(
            self.queue,
            lambda key: self.process(key),
            what="InferenceReplica",
            fields=lambda key: {"namespace": key[0], "inferenceReplica": key[1]},
            logger=logger,
        )
        self.passes.start(self.workers, ready)

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        if self._starter is not None:
            self._starter.cancel()
        if self.passes is not None:
            await self.passes.stop(drain)
        await self.watches.stop()

    async def process(self, key: Key) -> bool:
        """One pass over an InferenceReplica; True when it must be retried with backoff."""
        replica = self.replicas.named(*key)
        if replica is None or key[0] in self._terminating:
            return False
        if (replica.get("metadata") or {}).get("deletionTimestamp") or self._owner_going(replica):
            return False  # the garbage collector removes its pods
        pods = self._pods_of(key)
        try:
            plan = plan_instances(replica, pods, now=now(), refused=self.refusals.message(key))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            # Hand-edited beyond what its schema checks (a template that is not a pod's): the
            # InferenceService controller writes it back; its change brings the next pass.
            logger.error(
                "InferenceReplica cannot be planned; waiting for it to change",
                extra={
                    "namespace": key[0],
                    "inferenceReplica": key[1],
                    "error": f"{type(exc).__name__}: {exc}",
                },
            )
            return False
        wait = self.refusals.wait(key, replica)
        if wait is not None:  # refused before and nothing changed: no create until it is due
            plan = replace(plan, create=())
            self.queue.add_after(key, wait)
        written = _Written()
        orphans = self._orphans(key, plan)
        failed = await asyncio.to_thread(self._write, key, replica, plan, orphans, written, pods)
        delay = self.refusals.answered(key, replica, bool(written.created), written.refused)
        if delay is not None:  # refused: tried again when due (or at once on a new spec)
            self.queue.add_after(key, delay)
        self._took(key, written)
        if self.metrics is not None:
            self.metrics.record_replica_pass(failed)
        return failed

    def _pods_of(self, key: Key) -> list[Mapping[str, Any]]:
        """The pods of an InferenceReplica as the watch shows them, and those this controller
        created that the watch has not shown yet (for ``EXPECTATION_SECONDS``)."""
        seen = self.pods.owned_by(*key)
        expected = self._expected.get(key, {})
        clock = time.monotonic()
        for name in [n for n, (_, until) in expected.items() if n in seen or until < clock]:
            del expected[name]
        if not expected:
            self._expected.pop(key, None)
        return [*seen.values(), *(body for body, _ in expected.values())]

    def _owner_going(self, replica: Mapping[str, Any]) -> bool:
        """Whether the InferenceService that controls ``replica`` is gone or being deleted: the
        garbage collector then removes the replica and its pods, and a pass would only race it
        (its pods' deletions may arrive before the replica's). A replica orphaned on purpose
        (``--cascade=orphan``) has no such reference, and is kept."""
        meta = replica.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "InferenceService":
                owner = self._inference_services((meta.get("namespace"), ref.get("name")))
                return gone_or_going(owner, ref.get("uid"))
        return False

    def _orphans(self, key: Key, plan: InstancePlan) -> dict[str, dict[str, Any]]:
        """The pods ``plan`` would create that the watch shows orphaned for this replica."""
        found: dict[str, dict[str, Any]] = {}
        replica: Mapping[str, Any] | None = None
        for pod in plan.create:
            name = pod["metadata"]["name"]
            held = self.pods.named(key[0], name)
            if held is not None:
                replica = replica or self.replicas.named(*key) or {}
                if orphaned_for(held, replica):
                    found[name] = held
        return found

    def _took(self, key: Key, written: _Written) -> None:
        """After a pass, on the event loop: what its writes answered goes to the caches."""
        if written.created:
            until = time.monotonic() + EXPECTATION_SECONDS
            expected = self._expected.setdefault(key, {})
            for pod in written.created:
                expected[pod["metadata"]["name"]] = (pod, until)
            # Should the watch never show them (created and deleted between two listings),
            # a pass after the expectations end looks again.
            self.queue.add_after(key, EXPECTATION_SECONDS)
        for pod in written.patched:
            self.pods.wrote(pod)
        if written.status is not None:
            # The InferenceService controller mirrors this status: it is told here too.
            self.owned.wrote(written.status, by=self._replica_changed)

    def _write(
        self,
        key: Key,
        replica: Mapping[str, Any],
        plan: InstancePlan,
        orphans: Mapping[str, Mapping[str, Any]],
        written: _Written,
        pods: list[Mapping[str, Any]],
    ) -> bool:
        """The pass's writes, in a worker thread; ``written`` collects the answers."""
        api = self.api_factory()
        try:
            if orphans:
                recheck_owner(api, replica)
            self._write_pods(api, replica, plan, orphans, written)
            for name, serving in plan.serving:
                self._set_serving(api, replica, name, serving, written)
            status = plan.status
            if written.refused is not None:  # a create refused: the status names it
                status = plan_instances(replica, pods, now=now(), refused=written.refused).status
            written.status = apply_status(api, replica, status)
        except OwnerGoing:  # its deletion event ends this; its orphans stay orphans
            logger.info(
                "InferenceReplica is being deleted; its pods are not adopted",
                extra={"namespace": key[0], "inferenceReplica": key[1]},
            )
            return False
        except NotLeading:  # nothing sent; the next leader's pass does this one
            return True
        except NamespaceTerminating:
            self._terminating.add(key[0])  # its InferenceReplicas go with it
            return False
        except ApiError as exc:
            logger.error(
                "Failed to write InferenceReplica Instances",
                extra={
                    "namespace": key[0],
                    "inferenceReplica": key[1],
                    "error": str(exc),
                    "status": exc.status,
                },
            )
            return True
        return False

    def _write_pods(
        self,
        api: KubeApi,
        replica: Mapping[str, Any],
        plan: InstancePlan,
        orphans: Mapping[str, Mapping[str, Any]],
        written: _Written,
    ) -> None:
        namespace = (replica.get("metadata") or {}).get("namespace")
        created, adopted, deleted = [], [], []
        try:
            for pod in plan.create:
                orphan = orphans.get(pod["metadata"]["name"])
                if orphan is not None:
                    written.patched.append(adopt(api, orphan, replica))
                    adopted.append(pod["metadata"]["name"])
                    continue
                try:
                    written.created.append(api.create(with_owner(pod, replica)))
                except AlreadyExists:
                    continue  # made before; the watch shows it soon
                except NamespaceTerminating:
                    raise  # its InferenceReplicas go with it
                except Refused as exc:  # told and tried again later (see the module)
                    written.refused = exc.message
                    break
                created.append(pod["metadata"]["name"])
            for ref in plan.delete:
                pod = pod_reference(namespace, ref.name)
                with contextlib.suppress(Conflict):  # that name is another pod now: not ours
                    api.delete(pod, uid=ref.uid)
                deleted.append(ref.name)
        finally:
            if created or adopted or deleted:
                logger.info(
                    "Instance pods written",
                    extra={
                        "namespace": namespace,
                        "inferenceReplica": (replica.get("metadata") or {}).get("name"),
                        "createdPods": created,
                        "adoptedPods": adopted,
                        "deletedPods": deleted,
                    },
                )

    def _set_serving(
        self,
        api: KubeApi,
        replica: Mapping[str, Any],
        name: str,
        serving: bool,
        written: _Written,
    ) -> None:
        namespace = (replica.get("metadata") or {}).get("namespace")
        with contextlib.suppress(NotFound):  # gone meanwhile
            written.patched.append(set_serving(api, pod_reference(namespace, name), serving))


@dataclass
class _Written:
    """What one pass's writes answered: pods created and patched, the status, a refusal."""

    created: list[dict[str, Any]] = field(default_factory=list)
    patched: list[dict[str, Any]] = field(default_factory=list)
    status: dict[str, Any] | None = None
    refused: str | None = None
