"""The gang tier itself: the API server serves PodGroups and the scheduler places a gang whole
or not at all. The admin writes every object here; the operator's own gang tests come later."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.gang_scheduling import (
    GROUP_SCHEDULED,
    PODGROUPS,
    gang_pod,
    pod_group,
    unplaceable,
)
from tests.support.installed_cluster import Cluster, eventually, path
from tests.support.kwok_nodes import KwokNodes, condition

pytestmark = pytest.mark.controlplane

#: Why the scheduler left each pod of a 2-pod gang of 8 GPUs Pending when one node (of four) is
#: labelled for it: the gang's first pod, tried on that node, waits for the second; the second
#: finds no node (the first holds the labelled one's GPUs).
ONE_NODE_FOR_TWO = [
    "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match Pod's node"
    " affinity/selector. no new claims to deallocate, preemption: 0/4 nodes are available: 1 No"
    " preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or"
    " more plugins asked to wait and no plugin rejected pod",
]


def without_time(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "lastTransitionTime"}


def test_the_api_server_serves_pod_groups(gang_cluster: Cluster) -> None:
    listed = gang_cluster.plane.request("GET", "/apis/scheduling.k8s.io/v1alpha2")
    assert sorted(r["name"] for r in listed["resources"]) == [
        "podgroups",
        "podgroups/status",
        "workloads",
    ]


@pytest.mark.parametrize(
    ("eligible", "placed", "scheduled", "pod_messages"),
    [
        pytest.param(
            2,
            ["gpu-node-0", "gpu-node-1"],
            {"type": GROUP_SCHEDULED, "status": "True", "reason": "Scheduled", "message": ""},
            [],
            id="a gang of two 8-GPU pods with two nodes for it is bound whole",
        ),
        pytest.param(
            1,
            [],
            {
                "type": GROUP_SCHEDULED,
                "status": "False",
                "reason": "Unschedulable",
                "message": unplaceable(1),
            },
            ONE_NODE_FOR_TWO,
            id="a gang of two 8-GPU pods with one node for it has no pod bound",
        ),
    ],
)
def test_a_gang_is_placed_whole_or_not_at_all(
    gang_cluster: Cluster,
    gang_namespace: str,
    gang_nodes: KwokNodes,
    eligible: int,
    placed: list[str],
    scheduled: dict[str, Any],
    pod_messages: list[str],
) -> None:
    plane = gang_cluster.plane
    key = gang_nodes.label_for_model("llama", gang_namespace, gang_nodes.names[:eligible])
    plane.request("POST", path(PODGROUPS, gang_namespace), pod_group("engine", 2))
    for name in ("engine-0", "engine-1"):
        pod = gang_pod(name, "engine", {key: "Ready"})
        plane.request("POST", path("v1/pods", gang_namespace), pod)

    def decided() -> list[dict[str, Any]]:
        """The pods, once the scheduler wrote its verdict on the group and on each pod."""
        verdict = condition(
            gang_cluster.stored(PODGROUPS, gang_namespace, "engine"), GROUP_SCHEDULED
        )
        pods = gang_nodes.pods(gang_namespace)
        done = verdict.get("status") == scheduled["status"]
        return pods if done and all(condition(p, "PodScheduled") for p in pods) else []

    pods = eventually(decided, timeout=30)
    group = gang_cluster.stored(PODGROUPS, gang_namespace, "engine")
    assert without_time(condition(group, GROUP_SCHEDULED)) == scheduled
    assert sorted(p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName")) == placed
    waiting = sorted(condition(p, "PodScheduled").get("message", "") for p in pods)
    assert [m for m in waiting if m] == pod_messages
