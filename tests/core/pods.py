"""Pods as the scheduler, the kubelet and the node lifecycle controller leave them, for the
rules that read pods (``core/pod_health``, the InferenceReplica's status, a component's
condition). Each builder gives the whole pod one of them writes; the wording of the messages
is theirs (Kubernetes 1.31)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SERVING_GATE = "ome.io/serving"
MODEL_LABEL = "models.ome.io/clusterbasemodel.llama"
NODE = "gpu-node-1"

#: The scheduler, when no node has enough GPUs.
NO_GPU = (
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
    "available: 3 No preemption victims found for incoming pod."
)
#: The scheduler, when every node fails the pod's node selector.
NO_NODE_MATCHES = (
    "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. preemption: "
    "0/4 nodes are available: 4 Preemption is not helpful for scheduling."
)
#: The scheduler, when the selector fails some nodes and a taint the others.
SOME_NODES_MATCH = (
    "0/4 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, "
    "3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: "
    "4 Preemption is not helpful for scheduling."
)


def cond(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    """A pod condition; reason and message only when set."""
    found = {"type": kind, "status": status, "reason": reason, "message": message}
    return {k: v for k, v in found.items() if v}


#: What the kubelet writes of a pod whose containers are all ready.
SERVES = (
    cond("Initialized", "True"),
    cond("Ready", "True"),
    cond("ContainersReady", "True"),
    cond("PodScheduled", "True"),
)
_UNREADY = "containers with unready status: [ome-container]"
#: ... and of a pod whose container is not ready (a failing probe, a crash, an image).
CONTAINERS_NOT_READY = (
    cond("Initialized", "True"),
    cond("Ready", "False", "ContainersNotReady", _UNREADY),
    cond("ContainersReady", "False", "ContainersNotReady", _UNREADY),
    cond("PodScheduled", "True"),
)
#: ... after the node lifecycle controller marked a silent node's pods not ready: only
#: ``Ready`` changes, and it keeps the reason it had (none).
NODE_LOST = (
    cond("Initialized", "True"),
    cond("Ready", "False"),
    cond("ContainersReady", "True"),
    cond("PodScheduled", "True"),
)


def pod(
    name: str = "chat-engine-0",
    *,
    conditions: Sequence[Mapping[str, Any]] = SERVES,
    phase: str = "Running",
    node: str | None = NODE,
    labels: Mapping[str, str] | None = None,
    gates: Sequence[str] = (),
    gpus: int | str | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    containers: Sequence[Mapping[str, Any]] = (),
    init_containers: Sequence[Mapping[str, Any]] = (),
    deleting: bool = False,
) -> dict[str, Any]:
    """A pod in namespace ``default`` with one container ``ome-container`` (``gpus``: its
    ``nvidia.com/gpu`` limit) and the given status; ``gates``: its readiness gates."""
    container: dict[str, Any] = {"name": "ome-container", "image": "vllm:1"}
    if gpus is not None:
        container["resources"] = {"limits": {"cpu": "8", "nvidia.com/gpu": gpus}}
    spec: dict[str, Any] = {"containers": [container]}
    if node is not None:
        spec["nodeName"] = node
    if gates:
        spec["readinessGates"] = [{"conditionType": gate} for gate in gates]
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        metadata["labels"] = dict(labels)
    if deleting:
        metadata["deletionTimestamp"] = "2026-12-01T11:00:00Z"
    status: dict[str, Any] = {"phase": phase, "conditions": [dict(c) for c in conditions]}
    if init_containers:
        status["initContainerStatuses"] = [dict(c) for c in init_containers]
    if containers:
        status["containerStatuses"] = [dict(c) for c in containers]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def unschedulable(
    name: str = "chat-engine-0", message: str = NO_GPU, **kwargs: Any
) -> dict[str, Any]:
    """A pod the scheduler tried and could not place: Pending, no node, ``PodScheduled``
    False, reason ``Unschedulable``, with the scheduler's ``message``."""
    scheduled = cond("PodScheduled", "False", "Unschedulable", message)
    return pod(name, conditions=(scheduled,), phase="Pending", node=None, **kwargs)


def waiting(
    reason: str,
    message: str = "",
    *,
    name: str = "ome-container",
    image: str = "vllm:1",
    restarts: int = 0,
    last: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A container status waiting with ``reason``; ``last``: its last termination."""
    state = {"reason": reason, "message": message} if message else {"reason": reason}
    found: dict[str, Any] = {
        "name": name,
        "image": image,
        "ready": False,
        "restartCount": restarts,
        "started": False,
        "state": {"waiting": state},
    }
    if last is not None:
        found["lastState"] = {"terminated": dict(last)}
    return found


def pulling(
    name: str = "chat-engine-0",
    image: str = "vllm:9",
    reason: str = "ImagePullBackOff",
    message: str | None = None,
    *,
    init: bool = False,
) -> dict[str, Any]:
    """A pod whose container (or init container) cannot pull ``image``."""
    said = f'Back-off pulling image "{image}"' if message is None else message
    status = waiting(reason, said, image=image)
    if init:
        return pod(name, conditions=CONTAINERS_NOT_READY, phase="Pending", init_containers=[status])
    return pod(name, conditions=CONTAINERS_NOT_READY, phase="Pending", containers=[status])


def crashing(
    name: str = "chat-engine-0",
    restarts: int = 5,
    exit_code: int | None = 1,
    reason: str = "Error",
    **kwargs: Any,
) -> dict[str, Any]:
    """A pod whose container is in CrashLoopBackOff after ``restarts``, its last termination
    with ``exit_code`` and ``reason`` (none when ``exit_code`` is None); ``kwargs`` as ``pod``'s."""
    last = None if exit_code is None else {"exitCode": exit_code, "reason": reason}
    back_off = f"back-off 2m40s restarting failed container=ome-container pod={name}_default(u)"
    status = waiting("CrashLoopBackOff", back_off, restarts=restarts, last=last)
    return pod(name, conditions=CONTAINERS_NOT_READY, containers=[status], **kwargs)


def lost(name: str = "chat-engine-0", node: str = NODE) -> dict[str, Any]:
    """A pod on a node that stopped answering, as the node lifecycle controller leaves it."""
    return pod(name, conditions=NODE_LOST, node=node)


GROUP = "leaderworkerset.sigs.k8s.io/group-index"
INSTANCE = "ome.io/instance-index"


def in_group(name: str, index: str, **kwargs: Any) -> dict[str, Any]:
    """A pod of LeaderWorkerSet group ``index``."""
    return pod(name, labels={GROUP: index}, **kwargs)


def in_instance(name: str, index: str, **kwargs: Any) -> dict[str, Any]:
    """A pod of OMENative Instance ``index``."""
    return pod(name, labels={INSTANCE: index}, **kwargs)


def with_limits(found: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    """``found`` with its container's limits set to ``limits``."""
    found["spec"]["containers"][0]["resources"] = {"limits": limits}
    return found
