"""Whether a pod serves, and why the pods of a component do not (``core/pod_health``): each rule
a row, over pods as the scheduler, the kubelet and the node lifecycle controller leave them."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core import pod_health
from ome_operator.core.pod_health import Cause, instance_of, pod_serves, pods_cause
from tests.core.pods import (
    CONTAINERS_NOT_READY,
    GROUP,
    INSTANCE,
    MODEL_LABEL,
    NO_GPU,
    NO_NODE_MATCHES,
    SERVING_GATE,
    SOME_NODES_MATCH,
    cond,
    crashing,
    in_group,
    in_instance,
    lost,
    pod,
    pulling,
    unschedulable,
    with_limits,
)

LB_GATE = "example.com/load-balancer"
GATES_NOT_READY = cond("Ready", "False", "ReadinessGatesNotReady")
CONTAINERS_READY = cond("ContainersReady", "True")
GATED = cond(
    "PodScheduled",
    "False",
    "SchedulingGated",
    "Scheduling is blocked due to non-empty scheduling gates",
)


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(pod_health.__all__) == [
        "CAUSES",
        "Cause",
        "instance_of",
        "pod_serves",
        "pods_cause",
        "refused_cause",
        "scheduler_reason",
        "workload_cause",
    ]


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        pytest.param(pod(), True, id="a pod whose Ready is True serves"),
        pytest.param(
            pod(
                gates=[SERVING_GATE],
                conditions=[GATES_NOT_READY, CONTAINERS_READY, cond(SERVING_GATE, "False")],
            ),
            True,
            id="the ome.io/serving gate alone does not stop a pod serving (it is our output)",
        ),
        pytest.param(
            pod(gates=[SERVING_GATE], conditions=[GATES_NOT_READY, CONTAINERS_READY]),
            True,
            id="an ome.io/serving gate not set yet does not stop a pod serving either",
        ),
        pytest.param(
            pod(
                gates=[SERVING_GATE, LB_GATE],
                conditions=[
                    GATES_NOT_READY,
                    CONTAINERS_READY,
                    cond(SERVING_GATE, "False"),
                    cond(LB_GATE, "True"),
                ],
            ),
            True,
            id="every other gate True: the pod serves, its own gate aside",
        ),
        pytest.param(
            pod(
                gates=[SERVING_GATE, LB_GATE],
                conditions=[
                    GATES_NOT_READY,
                    CONTAINERS_READY,
                    cond(SERVING_GATE, "True"),
                    cond(LB_GATE, "False"),
                ],
            ),
            False,
            id="another readiness gate False stops the pod serving",
        ),
        pytest.param(
            pod(gates=[LB_GATE], conditions=[GATES_NOT_READY, CONTAINERS_READY]),
            False,
            id="another readiness gate not set yet stops the pod serving",
        ),
        pytest.param(
            pod(
                gates=[SERVING_GATE],
                conditions=[GATES_NOT_READY, cond("ContainersReady", "False")],
            ),
            False,
            id="gates aside, containers that are not ready do not serve",
        ),
        pytest.param(
            pod(conditions=CONTAINERS_NOT_READY),
            False,
            id="a container not ready (a failing probe) does not serve",
        ),
        pytest.param(
            lost(),
            False,
            id="Ready turned False by the node lifecycle controller (no reason) does not serve",
        ),
        pytest.param(
            pod(conditions=[CONTAINERS_READY]),
            True,
            id="no Ready condition at all: ContainersReady True serves",
        ),
        pytest.param(
            pod(conditions=[cond("ContainersReady", "False")]),
            False,
            id="no Ready condition at all: ContainersReady False does not serve",
        ),
        pytest.param(pod(conditions=[]), False, id="a pod no kubelet has judged does not serve"),
        pytest.param(unschedulable(), False, id="a pod not placed does not serve"),
        pytest.param(pod(deleting=True), False, id="a terminating pod does not serve"),
        pytest.param(pod(phase="Failed"), False, id="a Failed pod does not serve"),
        pytest.param(pod(phase="Succeeded"), False, id="a Succeeded pod does not serve"),
    ],
)
def test_whether_a_pod_serves(found: dict[str, Any], expected: bool) -> None:
    assert pod_serves(found) is expected


def _unschedulable(message: str) -> Cause:
    return Cause("PodsUnschedulable", message)


NO_MODEL = (
    "no node has model llama ready (node label models.ome.io/clusterbasemodel.llama=Ready); "
    "OME's model agent sets it"
)
OOM = (
    "chat-engine-0: container ome-container is in CrashLoopBackOff (restarted 3 times, last exit "
    "code 137, OOMKilled)"
)


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        pytest.param([], None, id="no pods: no cause"),
        pytest.param([pod("a"), pod("b")], None, id="every pod serves: no cause"),
        pytest.param(
            [pod("a", conditions=CONTAINERS_NOT_READY)],
            None,
            id="a container not ready for no reason the pods show: no cause (the mirror says it)",
        ),
        pytest.param(
            [pod("a", gates=[LB_GATE], conditions=[GATES_NOT_READY, CONTAINERS_READY])],
            None,
            id="Ready False for a readiness gate is the kubelet's word, not a lost node",
        ),
        pytest.param(
            [pod("a", conditions=[], node=None, phase="Pending")],
            None,
            id="a pod the scheduler has not judged yet is not unschedulable",
        ),
        pytest.param(
            [pod("a", conditions=[GATED], node=None, phase="Pending")],
            None,
            id="a pod held by a scheduling gate is not unschedulable",
        ),
        # unschedulable
        pytest.param(
            [pod("chat-engine-a"), unschedulable("chat-engine-b")],
            _unschedulable(f"1 of 2 pods cannot be scheduled: {NO_GPU}"),
            id="unschedulable: the scheduler's message verbatim, counted among the live pods",
        ),
        pytest.param(
            [
                unschedulable(
                    "chat-engine-b", NO_NODE_MATCHES, node_selector={MODEL_LABEL: "Ready"}
                ),
                unschedulable(
                    "chat-engine-a", NO_NODE_MATCHES, node_selector={MODEL_LABEL: "Ready"}
                ),
            ],
            _unschedulable(f"2 of 2 pods cannot be scheduled: {NO_MODEL}"),
            id="the model label as the only selector and every node failing it: said in words",
        ),
        pytest.param(
            [
                unschedulable(
                    "a",
                    NO_NODE_MATCHES,
                    node_selector={"models.ome.io/team-a.basemodel.llama-3.2-1b": "Ready"},
                )
            ],
            _unschedulable(
                "1 of 1 pods cannot be scheduled: no node has model llama-3.2-1b ready (node "
                "label models.ome.io/team-a.basemodel.llama-3.2-1b=Ready); OME's model agent "
                "sets it"
            ),
            id="a namespace BaseModel's label names the model too",
        ),
        pytest.param(
            [
                unschedulable(
                    "a",
                    NO_NODE_MATCHES,
                    node_selector={MODEL_LABEL: "Ready", "node.kubernetes.io/instance-type": "gpu"},
                )
            ],
            _unschedulable(f"1 of 1 pods cannot be scheduled: {NO_NODE_MATCHES}"),
            id="another selector beside the model label: the scheduler's message verbatim",
        ),
        pytest.param(
            [
                unschedulable(
                    "a",
                    NO_NODE_MATCHES,
                    node_selector={MODEL_LABEL: "Ready"},
                    affinity={
                        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}
                    },
                )
            ],
            _unschedulable(f"1 of 1 pods cannot be scheduled: {NO_NODE_MATCHES}"),
            id="a node affinity beside the model label: the scheduler's message verbatim",
        ),
        pytest.param(
            [unschedulable("a", SOME_NODES_MATCH, node_selector={MODEL_LABEL: "Ready"})],
            _unschedulable(f"1 of 1 pods cannot be scheduled: {SOME_NODES_MATCH}"),
            id="not every node failed the selector: the scheduler's message verbatim",
        ),
        pytest.param(
            [
                in_group("lws-chat-engine-0", "0", gpus=8),
                unschedulable("lws-chat-engine-0-1", labels={GROUP: "0"}, gpus=8),
            ],
            _unschedulable(
                f"1 of 2 pods cannot be scheduled: {NO_GPU} Instance 0 placed in part, holding "
                "8 accelerators idle"
            ),
            id="a leader bound and its worker unschedulable hold the leader's GPUs idle",
        ),
        pytest.param(
            [
                in_instance("chat-engine-2-leader-0", "2", gpus="8"),
                in_instance("chat-engine-2-worker-0", "2", gpus=8),
                unschedulable("chat-engine-2-worker-1", labels={INSTANCE: "2"}),
                in_instance("chat-engine-10-leader-0", "10", gpus=4),
                unschedulable("chat-engine-10-worker-0", labels={INSTANCE: "10"}),
                in_instance("chat-engine-3-leader-0", "3", gpus=8),
            ],
            _unschedulable(
                f"2 of 6 pods cannot be scheduled: {NO_GPU} Instances 2, 10 placed in part, "
                "holding 20 accelerators idle"
            ),
            id="OMENative Instances placed in part are listed in order, their GPUs summed",
        ),
        pytest.param(
            [
                with_limits(
                    in_group("lws-chat-engine-0", "0"),
                    {"nvidia.com/gpu": 8, "rdma/hca": 1, "example.com/foo": 2, "cpu": "8"},
                ),
                with_limits(in_group("lws-chat-engine-0-1", "0"), {"amd.com/gpu": "2"}),
                unschedulable("lws-chat-engine-0-2", "no node fits", labels={GROUP: "0"}),
            ],
            _unschedulable(
                "1 of 3 pods cannot be scheduled: no node fits; Instance 0 placed in part, "
                "holding 10 accelerators idle"
            ),
            id="only accelerators count as held idle, and a message with no full stop gets a ;",
        ),
        pytest.param(
            [
                unschedulable("lws-chat-engine-0", labels={GROUP: "0"}),
                unschedulable("lws-chat-engine-0-1", labels={GROUP: "0"}, gpus=8),
            ],
            _unschedulable(f"2 of 2 pods cannot be scheduled: {NO_GPU}"),
            id="an Instance with no pod bound holds nothing",
        ),
        pytest.param(
            [pod("chat-engine-a", gpus=8), unschedulable("chat-engine-b", gpus=8)],
            _unschedulable(f"1 of 2 pods cannot be scheduled: {NO_GPU}"),
            id="a Deployment's pods are Instances of one: none is placed in part",
        ),
        # each pod's own cause
        pytest.param(
            [pulling("chat-engine-0")],
            Cause(
                "ImagePullFailed",
                "chat-engine-0: cannot pull image vllm:9: ImagePullBackOff: Back-off pulling "
                'image "vllm:9"',
            ),
            id="an image that cannot be pulled: the kubelet's reason and message",
        ),
        pytest.param(
            [pulling("chat-engine-0", reason="InvalidImageName", message="", init=True)],
            Cause("ImagePullFailed", "chat-engine-0: cannot pull image vllm:9: InvalidImageName"),
            id="an init container's image counts too; no message, only the reason",
        ),
        pytest.param(
            [crashing("chat-engine-0")],
            Cause(
                "CrashLoopBackOff",
                "chat-engine-0: container ome-container is in CrashLoopBackOff (restarted 5 "
                "times, last exit code 1)",
            ),
            id="a crash loop: restarts and the last exit code",
        ),
        pytest.param(
            [crashing("chat-engine-0", restarts=3, exit_code=137, reason="OOMKilled")],
            Cause("CrashLoopBackOff", OOM),
            id="a crash loop killed for memory says OOMKilled",
        ),
        pytest.param(
            [crashing("chat-engine-0", restarts=0, exit_code=None)],
            Cause(
                "CrashLoopBackOff",
                "chat-engine-0: container ome-container is in CrashLoopBackOff (restarted 0 times)",
            ),
            id="a crash loop with no last termination says only the restarts",
        ),
        pytest.param(
            [pod("chat-engine-0"), lost("chat-engine-1", "gpu-node-3")],
            Cause(
                "NodeLost",
                "chat-engine-1: node gpu-node-3 does not answer (its pods are not ready)",
            ),
            id="Ready False with no kubelet reason while ContainersReady is True: NodeLost",
        ),
        # the most blocking first
        pytest.param(
            [pulling("a"), crashing("b"), lost("c"), unschedulable("d")],
            _unschedulable(f"1 of 4 pods cannot be scheduled: {NO_GPU}"),
            id="unschedulable beats an image pull, a crash loop and a lost node",
        ),
        pytest.param(
            [lost("a"), crashing("b"), pulling("c")],
            Cause(
                "ImagePullFailed",
                'c: cannot pull image vllm:9: ImagePullBackOff: Back-off pulling image "vllm:9"',
            ),
            id="an image pull beats a crash loop and a lost node",
        ),
        pytest.param(
            [lost("a"), crashing("b")],
            Cause(
                "CrashLoopBackOff",
                "b: container ome-container is in CrashLoopBackOff (restarted 5 times, last exit "
                "code 1)",
            ),
            id="a crash loop beats a lost node",
        ),
        pytest.param(
            [crashing("chat-engine-b", restarts=2), crashing("chat-engine-a", restarts=7)],
            Cause(
                "CrashLoopBackOff",
                "chat-engine-a: container ome-container is in CrashLoopBackOff (restarted 7 "
                "times, last exit code 1)",
            ),
            id="of two pods with the same cause, the first by name is told",
        ),
        # terminating pods
        pytest.param(
            [
                pod("a"),
                unschedulable("b", deleting=True),
                crashing("c", deleting=True),
            ],
            None,
            id="terminating pods are ignored",
        ),
        pytest.param(
            [unschedulable("a"), pod("b", deleting=True)],
            _unschedulable(f"1 of 1 pods cannot be scheduled: {NO_GPU}"),
            id="a terminating pod is not counted among the pods",
        ),
    ],
)
def test_why_the_pods_of_a_component_do_not_serve(
    pods: list[dict[str, Any]], expected: Cause | None
) -> None:
    assert pods_cause(pods) == expected


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        pytest.param(in_instance("chat-engine-1-leader-0", "1"), "1", id="OMENative: its index"),
        pytest.param(in_group("lws-chat-engine-2-1", "2"), "2", id="LeaderWorkerSet: its group"),
        pytest.param(pod("chat-engine-7d9f-x2"), "chat-engine-7d9f-x2", id="else the pod itself"),
    ],
)
def test_the_instance_a_pod_belongs_to(found: dict[str, Any], expected: str) -> None:
    assert instance_of(found) == expected
