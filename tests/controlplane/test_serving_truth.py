"""Why a service does not serve, on nodes: real scheduling (kube-scheduler), KWOK acting as each
node's kubelet, the real LeaderWorkerSet controller and the node lifecycle controller. Each cause
shows on the component condition and ``Ready``, gets one Warning event, and clears when it is
gone; no test writes a pod."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.controlplane.scenarios import MULTINODE, RUNNER, WORKER, isvc, seed, start_line
from tests.support.installed_cluster import EVENT, ISVC, SR, Cluster, eventually
from tests.support.kwok_nodes import model_label
from tests.support.pod_faults import CRASH_LOOP, IMAGE_PULL, OOM_KILLED, fault_image

pytestmark = pytest.mark.controlplane

GPUS = "nvidia.com/gpu"


def gpus(count: int) -> dict[str, Any]:
    return {"limits": {GPUS: count}, "requests": {GPUS: count}}


def runner(image: str = "vllm:1", gpu: int = 1) -> dict[str, Any]:
    return {**copy.deepcopy(RUNNER), "image": image, "resources": gpus(gpu)}


def engine_ready(cluster: Cluster, namespace: str, name: str = "chat") -> tuple[str, str, str]:
    """(status, reason, message) of ``EngineReady``; ``Ready`` must say the same when False."""
    conditions = (cluster.stored(ISVC, namespace, name).get("status") or {}).get("conditions")
    found = {c["type"]: c for c in conditions or []}
    engine = found.get("EngineReady", {})
    said = (engine.get("status", ""), engine.get("reason", ""), engine.get("message", ""))
    ready = found.get("Ready", {})
    if said[0] == "False":
        assert (ready.get("status"), ready.get("reason"), ready.get("message")) == said
    return said


def becomes(
    cluster: Cluster, namespace: str, want: tuple[str, str, str], name: str = "chat"
) -> None:
    """Until ``EngineReady`` says ``want`` (on a timeout, the failure shows what it said)."""

    def said() -> bool:
        got = engine_ready(cluster, namespace, name)
        assert got == want, got
        return True

    eventually(said, timeout=60)


def warnings(cluster: Cluster, namespace: str, name: str = "chat") -> list[tuple[str, str]]:
    """(reason, message) of the Warning events about InferenceService ``name``."""
    return sorted(
        (e["reason"], e["message"])
        for e in cluster.list(EVENT, namespace)
        if e["involvedObject"]["name"] == name and e["type"] == "Warning"
    )


def set_engine_runner(cluster: Cluster, namespace: str, new: dict[str, Any]) -> None:
    """The namespace's runtime ``vllm`` with another engine runner."""
    cluster.patch(SR, namespace, "vllm", {"spec": {"engineConfig": {"runner": new}}})


def test_pods_too_large_for_any_node_are_unschedulable_until_the_runtime_asks_for_less(
    cluster, namespace, operator, nodes
):
    nodes.label_for_model("llama", namespace)
    seed(cluster, namespace, isvc(namespace), engine_config={"runner": runner(gpu=16)})
    said = (
        "1 of 1 pods cannot be scheduled: 0/4 nodes are available: 4 Insufficient "
        "nvidia.com/gpu. no new claims to deallocate, preemption: 0/4 nodes are available: 4 "
        "Preemption is not helpful for scheduling."
    )
    becomes(cluster, namespace, ("False", "PodsUnschedulable", said))
    assert warnings(cluster, namespace) == [("PodsUnschedulable", f"engine component: {said}")]

    set_engine_runner(cluster, namespace, runner(gpu=1))

    becomes(
        cluster,
        namespace,
        ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
    )


def test_pods_wait_in_words_for_a_node_with_their_model_until_one_has_it(
    cluster, namespace, operator, nodes
):
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative"))
    label = model_label("llama", namespace)
    said = (
        f"1 of 1 pods cannot be scheduled: no node has model llama ready (node label "
        f"{label}=Ready); OME's model agent sets it"
    )
    becomes(cluster, namespace, ("False", "PodsUnschedulable", said))

    nodes.label_for_model("llama", namespace, ["gpu-node-2"])

    becomes(cluster, namespace, ("True", "Ready", "All Instances are Ready"))
    assert warnings(cluster, namespace) == [("PodsUnschedulable", f"engine component: {said}")]


def test_an_instance_placed_in_part_says_how_many_accelerators_it_holds_idle(
    cluster, namespace, operator, nodes
):
    engine = {
        "leader": {"runner": runner(gpu=8)},
        "worker": {"size": 1, "runner": {**runner(gpu=8), "ports": []}},
    }
    nodes.label_for_model("llama", namespace, ["gpu-node-0"])
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=engine))
    # Whichever of the two the scheduler placed first holds the node's 8 GPUs.
    waiting = (
        "1 of 2 pods cannot be scheduled: 0/4 nodes are available: 1 Insufficient "
        "nvidia.com/gpu, 3 node(s) didn't match Pod's node affinity/selector. no new claims to "
        "deallocate, preemption: 0/4 nodes are available: 1 No preemption victims found for "
        "incoming pod, 3 Preemption is not helpful for scheduling. Instance 0 placed in part, "
        "holding 8 accelerators idle"
    )
    becomes(cluster, namespace, ("False", "PodsUnschedulable", waiting))
    assert [r for r, _ in warnings(cluster, namespace)] == ["PodsUnschedulable"]
    # Without the PodGroup API nothing places the two together (docs/reference/workloads.md).
    assert start_line(operator) == ("not installed", "off (no PodGroup API)")
    pods = cluster.list("v1/pods", namespace)
    assert [p["spec"].get("schedulingGroup") for p in pods] == [None, None]

    nodes.label_for_model("llama", namespace, ["gpu-node-1"])

    becomes(cluster, namespace, ("True", "Ready", "All Instances are Ready"))


