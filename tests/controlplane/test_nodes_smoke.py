"""With nodes: the scheduler places the operator's pods once a node is labelled for their model,
KWOK runs them as a kubelet would, and the real LeaderWorkerSet controller makes a MultiNode
InferenceService's pods. No test here writes a pod: every pod status comes from KWOK, the
operator (its ``ome.io/serving`` gate) and the node lifecycle controller."""

from __future__ import annotations

from typing import Any

import pytest

from tests.controlplane.scenarios import MULTINODE, RUNNER, WORKER, isvc, seed
from tests.support.control_plane import ADMIN, user_requests
from tests.support.installed_cluster import ISVC, LWS, WRITE_VERBS, Cluster, eventually
from tests.support.kwok_nodes import KWOK_USER, KwokNodes, condition
from tests.support.pod_faults import (
    CRASH_LOOP,
    IMAGE_PULL,
    NEVER_READY,
    OOM_KILLED,
    fault_image,
)

pytestmark = pytest.mark.controlplane

STATEFULSET = "apps/v1/statefulsets"
LEADER_WORKER = {"leader": {"runner": RUNNER}, "worker": {"size": 2, "runner": WORKER}}


def ready(obj: dict[str, Any]) -> str:
    return condition(obj, "Ready").get("status", "")


def isvc_ready(cluster: Cluster, namespace: str, name: str = "chat") -> bool:
    return ready(cluster.stored(ISVC, namespace, name)) == "True"


def running(nodes: KwokNodes, namespace: str, count: int) -> list[dict[str, Any]]:
    """The namespace's pods once there are ``count`` of them, all Ready on a KWOK node."""
    found = nodes.pods(namespace)
    ok = len(found) == count and all(
        ready(p) == "True" and p["spec"].get("nodeName") in nodes.names for p in found
    )
    return found if ok else []


def pod_writers(cluster: Cluster, mark: int, namespace: str) -> set[str]:
    """Who wrote pods (or their status) in ``namespace`` since ``mark``."""
    return {
        r["user"]["username"]
        for r in cluster.plane.audit_since(mark)
        if r.get("verb") in WRITE_VERBS
        and (r.get("objectRef") or {}).get("resource") == "pods"
        and (r.get("objectRef") or {}).get("namespace") == namespace
    }


@pytest.mark.parametrize(
    ("engine_config", "spec", "pod_count"),
    [
        pytest.param({}, {}, 1, id="a RawDeployment InferenceService"),
        pytest.param(MULTINODE, {}, 3, id="a MultiNode InferenceService"),
        pytest.param(
            {},
            {"deploymentMode": "OMENative", "engine": LEADER_WORKER},
            3,
            id="an OMENative leader and two workers",
        ),
    ],
)
def test_is_ready_once_nodes_are_labelled_for_its_model(
    cluster, namespace, operator, nodes, engine_config, spec, pod_count
):
    mark = cluster.plane.audit_mark()
    seed(cluster, namespace, isvc(namespace, **spec), engine_config=engine_config)
    pending = eventually(lambda: len(nodes.pods(namespace)) == pod_count and nodes.pods(namespace))
    assert {p["spec"].get("nodeName") for p in pending} == {None}

    nodes.label_for_model("llama", namespace)

    pods = eventually(lambda: running(nodes, namespace, pod_count), timeout=60)
    eventually(lambda: isvc_ready(cluster, namespace), timeout=60)
    assert {p["status"]["podIP"].startswith("127.2.") for p in pods} == {True}
    assert ADMIN not in pod_writers(cluster, mark, namespace)
    assert KWOK_USER in pod_writers(cluster, mark, namespace)


def test_a_multinode_leader_worker_set_is_defaulted_by_its_webhook_and_made_into_statefulsets(
    cluster, namespace, operator, nodes
):
    seed(cluster, namespace, isvc(namespace), engine_config=MULTINODE)
    nodes.label_for_model("llama", namespace)

    eventually(lambda: running(nodes, namespace, 3), timeout=60)
    stored = cluster.stored(LWS, namespace, "lws-chat-engine")
    assert stored["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1, "partition": 0},
    }
    assert stored["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert {s["metadata"]["name"] for s in cluster.list(STATEFULSET, namespace)} == {
        "lws-chat-engine",
        "lws-chat-engine-0",
    }
    worker = nodes.pods(namespace, "leaderworkerset.sigs.k8s.io/worker-index=1")[0]
    env = {e["name"] for e in worker["spec"]["containers"][0].get("env") or []}
    assert {"LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"} <= env


def _waiting(reason: str) -> dict[str, Any]:
    return {"reason": reason}


def waiting_reason(pod: dict[str, Any]) -> str:
    state = pod["status"]["containerStatuses"][0]["state"]
    return (state.get("waiting") or {}).get("reason", "")


