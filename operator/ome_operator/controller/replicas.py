"""The InferenceReplica controller, an instance of the controller runtime (``runtime``): it
keeps each InferenceReplica's Instances (docs/reference/workloads.md).

Its declaration (``ReplicaController.declaration``): it is for the InferenceReplicas of the
InferenceService controller's cache, owns the OMENative pods, watched by a watch of its own
(label ``ome.io/managed-by=OMENative``) and found by the InferenceReplica that controls them;
a pod change re-queues that InferenceReplica (an InferenceReplica change too, unless it echoes
this controller's own status write). An
InferenceReplica whose InferenceService is gone or being deleted gets no pass (the runtime's
owner rule). Each pass asks the pure core (``core.instances.plan_instances``) what to do, then
writes, in a worker thread: with gang placement, PodGroups created (``pod_group_writes``), pods
created (with an owner reference to the InferenceReplica), pods deleted (only the pod of that
uid), PodGroups deleted, the ``ome.io/serving`` condition of pods
(``pods/status``), and the InferenceReplica's status when it differs. A pod it would create
that exists already with no controller, labelled for this InferenceReplica and recording the
uid of its InferenceService (left behind by an InferenceReplica deleted with
``--cascade=orphan``, which the InferenceService controller then made again:
``core.ownership``), is adopted instead: its owner reference set, after a read of the
InferenceReplica itself shows it is not being deleted. Every answer goes to the record of the
operator's writes (``write_record``): a pod it created counts as there until the watch shows
it (``EXPECTATION_SECONDS`` at most), so a pass in between does not create it again; a create
refused because the pod exists, or a delete of a pod gone or replaced, is no failure: pod names
are the Instances' identity, so no pod is ever made twice. Other failures come back with
backoff; a refused pod create is told (``PodsRefused``) and tried again when
``refusals.Refusals`` says it is due.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.applying import apply_status
from ..cluster.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    NamespaceTerminating,
    NotFound,
    Refused,
)
from ..cluster.resources import resource_named
from ..core.instances import InstancePlan, plan_instances
from ..core.ownership import orphaned_for
from ..core.rendering.metadata import MANAGED_BY
from ..metrics import Metrics
from ..models.object_metadata import (
    Key,
    controller_reference,
    object_key,
    with_owner,
)
from .owned import KindCache, OwnedObjects
from .pod_group_writes import PodGroupWrites
from .pod_writes import adopt, pod_reference, set_serving
from .queue import Backoff, WorkQueue
from .refusals import Refusals
from .runtime import (
    DONE,
    DRAIN_SECONDS,
    RETRY,
    ControllerRuntime,
    ControllerSpec,
    OwnerGoing,
    Result,
    Trigger,
    recheck_owner,
)
from .watches import Listeners, Watched, Watches
from .write_record import EXPECTATION_SECONDS
from .writing import now

__all__ = ["BY", "EXPECTATION_SECONDS", "POD_SELECTOR", "ReplicaController", "controlling_replica"]

logger = logging.getLogger("ome_operator.replicas")

#: Who this controller's writes are by, in the record.
BY = "inferencereplica"
#: The pods this controller watches: the ones it makes.
POD_SELECTOR = ",".join(f"{key}={value}" for key, value in MANAGED_BY.items())


def controlling_replica(pod: Mapping[str, Any]) -> str | None:
    """The name of the InferenceReplica that controls ``pod`` (its controller reference)."""
    ref = controller_reference(pod)
    return ref.get("name") if ref is not None and ref.get("kind") == "InferenceReplica" else None


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
        self.owned, self.record = owned, owned.record
        self.replicas: KindCache = owned.caches["InferenceReplica"]
        self._pods_changed = Listeners()
        self.pods = KindCache(
            "Pod", self._pods_changed, owner=controlling_replica, record=self.record
        )
        #: The gang PodGroups of multi-pod Instances; a change re-queues their InferenceReplica
        #: as a pod's does (the scheduler's verdict is in their status).
        self.pod_groups = KindCache(
            "PodGroup", self._pods_changed, owner=controlling_replica, record=self.record
        )
        #: Multi-pod Instances are placed as gangs (set before start(): the cluster serves
        #: PodGroups and ``--gang-placement=off`` is not given).
        self.gang_placement = False
        self.watches = Watches()
        self.workers = workers
        self.backoff = backoff or Backoff()
        #: Per InferenceReplica, the last pod create the API server refused, until one succeeds.
        self.refusals = Refusals()
        self.runtime = ControllerRuntime(
            self.declaration(owned),
            self.reconcile,
            logger=logger,
            backoff=self.backoff,
            metrics=metrics,
            following=True,  # until start(): then every InferenceReplica gets a pass
        )

    def declaration(self, owned: OwnedObjects) -> ControllerSpec:
        """What this controller is for, what it owns, with the keys each change re-queues."""
        owned.listen("InferenceReplica", self._replica_changed)
        return ControllerSpec(
            kind="InferenceReplica",
            key_field="inferenceReplica",
            read=lambda key: self.replicas.named(*key),
            keys=self.replicas.keys,
            adopts="pods",
            owns=(Trigger("Pod", self._pods_changed.subscribe, self._pod_owner),),
            owner_kind="InferenceService",
            owner=self._inference_services,
        )

    @property
    def queue(self) -> WorkQueue:
        return self.runtime.queue

    # -- feeding -------------------------------------------------------------------------------

    def _replica_changed(
        self, namespace: str, isvc: str, obj: Mapping[str, Any], deleted: bool
    ) -> None:
        key = object_key(obj)
        if deleted:
            self.refusals.forget(key)
            self.runtime.gone(key)
        elif not self.record.is_echo(obj, BY):
            self.runtime.enqueue(key)

    def _pod_owner(
        self, namespace: str, replica: str, obj: Mapping[str, Any], deleted: bool
    ) -> list[Key]:
        """A pod changed: its InferenceReplica. Echoes of this controller's own writes too: the
        status of the pass that created a pod did not count it yet."""
        return [(namespace, replica)] if self.replicas.named(namespace, replica) else []

    # -- running -------------------------------------------------------------------------------

    def start(
        self,
        api_factory: Callable[[], KubeApi],
        namespaces: tuple[str | None, ...],
        replicas_synced: asyncio.Event,
    ) -> None:
        """Watch the pods; once they and the InferenceReplicas are listed, pass over every
        InferenceReplica (listings report no change), then follow changes. Once only."""
        if self.runtime.working:
            return
        watched = [Watched(resource_named("Pod"), self.pods, label_selector=POD_SELECTOR)]
        if self.gang_placement:
            watched.append(
                Watched(resource_named("PodGroup"), self.pod_groups, label_selector=POD_SELECTOR)
            )
        self.watches.start(
            api_factory,
            watched,
            namespaces,
            retry_delay=self.backoff.delay,
            on_failure=self.metrics.record_watch_failure if self.metrics is not None else None,
        )
        self.runtime.work(self.workers, replicas_synced, self.watches.synced)

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        await self.runtime.stop(drain)
        await self.watches.stop()

    async def process(self, key: Key) -> Result:
        """One pass over an InferenceReplica, as the runtime's workers run it."""
        return await self.runtime.process(key)

    async def reconcile(self, key: Key, replica: Mapping[str, Any]) -> Result:
        """One pass over an InferenceReplica (the runtime's reconciler)."""
        pods = list(self.pods.owned_by(*key).values())
        groups = list(self.pod_groups.owned_by(*key).values()) if self.gang_placement else None
        try:
            plan = plan_instances(
                replica, pods, now=now(), refused=self.refusals.message(key), pod_groups=groups
            )
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
            return DONE
        wait = self.refusals.wait(key, replica)
        if wait is not None:  # refused before and nothing changed: no create until it is due
            plan = replace(plan, create=(), create_groups=())
        written = _Written()
        orphans = self._orphans(key, replica, plan)
        failed = True
        try:
            await asyncio.to_thread(
                self._write, key, replica, plan, orphans, written, (pods, groups)
            )
            failed = False
        except (NamespaceTerminating, OwnerGoing):
            failed = False
            raise  # the runtime's rules
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
        finally:
            if self.metrics is not None:
                self.metrics.record_replica_pass(failed)
        if written.status is not None:
            self.owned.tell(written.status)
        due = self.refusals.answered(key, replica, written.created, written.refused)
        return _next_pass(failed, wait, due, written.created)

    def _orphans(
        self, key: Key, replica: Mapping[str, Any], plan: InstancePlan
    ) -> dict[str, dict[str, Any]]:
        """The pods ``plan`` would create that the watch shows orphaned for this replica."""
        found: dict[str, dict[str, Any]] = {}
        for pod in plan.create:
            name = pod["metadata"]["name"]
            held = self.pods.named(key[0], name)
            if held is not None and orphaned_for(held, replica):
                found[name] = held
        return found

    def _write(
        self,
        key: Key,
        replica: Mapping[str, Any],
        plan: InstancePlan,
        orphans: Mapping[str, Mapping[str, Any]],
        written: _Written,
        found: tuple[list[Mapping[str, Any]], list[Mapping[str, Any]] | None],
    ) -> None:
        """The pass's writes, in a worker thread; ``written`` collects what they answered, and
        the record every answer. ``found``: the pods and PodGroups the pass was planned on."""
        api = self.api_factory()
        if orphans:
            recheck_owner(api, replica)
        self._write_pods(api, replica, plan, orphans, written)
        for name, serving in plan.serving:
            with contextlib.suppress(NotFound):  # gone meanwhile
                self._wrote(set_serving(api, pod_reference(key[0], name), serving))
        status = plan.status
        if written.refused is not None:  # a create refused: the status names it
            pods, groups = found
            again = plan_instances(
                replica, pods, now=now(), refused=written.refused, pod_groups=groups
            )
            status = again.status
        written.status = apply_status(api, replica, status)
        if written.status is not None:
            self._wrote(written.status)

    def _wrote(self, answer: Mapping[str, Any], *, created: bool = False) -> None:
        self.record.wrote(BY, answer, created=created)

    def _write_pods(
        self,
        api: KubeApi,
        replica: Mapping[str, Any],
        plan: InstancePlan,
        orphans: Mapping[str, Mapping[str, Any]],
        written: _Written,
    ) -> None:
        namespace, name = object_key(replica)
        created, adopted, deleted = [], [], []
        groups = PodGroupWrites(api, namespace, lambda answer: self._wrote(answer, created=True))
        try:
            written.refused = groups.create(replica, plan.create_groups)
            if written.refused is not None:
                return  # no pod is created without the group it joins
            for pod in plan.create:
                orphan = orphans.get(pod["metadata"]["name"])
                if orphan is not None:
                    # Its own from now on, though the watch shows it without an owner yet.
                    self._wrote(adopt(api, orphan, replica), created=True)
                    adopted.append(pod["metadata"]["name"])
                    continue
                try:
                    self._wrote(api.create(with_owner(pod, replica)), created=True)
                except AlreadyExists:
                    continue  # made before; the watch shows it soon
                except NamespaceTerminating:
                    raise  # its InferenceReplicas go with it
                except Refused as exc:  # told and tried again later (see the module)
                    written.refused = exc.message
                    break
                created.append(pod["metadata"]["name"])
            for ref in plan.delete:
                with contextlib.suppress(Conflict):  # that name is another pod now: not ours
                    api.delete(pod_reference(namespace, ref.name), uid=ref.uid)
                deleted.append(ref.name)
            groups.delete(plan.delete_groups)
        finally:
            written.created = bool(created or groups.created)
            if created or adopted or deleted or groups.created or groups.deleted:
                logger.info(
                    "Instance pods written",
                    extra={
                        "namespace": namespace,
                        "inferenceReplica": name,
                        "createdPods": created,
                        "adoptedPods": adopted,
                        "deletedPods": deleted,
                        "createdPodGroups": groups.created,
                        "deletedPodGroups": groups.deleted,
                    },
                )


def _next_pass(failed: bool, wait: float | None, due: float | None, created: bool) -> Result:
    """After a pass: a retry with backoff when it failed; else another pass when a refused
    create is due again (or at once on a new spec), or, after creates, once the expectations
    end (should the watch never show the pods: created and deleted between two listings)."""
    if failed:
        return RETRY
    delays = [d for d in (wait, due, EXPECTATION_SECONDS if created else None) if d is not None]
    return Result(after=min(delays)) if delays else DONE


@dataclass
class _Written:
    """What one pass's writes answered: whether pods were created, the refusal of a create,
    and the status written."""

    created: bool = False
    refused: str | None = None
    #: The InferenceReplica as its status write left it (None: not written).
    status: dict[str, Any] | None = None
