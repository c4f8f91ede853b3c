"""Gang placement on the gang tier (docs/reference/workloads.md, Gang placement): the operator
gives each multi-pod OMENative Instance a PodGroup its pods join, and the real kube-scheduler
binds the Instance whole or not at all. With one node free for two 8-GPU pods, no pod is bound
and the status waits for the gang in the scheduler's words; a second node binds both. Two
Instances competing for three nodes: one runs whole, the other waits whole, and scaling down
removes the waiting one with its group. Every request the operator makes of PodGroups is allowed
by the shipped RBAC, and uses each of its grants. Without the API (the default tier) the pods are
placed one by one: tests/controlplane/test_serving_truth.py."""

from __future__ import annotations

import pytest

from tests.controlplane.conftest import start_operator
from tests.controlplane.scenarios import isvc, seed, start_line
from tests.controlplane.test_serving_truth import becomes, engine_ready, runner, warnings
from tests.support.gang_scheduling import PODGROUPS
from tests.support.installed_cluster import ISVC, REPLICA, Cluster, eventually
from tests.support.kwok_nodes import KwokNodes
from tests.support.operator_process import OperatorProcess

pytestmark = pytest.mark.controlplane

POD = "v1/pods"
#: A leader and one worker, each a whole node's 8 GPUs.
ENGINE = {
    "leader": {"runner": runner(gpu=8)},
    "worker": {"size": 1, "runner": {**runner(gpu=8), "ports": []}},
}
READY = ("True", "Ready", "All Instances are Ready")
#: What kube-scheduler 1.36.3 says of the pod of a 2-pod gang that finds no node, when one node
#: of four is labelled for the model (the other pod, tried on it, waits for this one).
ONE_NODE_FOR_TWO = (
    "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match Pod's node "
    "affinity/selector. no new claims to deallocate, preemption: 0/4 nodes are available: 1 No "
    "preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."
)


def placement(cluster: Cluster, namespace: str) -> dict[str, tuple[str | None, str | None]]:
    """Each pod: (the node it is bound to, the PodGroup it joined)."""
    return {
        p["metadata"]["name"]: (
            p["spec"].get("nodeName"),
            (p["spec"].get("schedulingGroup") or {}).get("podGroupName"),
        )
        for p in cluster.list(POD, namespace)
        if not p["metadata"].get("deletionTimestamp")
    }


def groups(cluster: Cluster, namespace: str) -> dict[str, tuple[int, list[str]]]:
    """Each live PodGroup: (its minCount, the kind/name of its owners)."""
    return {
        g["metadata"]["name"]: (
            g["spec"]["schedulingPolicy"]["gang"]["minCount"],
            [f"{r['kind']}/{r['name']}" for r in g["metadata"].get("ownerReferences", [])],
        )
        for g in cluster.list(PODGROUPS, namespace)
        if not g["metadata"].get("deletionTimestamp")
    }


def test_an_instance_waits_whole_for_two_free_nodes_then_is_bound_whole(
    gang_cluster, gang_namespace, gang_operator, gang_nodes: KwokNodes
):
    cluster, namespace = gang_cluster, gang_namespace
    gang_nodes.label_for_model("llama", namespace, ["gpu-node-0"])
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=ENGINE))

    waiting = f"Instance 0 needs 2 pods placed together: {ONE_NODE_FOR_TWO}"
    told = "engine component: Instance 0 needs 2 pods placed together: "
    becomes(cluster, namespace, ("False", "WaitingForGang", waiting))
    group = "chat-engine-0-gang-1"
    assert groups(cluster, namespace) == {group: (2, ["InferenceReplica/chat-engine"])}
    assert placement(cluster, namespace) == {
        "chat-engine-0-leader-0": (None, group),
        "chat-engine-0-worker-0": (None, group),
    }  # no pod bound: no GPU held
    # One event, when the condition takes the reason; its message is what the scheduler had
    # said by then (the group's verdict and the pods' come in separate writes).
    ((reason, message),) = warnings(cluster, namespace)
    assert (reason, message[: len(told)]) == ("WaitingForGang", told)

    gang_nodes.label_for_model("llama", namespace, ["gpu-node-1"])

    becomes(cluster, namespace, READY)
    nodes = {node for node, _ in placement(cluster, namespace).values()}
    assert nodes == {"gpu-node-0", "gpu-node-1"}


