"""The gang-scheduling tier: a control plane with Kubernetes' workload-aware scheduling on
(``scheduling.k8s.io/v1alpha2`` PodGroups, gang and topology-aware placement), and the objects
its tests write as the admin.

A PodGroup with ``schedulingPolicy.gang.minCount: n`` is placed whole: the scheduler binds none of
its pods until it finds nodes for ``n`` of them at once. A pod joins it by naming it in
``spec.schedulingGroup.podGroupName``; the API server refuses to change that field on an existing
pod, and refuses to change a PodGroup's ``spec.schedulingPolicy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.control_plane_commands import Features

__all__ = [
    "GANG_SCHEDULING",
    "GROUP_SCHEDULED",
    "PODGROUPS",
    "gang_pod",
    "pod_group",
    "unplaceable",
]

#: The alpha gates in every component: GenericWorkload serves PodGroups and keeps a pod's
#: ``spec.schedulingGroup`` (without it the API server drops the field, silently);
#: GangScheduling and TopologyAwareWorkloadScheduling add their plugins to the scheduler's
#: default profile (without the latter the API server also drops a PodGroup's
#: ``spec.schedulingConstraints``). The API version is off by default even with the gates, and
#: the API server with GenericWorkload but without it never gets ready (its informers wait for
#: PodGroups). The PodGroup protection controller removes the finalizer the API server puts on
#: every PodGroup once no pod of the group is left: without it a deleted group stays for good.
GANG_SCHEDULING = Features(
    gates=("GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling"),
    api_versions=("scheduling.k8s.io/v1alpha2",),
    controllers=("podgroup-protection-controller",),
)
PODGROUPS = "scheduling.k8s.io/v1alpha2/podgroups"
#: The PodGroup condition the scheduler writes after each attempt to place the group: True with
#: reason ``Scheduled`` and an empty message, or False with reason ``Unschedulable``.
GROUP_SCHEDULED = "PodGroupScheduled"


def unplaceable(placements: int) -> str:
    """The message of a False PodGroupScheduled: none of the ``placements`` the scheduler tried
    (one per value of the topology key, or one without a constraint) fits the whole gang."""
    return (
        f"0/{placements} placements are available, first placement status: pod group is "
        "unschedulable"
    )


def pod_group(name: str, min_count: int, topology_keys: Sequence[str] = ()) -> dict[str, Any]:
    """A standalone PodGroup (no ``podGroupTemplateRef``) placed only whole, ``min_count`` pods
    at once; with ``topology_keys``, all on nodes that share each key's value."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology_keys:
        spec["schedulingConstraints"] = {"topology": [{"key": key} for key in topology_keys]}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": spec,
    }


def gang_pod(
    name: str, group: str | None, node_selector: Mapping[str, str], gpus: int = 8
) -> dict[str, Any]:
    """A pod like the operator's: ``gpus`` GPUs requested and limited (a KWOK node has 8), on a
    node with the ``node_selector`` labels, in the PodGroup ``group`` (in none when None)."""
    gpu = {"nvidia.com/gpu": str(gpus)}
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "ome-container",
                "image": "vllm:1",
                "resources": {"requests": gpu, "limits": gpu},
            }
        ],
        "nodeSelector": dict(node_selector),
    }
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
