"""Gang placement of multi-pod Instances (docs/reference/workloads.md, Gang placement), pure.

Where the cluster serves Kubernetes' PodGroup API (``scheduling.k8s.io/v1alpha2``) and the
operator places gangs, every incarnation of a multi-pod Instance has a PodGroup of its own
(``pod_group_name``: the Instance's index and incarnation) whose gang policy's ``minCount`` is
the Instance's pod count, and its pods join it (``spec.schedulingGroup``): the scheduler binds
all of them together or none. A PodGroup is created before the first pod that joins it (a pod
whose group does not exist waits), and deleted once its incarnation is no longer the Instance's
(recreated as a unit, or scaled away). An Instance the scheduler cannot place whole says so:
``WaitingForGang``, with the scheduler's own reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...models.object_metadata import annotations_of, metadata_of
from ..pod_health import Cause, find_condition
from ..rendering.inference_replicas import TOPOLOGY_ANNOTATION
from ..rendering.metadata import MANAGED_BY, OWNER_LABEL, sorted_map
from ..rendering.naming import pod_group_name
from .observed import ObservedPod
from .status import InstanceState, inference_service_of

__all__ = [
    "POD_GROUP_API_VERSION",
    "SCHEDULED",
    "TOPOLOGY_ANNOTATION",
    "WAITING_FOR_GANG",
    "GangWrites",
    "ObservedGroup",
    "Waiting",
    "gang_cause",
    "group_name",
    "in_a_gang",
    "plan_gangs",
    "render_pod_group",
    "topology_problem",
]

POD_GROUP_API_VERSION = "scheduling.k8s.io/v1alpha2"
#: The condition the scheduler sets on a PodGroup after each attempt to place it.
SCHEDULED = "PodGroupScheduled"
#: The reason of an Instance whose gang the scheduler cannot place whole.
WAITING_FOR_GANG = "WaitingForGang"


_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def topology_problem(annotations: Mapping[str, str]) -> str:
    """Why the InferenceService's ``ome.io/gang-topology-key`` is no node label key; "" when
    it is one (or is not set)."""
    key = annotations.get(TOPOLOGY_ANNOTATION)
    if key is None:
        return ""
    prefix, _, name = key.rpartition("/")
    if _LABEL_NAME.match(name) and (
        not prefix or (len(prefix) <= 253 and _DNS_SUBDOMAIN.match(prefix))
    ):
        return ""
    return (
        f"metadata.annotations[{TOPOLOGY_ANNOTATION}] must be a node label key, such as "
        f'topology.kubernetes.io/zone (got "{key}")'
    )


def _identity(replica: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """The InferenceService, component and namespace of ``replica``'s Instances."""
    spec = replica.get("spec") or {}
    component = str(spec.get("component", ""))
    return inference_service_of(replica), component, metadata_of(replica).get("namespace")


def group_name(replica: Mapping[str, Any], index: int, incarnation: int) -> str:
    """The PodGroup of ``replica``'s Instance ``index`` in its ``incarnation``."""
    isvc, component, _ = _identity(replica)
    return pod_group_name(isvc, component, index, incarnation)


def render_pod_group(
    replica: Mapping[str, Any], index: int, incarnation: int, size: int
) -> dict[str, Any]:
    """The gang PodGroup of Instance ``index`` (``size`` pods) in its ``incarnation``; no
    owner reference (the edge sets the InferenceReplica's). A standalone group: no Workload."""
    isvc, component, namespace = _identity(replica)
    metadata: dict[str, Any] = {"name": pod_group_name(isvc, component, index, incarnation)}
    if namespace:
        metadata["namespace"] = namespace
    metadata["labels"] = sorted_map(
        {
            OWNER_LABEL: isvc,
            "component": component,
            **MANAGED_BY,
            "ome.io/instance-index": str(index),
            "ome.io/instance-incarnation": str(incarnation),
        }
    )
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": size}}}
    key = annotations_of(replica).get(TOPOLOGY_ANNOTATION)
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {
        "apiVersion": POD_GROUP_API_VERSION,
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
    }