def test_two_instances_competing_for_three_nodes_run_one_whole_and_the_other_waits_whole(
    gang_cluster, gang_namespace, gang_operator, gang_nodes: KwokNodes
):
    cluster, namespace = gang_cluster, gang_namespace
    gang_nodes.label_for_model("llama", namespace, ["gpu-node-0", "gpu-node-1", "gpu-node-2"])
    engine = {**ENGINE, "minReplicas": 2, "maxReplicas": 2}
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=engine))

    def one_whole_one_waiting() -> int:
        bound: dict[str, list[bool]] = {}
        for name, (node, _) in placement(cluster, namespace).items():
            bound.setdefault(name.split("-")[2], []).append(node is not None)
        assert sorted(map(tuple, bound.values())) == [(False, False), (True, True)], bound
        (index,) = [int(i) for i, placed in bound.items() if not any(placed)]
        status, reason, message = engine_ready(cluster, namespace)
        assert (status, reason) == ("False", "WaitingForGang")
        assert message.startswith(f"Instance {index} needs 2 pods placed together: 0/4 nodes")
        return index

    waiting = eventually(one_whole_one_waiting, timeout=60)
    replica = cluster.stored(REPLICA, namespace, "chat-engine")
    rows = {r["index"]: r["phase"] for r in replica["status"]["instanceStatuses"]}
    assert rows[1 - waiting] == "Ready"
    assert set(groups(cluster, namespace)) == {"chat-engine-0-gang-1", "chat-engine-1-gang-1"}

    # Down to one Instance: the waiting one goes (not ready first), with its group.
    cluster.patch(
        ISVC, namespace, "chat", {"spec": {"engine": {"minReplicas": 1, "maxReplicas": 1}}}
    )

    becomes(cluster, namespace, READY)
    eventually(lambda: set(groups(cluster, namespace)) == {f"chat-engine-{1 - waiting}-gang-1"})
    requests = [  # since the tier started: the operator lists and watches them at its start
        r
        for r in cluster.operator_requests()
        if (r.get("objectRef") or {}).get("resource") == "podgroups"
    ]
    refused = [  # by RBAC: a namespace an earlier test is deleting refuses content, and says so
        r
        for r in requests
        if r["responseStatus"]["code"] == 403
        and "being terminated" not in r["responseStatus"].get("message", "")
    ]
    assert refused == []
    assert {r["verb"] for r in requests} == {"list", "watch", "create", "delete"}


def test_the_start_log_says_gangs_are_placed(gang_operator: OperatorProcess):
    assert start_line(gang_operator) == ("installed", "on")


def test_turned_off_the_pods_are_placed_one_by_one_and_a_half_placed_instance_says_so(
    gang_cluster, gang_namespace, gang_nodes: KwokNodes
):
    cluster, namespace = gang_cluster, gang_namespace
    process = start_operator(cluster, "gang-off", "--gang-placement=off")
    try:
        assert start_line(process) == ("installed", "off (--gang-placement=off)")
        gang_nodes.label_for_model("llama", namespace, ["gpu-node-0"])
        seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=ENGINE))
        half = (
            f"1 of 2 pods cannot be scheduled: {ONE_NODE_FOR_TWO} Instance 0 placed in part, "
            "holding 8 accelerators idle"
        )
        becomes(cluster, namespace, ("False", "PodsUnschedulable", half))
        assert groups(cluster, namespace) == {}
        bound = sorted(node is not None for node, _ in placement(cluster, namespace).values())
        assert bound == [False, True]  # the leader or the worker holds a node's 8 GPUs
    finally:
        assert process.stop() == 0, process.tail()


#: What kube-scheduler 1.36.3 says of a pod of a 2-pod gang held to one rack when each rack has
#: one node labelled for the model: the placement it tried (one rack: 2 nodes) fits one pod.
ONE_NODE_PER_RACK = (
    "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node "
    "affinity/selector. no new claims to deallocate, preemption: not eligible due to "
    "placement-based pod group scheduling limitation"
)


def test_an_instance_held_to_one_rack_waits_until_one_rack_has_two_nodes_for_it(
    gang_cluster, gang_namespace, gang_operator, gang_nodes: KwokNodes
):
    cluster, namespace = gang_cluster, gang_namespace
    rack = "example.com/rack"  # removed with the test's other node labels
    gang_nodes.label(["gpu-node-0", "gpu-node-1"], {rack: "a"})
    gang_nodes.label(["gpu-node-2", "gpu-node-3"], {rack: "b"})
    gang_nodes.label_for_model("llama", namespace, ["gpu-node-0", "gpu-node-2"])
    manifest = isvc(namespace, deploymentMode="OMENative", engine=ENGINE)
    manifest["metadata"]["annotations"] = {"ome.io/gang-topology-key": rack}
    seed(cluster, namespace, manifest)

    waiting = f"Instance 0 needs 2 pods placed together: {ONE_NODE_PER_RACK}"
    becomes(cluster, namespace, ("False", "WaitingForGang", waiting))
    (group,) = cluster.list(PODGROUPS, namespace)
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": rack}]}

    gang_nodes.label_for_model("llama", namespace, ["gpu-node-1"])

    becomes(cluster, namespace, READY)
    nodes = {node for node, _ in placement(cluster, namespace).values()}
    assert nodes == {"gpu-node-0", "gpu-node-1"}  # both in rack a