@pytest.mark.parametrize(
    ("marker", "reason", "message"),
    [
        pytest.param(
            IMAGE_PULL,
            "ImagePullFailed",
            "chat-engine-0-default-0: cannot pull image {image}: ImagePullBackOff: Back-off "
            'pulling image "{image}": ErrImagePull: rpc error: code = NotFound desc = failed to '
            'pull and unpack image "{image}": failed to resolve reference "{image}": {image}: '
            "not found",
            id="an image that cannot be pulled is ImagePullFailed naming the pod and image",
        ),
        pytest.param(
            CRASH_LOOP,
            "CrashLoopBackOff",
            "chat-engine-0-default-0: container ome-container is in CrashLoopBackOff "
            "(restarted 1 times, last exit code 1)",
            id="a crash-looping container is CrashLoopBackOff with its restarts and exit code",
        ),
        pytest.param(
            OOM_KILLED,
            "CrashLoopBackOff",
            "chat-engine-0-default-0: container ome-container is in CrashLoopBackOff "
            "(restarted 1 times, last exit code 137, OOMKilled)",
            id="an OOM-killed container says OOMKilled",
        ),
    ],
)
def test_a_failing_container_is_named_until_the_runtime_is_fixed(
    cluster, namespace, operator, nodes, marker, reason, message
):
    image = fault_image(marker)
    nodes.label_for_model("llama", namespace)
    seed(
        cluster,
        namespace,
        isvc(namespace, deploymentMode="OMENative"),
        engine_config={"runner": runner(image)},
    )
    said = message.format(image=image)
    becomes(cluster, namespace, ("False", reason, said))
    # One event, when the condition took the cause (an image pull says ErrImagePull first).
    assert [r for r, _ in warnings(cluster, namespace)] == [reason]

    set_engine_runner(cluster, namespace, runner())

    becomes(cluster, namespace, ("True", "Ready", "All Instances are Ready"))


def test_a_crash_looping_deployment_pod_is_named(cluster, namespace, operator, nodes):
    nodes.label_for_model("llama", namespace)
    seed(
        cluster,
        namespace,
        isvc(namespace),
        engine_config={"runner": runner(fault_image(CRASH_LOOP))},
    )

    def named() -> bool:
        pods = [p for p in nodes.pods(namespace) if not p["metadata"].get("deletionTimestamp")]
        said = (
            f"{pods[0]['metadata']['name']}: container ome-container is in CrashLoopBackOff "
            "(restarted 1 times, last exit code 1)"
        )
        return engine_ready(cluster, namespace) == ("False", "CrashLoopBackOff", said)

    eventually(named, timeout=60)


def test_a_node_that_stops_answering_takes_every_mode_out_of_service_until_it_returns(
    cluster, namespace, operator, nodes
):
    nodes.label_for_model("llama", namespace, ["gpu-node-3"])
    seed(
        cluster,
        namespace,
        isvc(namespace, "raw"),
        isvc(namespace, "native", deploymentMode="OMENative"),
        isvc(namespace, "multi", engine=copy.deepcopy(MULTINODE)),
    )
    for name in ("raw", "native", "multi"):
        eventually(lambda name=name: engine_ready(cluster, namespace, name)[0] == "True", 60)

    nodes.make_unreachable("gpu-node-3")

    for name in ("raw", "native", "multi"):
        eventually(
            lambda name=name: engine_ready(cluster, namespace, name)[:2] == ("False", "NodeLost"),
            timeout=60,
        )
    said = engine_ready(cluster, namespace, "native")[2]
    assert (
        said
        == "native-engine-0-default-0: node gpu-node-3 does not answer (its pods are not ready)"
    )

    nodes.make_reachable("gpu-node-3")

    for name in ("raw", "native", "multi"):
        eventually(lambda name=name: engine_ready(cluster, namespace, name)[0] == "True", 60)
    for name in ("raw", "native", "multi"):
        assert [r for r, _ in warnings(cluster, namespace, name)] == ["NodeLost"], name


def test_thirty_inference_services_across_the_modes_go_ready_and_then_nothing_is_written(
    cluster, namespace, operator, nodes
):
    no_gpu = {**copy.deepcopy(RUNNER), "resources": {"requests": {"cpu": "100m"}}}
    worker = {**copy.deepcopy(WORKER), "resources": {"requests": {"cpu": "100m"}}}
    shapes = {
        "raw": {},
        "native": {"deploymentMode": "OMENative"},
        "multi": {
            "engine": {
                "annotations": {"ome.io/deploymentMode": "MultiNode"},
                "leader": {"runner": no_gpu},
                "worker": {"size": 1, "runner": worker},
            }
        },
    }
    manifests = [
        isvc(namespace, f"{shape}-{n}", **copy.deepcopy(spec))
        for shape, spec in shapes.items()
        for n in range(10)
    ]
    nodes.label_for_model("llama", namespace)
    seed(cluster, namespace, *manifests, engine_config={"runner": no_gpu})

    names = [m["metadata"]["name"] for m in manifests]
    eventually(
        lambda: all(engine_ready(cluster, namespace, name)[0] == "True" for name in names),
        timeout=120,
        interval=1.0,
    )
    assert cluster.quiet_writes(namespace, window=10.0) == []