@dataclass(frozen=True)
class ObservedGroup:
    """A PodGroup of the InferenceReplica as the watch shows it."""

    name: str
    uid: str
    terminating: bool
    #: Its ``PodGroupScheduled`` condition: (status, reason, message); None before the
    #: scheduler's first attempt.
    scheduled: tuple[str, str, str] | None

    @classmethod
    def of(cls, group: Mapping[str, Any]) -> ObservedGroup:
        meta = metadata_of(group)
        conditions = (group.get("status") or {}).get("conditions") or []
        found = find_condition([c for c in conditions if isinstance(c, Mapping)], SCHEDULED)
        said = None
        if found is not None:
            said = tuple(str(found.get(k) or "") for k in ("status", "reason", "message"))
        return cls(
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            terminating=bool(meta.get("deletionTimestamp")),
            scheduled=said,  # type: ignore[arg-type]
        )

    @property
    def unschedulable(self) -> str | None:
        """The scheduler's reason it cannot place the group whole, None when it has not said
        so (not tried yet, or placed)."""
        if self.scheduled is None or self.scheduled[:2] != ("False", "Unschedulable"):
            return None
        return self.scheduled[2] or "the scheduler gives no message"


@dataclass(frozen=True)
class Waiting:
    """An Instance whose gang the scheduler cannot place: its index, pod count and reason."""

    index: int
    pods: int
    reason: str


@dataclass(frozen=True)
class GangWrites:
    """What one pass writes of the PodGroups, and the Instances that wait for their gang."""

    create: tuple[dict[str, Any], ...] = ()
    #: (name, uid) of each PodGroup to delete.
    delete: tuple[tuple[str, str], ...] = ()
    waiting: tuple[Waiting, ...] = ()


def in_a_gang(pod: ObservedPod) -> bool:
    """A pod its gang speaks for: it joined a PodGroup and is not bound yet (the scheduler
    places it with the others, and says why not on the group)."""
    return pod.group is not None and not pod.bound


def plan_gangs(
    replica: Mapping[str, Any],
    states: Sequence[InstanceState],
    pods: Mapping[int, Sequence[ObservedPod]],
    created: Sequence[Mapping[str, Any]],
    groups: Iterable[Mapping[str, Any]],
) -> GangWrites:
    """The PodGroups of one pass: each group a pod joins (one this pass ``created`` or one that
    exists) is created when it does not exist; a group of no Instance's current incarnation is
    deleted; an Instance whose group the scheduler cannot place, with a pod not bound, waits."""
    found = {group.name: group for group in map(ObservedGroup.of, groups)}
    joined = {_joins(pod) for pod in created} | {
        p.group for listed in pods.values() for p in listed if not p.terminating
    }
    create, keep, waiting = [], set(), []
    for state in (s for s in states if s.active):
        name = group_name(replica, state.index, state.incarnation)
        keep.add(name)
        if name in joined and name not in found:
            create.append(render_pod_group(replica, state.index, state.incarnation, state.pods))
        members = [p for p in pods.get(state.index, ()) if p.group == name and not p.terminating]
        placed = len(members) == state.pods and all(p.bound for p in members)
        reason = _reason(found[name].unschedulable if name in found else None, members)
        if reason is not None and not placed:
            waiting.append(Waiting(state.index, state.pods, reason))
    delete = [(g.name, g.uid) for g in found.values() if g.name not in keep and not g.terminating]
    return GangWrites(tuple(create), tuple(sorted(delete)), tuple(waiting))


#: How the scheduler begins its message on a pod of a gang it could not place that itself fit:
#: it waited for the others (no reason of its own).
_GANG_WAIT = "pod group is unschedulable"


def _reason(group_said: str | None, members: Sequence[ObservedPod]) -> str | None:
    """Why the scheduler could not place a gang, None when it has not said so: what it says of
    the first of its pods that fits no node (the nodes it lacks), else of the group (``0/1
    placements are available, first placement status: pod group is unschedulable``). A pod
    that only waited for the others tells nothing of its own."""
    said = [p.unschedulable for p in members if p.unschedulable is not None]
    own = [reason for reason in said if not reason.startswith(_GANG_WAIT)]
    return own[0] if own else group_said


def _joins(pod: Mapping[str, Any]) -> str | None:
    """The PodGroup a rendered pod joins, if any."""
    return ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")


def gang_cause(waiting: Sequence[Waiting]) -> Cause | None:
    """``Instance <i> needs <n> pods placed together: <the scheduler's reason>`` for the lowest
    index waiting (``WaitingForGang``), then ``(Instances <j>, <k> wait too)`` for the others."""
    if not waiting:
        return None
    first, *others = sorted(waiting, key=lambda w: w.index)
    message = f"Instance {first.index} needs {first.pods} pods placed together: {first.reason}"
    if len(others) == 1:
        message += f" (Instance {others[0].index} waits too)"
    elif others:
        message += f" (Instances {', '.join(str(w.index) for w in others)} wait too)"
    return Cause(WAITING_FOR_GANG, message)