@pytest.mark.parametrize(
    ("marker", "phase", "expected"),
    [
        pytest.param(
            IMAGE_PULL,
            "Pending",
            {"restartCount": 0, "state": {"waiting": _waiting("ImagePullBackOff")}},
            id="an image that cannot be pulled leaves the pod Pending in ImagePullBackOff",
        ),
        pytest.param(
            CRASH_LOOP,
            "Running",
            {
                "restartCount": 1,
                "state": {"waiting": _waiting("CrashLoopBackOff")},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
            },
            id="a crashing container is in CrashLoopBackOff after an exit code 1",
        ),
        pytest.param(
            OOM_KILLED,
            "Running",
            {
                "restartCount": 1,
                "state": {"waiting": _waiting("CrashLoopBackOff")},
                "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
            },
            id="an OOM-killed container is in CrashLoopBackOff after an exit code 137",
        ),
        pytest.param(
            NEVER_READY,
            "Running",
            {"restartCount": 0, "started": True, "state": {"running": {}}},
            id="a container that never gets ready runs unready",
        ),
    ],
)
def test_a_fault_marker_in_the_image(cluster, namespace, operator, nodes, marker, phase, expected):
    image = fault_image(marker)
    seed(cluster, namespace, isvc(namespace), engine_config={"runner": {**RUNNER, "image": image}})
    nodes.label_for_model("llama", namespace)

    def shown() -> dict[str, Any] | None:
        pods = nodes.pods(namespace)
        statuses = pods[0]["status"].get("containerStatuses") if pods else None
        return pods[0] if statuses and not statuses[0]["ready"] else None

    pod = eventually(shown, timeout=60)
    if marker == IMAGE_PULL:  # ErrImagePull first, then the back-off
        pod = eventually(lambda: (p := shown()) and waiting_reason(p) == "ImagePullBackOff" and p)
    (container,) = pod["status"]["containerStatuses"]
    assert pod["status"]["phase"] == phase
    assert container["image"] == image
    for key, value in expected.items():
        got = container[key]
        if isinstance(value, dict):
            inner = next(iter(value))
            assert set(got) == {inner}, got
            for field, want in value[inner].items():
                assert got[inner][field] == want, got
        else:
            assert got == value
    assert condition(pod, "ContainersReady")["status"] == "False"
    assert condition(pod, "ContainersReady")["reason"] == "ContainersNotReady"
    assert condition(pod, "Ready")["message"] == "containers with unready status: [ome-container]"
    assert not isvc_ready(cluster, namespace)


def test_a_crash_looping_worker_keeps_its_leader_out_of_service(
    cluster, namespace, operator, nodes
):
    worker = {**WORKER, "image": fault_image(CRASH_LOOP)}
    engine = {"leader": {"runner": RUNNER}, "worker": {"size": 1, "runner": worker}}
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=engine))
    nodes.label_for_model("llama", namespace)

    def leader() -> dict[str, Any] | None:
        pods = nodes.pods(namespace, "ome.io/runner=leader")
        return pods[0] if pods and condition(pods[0], "ContainersReady").get("status") else None

    found = eventually(leader, timeout=60)
    assert condition(found, "ContainersReady")["status"] == "True"
    assert condition(found, "Ready")["reason"] == "ReadinessGatesNotReady"
    assert not isvc_ready(cluster, namespace)


def test_an_unreachable_node_has_its_pods_made_unready_and_comes_back(
    cluster, namespace, operator, nodes
):
    seed(cluster, namespace, isvc(namespace))
    nodes.label_for_model("llama", namespace)
    (pod,) = eventually(lambda: running(nodes, namespace, 1), timeout=60)
    eventually(lambda: isvc_ready(cluster, namespace), timeout=60)
    node = pod["spec"]["nodeName"]

    nodes.make_unreachable(node)

    unready = eventually(lambda: (p := nodes.pods(namespace)) and ready(p[0]) == "False" and p, 60)
    assert condition(unready[0], "ContainersReady")["status"] == "True"
    assert nodes.ready(node) == "Unknown"
    eventually(lambda: not isvc_ready(cluster, namespace), timeout=30)

    nodes.make_reachable(node)

    eventually(lambda: running(nodes, namespace, 1), timeout=60)
    eventually(lambda: isvc_ready(cluster, namespace), timeout=60)
    assert [p["metadata"]["uid"] for p in nodes.pods(namespace)] == [pod["metadata"]["uid"]]


def test_the_nodes_lease_renewals_come_from_kwok_s_own_identity(cluster, nodes):
    mark = cluster.plane.audit_mark()
    eventually(
        lambda: user_requests(cluster.plane.audit_since(mark), KWOK_USER, ["update"]), timeout=10
    )
    assert nodes.names == ("gpu-node-0", "gpu-node-1", "gpu-node-2", "gpu-node-3")
    capacity = nodes.node("gpu-node-0")["status"]["capacity"]
    assert {k: capacity[k] for k in ("nvidia.com/gpu", "cpu", "memory", "pods")} == {
        "nvidia.com/gpu": "8",
        "cpu": "96",
        "memory": "1Ti",
        "pods": "110",
    }
