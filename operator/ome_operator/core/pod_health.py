"""Whether a pod serves, and why the pods of a component do not: read from the pods alone.

A pod serves while its own ``Ready`` condition says so, the operator's ``ome.io/serving``
readiness gate aside (that gate is this operator's output, so it cannot be an input): ``Ready``
True, or False only because readiness gates are not True, while its containers are ready and
every gate but the operator's is True. A node that stops answering gets its pods' ``Ready``
turned False by the node lifecycle controller, with their ``ContainersReady`` left True: such a
pod stops serving at once, and that is the ``NodeLost`` signature (a kubelet never sets
``Ready`` False without a reason of its own).

A component that does not serve is explained by the most blocking cause among its pods
(``CAUSES``, in order): pods the API server refuses to create (Pod Security or another admission
policy: nothing can run until that changes), an Instance whose gang the scheduler cannot place
whole (``instances.gangs``: its PodGroup says why), pods the scheduler cannot place (an Instance
placed in part holds its accelerators idle, and says how many), images that cannot be pulled,
containers in a crash loop, nodes that do not answer. A refused create leaves no pod to read: it
is told by the workload (a Deployment's ``ReplicaFailure``) or by the writer that was refused
(the InferenceReplica controller, for OMENative pods).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..models.object_metadata import labels_of, metadata_of
from .rendering.instance_pods import SERVING_GATE

__all__ = [
    "CAUSES",
    "Cause",
    "instance_of",
    "pod_serves",
    "pods_cause",
    "refused_cause",
    "scheduler_reason",
    "workload_cause",
]

#: The reasons a component's condition takes from its pods, most blocking first.
CAUSES = (
    "PodsRefused",
    "WaitingForGang",
    "PodsUnschedulable",
    "ImagePullFailed",
    "CrashLoopBackOff",
    "NodeLost",
)

#: Container waiting reasons of an image that cannot be pulled (the kubelet's).
_PULL_FAILURES = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "RegistryUnavailable",
        "SignatureValidationFailed",
    }
)
#: ``Ready`` reasons a kubelet writes; a False ``Ready`` with none of them was set by the node
#: lifecycle controller (it changes only the status).
_KUBELET_READY_REASONS = frozenset(
    {
        "ContainersNotReady",
        "ReadinessGatesNotReady",
        "PodCompleted",
        "PodFailed",
        "UnknownContainerStatuses",
        "ContainersNotInitialized",
    }
)
_FINISHED = frozenset({"Failed", "Succeeded"})
#: Labels naming the Instance a pod belongs to: OMENative's, then LeaderWorkerSet's group.
_INSTANCE_LABELS = ("ome.io/instance-index", "leaderworkerset.sigs.k8s.io/group-index")
_MODEL_LABEL = re.compile(r"^models\.ome\.io/(?:clusterbasemodel|[^.]+\.basemodel)\.(.+)$")
_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
#: Extended resources that are accelerators: GPUs, TPUs, Gaudi and Neuron devices.
_ACCELERATOR = re.compile(
    r"^[^/]+/(?:gpu|tpu|gaudi|neuron|neuroncore|neurondevice)$|^gpu\.intel\.com/"
)


@dataclass(frozen=True)
class Cause:
    """Why pods do not serve: a condition reason and its message."""

    reason: str
    message: str

    @property
    def rank(self) -> int:
        return CAUSES.index(self.reason)


def find_condition(conditions: Iterable[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    """The condition of type ``kind`` (the one rule ``conditions`` also uses)."""
    return next((c for c in conditions if c.get("type") == kind), None)


def _conditions(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = (pod.get("status") or {}).get("conditions")
    return [c for c in found if isinstance(c, Mapping)] if isinstance(found, list) else []


def _true(conditions: Sequence[Mapping[str, Any]], kind: str) -> bool:
    return (find_condition(conditions, kind) or {}).get("status") == "True"


def _gates(pod: Mapping[str, Any]) -> list[str]:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    return [g.get("conditionType") for g in gates if isinstance(g, Mapping)]


def _name(pod: Mapping[str, Any]) -> str:
    return str(metadata_of(pod).get("name") or "")


def pod_serves(pod: Mapping[str, Any]) -> bool:
    """Whether ``pod`` serves, as its own ``Ready`` condition says, the operator's gate aside
    (see the module). A pod no kubelet has judged yet (no ``Ready``) goes by its containers."""
    if metadata_of(pod).get("deletionTimestamp"):
        return False
    if (pod.get("status") or {}).get("phase") in _FINISHED:
        return False
    conditions = _conditions(pod)
    if not _true(conditions, "ContainersReady"):
        return False
    ready = find_condition(conditions, "Ready")
    if ready is None or ready.get("status") == "True":
        return True
    if ready.get("reason") != "ReadinessGatesNotReady":
        return False
    return all(_true(conditions, g) for g in _gates(pod) if g != SERVING_GATE)


def instance_of(pod: Mapping[str, Any]) -> str:
    """The Instance ``pod`` belongs to: its OMENative index or LeaderWorkerSet group, else
    the pod itself (a Deployment's pod is an Instance of one)."""
    labels = labels_of(pod)
    for label in _INSTANCE_LABELS:
        if isinstance(labels.get(label), str):
            return labels[label]
    return _name(pod)


def refused_cause(server_text: str) -> Cause:
    """Pods the API server refused to create, with its answer (``pods "x" is forbidden: …``)."""
    return Cause("PodsRefused", f"pods cannot be created: {server_text}")


def workload_cause(
    workload: Mapping[str, Any] | None,
    pods: Iterable[Mapping[str, Any]],
    *,
    instance: Callable[[Mapping[str, Any]], str] = instance_of,
) -> Cause | None:
    """The most blocking reason a workload's component does not serve: its pod creates refused
    (a Deployment's ``ReplicaFailure`` True with reason ``FailedCreate``, which the Deployment
    controller copies from its ReplicaSet with the API server's answer), else ``pods_cause``."""
    found = ((workload or {}).get("status") or {}).get("conditions")
    conditions = [c for c in found if isinstance(c, Mapping)] if isinstance(found, list) else []
    failure = find_condition(conditions, "ReplicaFailure")
    if (
        (workload or {}).get("kind") == "Deployment"
        and failure is not None
        and failure.get("status") == "True"
        and failure.get("reason") == "FailedCreate"
    ):
        return refused_cause(str(failure.get("message") or "the server gives no message"))
    return pods_cause(pods, instance=instance)


def pods_cause(
    pods: Iterable[Mapping[str, Any]], *, instance: Callable[[Mapping[str, Any]], str] = instance_of
) -> Cause | None:
    """The most blocking reason the live ``pods`` of one component do not serve, or None."""
    live = sorted((p for p in pods if not metadata_of(p).get("deletionTimestamp")), key=_name)
    found = [c for c in (_unschedulable(live, instance), *map(_pod_cause, live)) if c]
    return min(found, key=lambda c: c.rank) if found else None


def _pod_cause(pod: Mapping[str, Any]) -> Cause | None:
    """A bound pod's own cause: image pull, crash loop, lost node (that order)."""
    status = pod.get("status") or {}
    statuses = [
        s
        for key in ("initContainerStatuses", "containerStatuses")
        for s in status.get(key) or []
        if isinstance(s, Mapping)
    ]
    for found in statuses:
        waiting = (found.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _PULL_FAILURES:
            detail = ": ".join(str(x) for x in (waiting["reason"], waiting.get("message")) if x)
            message = f"{_name(pod)}: cannot pull image {found.get('image')}: {detail}"
            return Cause("ImagePullFailed", message)
    for found in statuses:
        if ((found.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff":
            return Cause("CrashLoopBackOff", _crash_message(pod, found))
    return _node_lost(pod)


def _crash_message(pod: Mapping[str, Any], found: Mapping[str, Any]) -> str:
    last = (found.get("lastState") or {}).get("terminated") or {}
    detail = f"restarted {found.get('restartCount', 0)} times"
    if "exitCode" in last:
        detail += f", last exit code {last['exitCode']}"
    if last.get("reason") == "OOMKilled":
        detail += ", OOMKilled"
    return f"{_name(pod)}: container {found.get('name')} is in CrashLoopBackOff ({detail})"


def _node_lost(pod: Mapping[str, Any]) -> Cause | None:
    conditions = _conditions(pod)
    ready = find_condition(conditions, "Ready")
    if (
        ready is None
        or ready.get("status") == "True"
        or ready.get("reason") in _KUBELET_READY_REASONS
        or not _true(conditions, "ContainersReady")
    ):
        return None
    node = (pod.get("spec") or {}).get("nodeName")
    return Cause("NodeLost", f"{_name(pod)}: node {node} does not answer (its pods are not ready)")


def _scheduler_message(pod: Mapping[str, Any]) -> str | None:
    """The scheduler's message of a pod it cannot place, None for a pod placed or not tried."""
    if (pod.get("spec") or {}).get("nodeName"):
        return None
    scheduled = find_condition(_conditions(pod), "PodScheduled") or {}
    if scheduled.get("status") != "False" or scheduled.get("reason") != "Unschedulable":
        return None
    return str(scheduled.get("message") or "the scheduler gives no message")


def scheduler_reason(pod: Mapping[str, Any]) -> str | None:
    """Why the scheduler cannot place ``pod``, in words when it lacks only a node with its
    model (``_in_words``); None for a pod placed or not tried."""
    said = _scheduler_message(pod)
    return None if said is None else _in_words(pod, said)


def _unschedulable(
    pods: Sequence[Mapping[str, Any]], instance: Callable[[Mapping[str, Any]], str]
) -> Cause | None:
    stuck = [(p, m) for p in pods if (m := _scheduler_message(p)) is not None]
    if not stuck:
        return None
    pod, said = stuck[0]
    message = f"{len(stuck)} of {len(pods)} pods cannot be scheduled: {_in_words(pod, said)}"
    part = _placed_in_part(pods, stuck, instance)
    if part:
        message += (" " if message.endswith(".") else "; ") + part
    return Cause("PodsUnschedulable", message)


def _in_words(pod: Mapping[str, Any], said: str) -> str:
    """The scheduler's message, or, when every node lacks only the model's label (the pod asks
    for nothing else of a node), that in words."""
    spec = pod.get("spec") or {}
    selector = spec.get("nodeSelector") or {}
    models = [(k, v) for k, v in selector.items() if _MODEL_LABEL.match(k)]
    only_model = len(models) == len(selector) == 1 and not (spec.get("affinity") or {}).get(
        "nodeAffinity"
    )
    counted = re.match(r"^0/(\d+) nodes are available: (\d+) " + re.escape(_AFFINITY), said)
    if not only_model or counted is None or counted[1] != counted[2]:
        return said
    label, value = models[0]
    model = _MODEL_LABEL.match(label)[1]  # type: ignore[index]
    return (
        f"no node has model {model} ready (node label {label}={value}); OME's model agent sets it"
    )


def _placed_in_part(
    pods: Sequence[Mapping[str, Any]],
    stuck: Sequence[tuple[Mapping[str, Any], str]],
    instance: Callable[[Mapping[str, Any]], str],
) -> str:
    """``Instance 0 placed in part, holding 8 accelerators idle`` for the Instances some pods
    of which are bound while others cannot be placed; empty when there is none."""
    waiting = {instance(p) for p, _ in stuck}
    bound = [p for p in pods if (p.get("spec") or {}).get("nodeName") and instance(p) in waiting]
    if not bound:
        return ""
    names = sorted({instance(p) for p in bound}, key=lambda i: (len(i), i))
    which = ("Instance " if len(names) == 1 else "Instances ") + ", ".join(names)
    held = sum(_accelerators(p) for p in bound)
    return f"{which} placed in part, holding {held} accelerators idle"


def _accelerators(pod: Mapping[str, Any]) -> int:
    """The accelerators (``_ACCELERATOR``: ``nvidia.com/gpu`` and the like) ``pod`` holds."""
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = (container or {}).get("resources") or {}
        asked = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
        total += sum(_count(v) for name, v in asked.items() if _ACCELERATOR.match(name))
    return total


def _count(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0
