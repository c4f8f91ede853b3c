"""The InferenceReplica controller against the emulator (the test acts as the kubelet): it makes
exactly the pods ``render`` prints, sets the serving gate once an Instance is ready, scales by
index, recreates a whole Instance when one of its pods goes, and writes the InferenceReplica's
status that the InferenceService's EngineReady follows. With faults (500s on pod creates, a
dropped pod watch, a restart between a leader's create and its workers'): no duplicate pod, no
orphan, and the Instance converges."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from ome_operator.cli.render import render_report
from ome_operator.core.rendering import render_instance_pods
from ome_operator.models.object_metadata import with_owner
from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import (
    ISVC,
    MODEL_STORAGE,
    REPLICA,
    RUNNER,
    delete,
    events_for,
    make_pods_ready,
    patch,
    record_passes,
    requests,
    seed,
    status_of,
    stored,
)
from tests.support.kube_access import apply_object, eventually
from tests.support.operator_run import running_operator

PODS = "v1/pods"
WORKER = {"name": "ome-container", "image": "vllm:1"}
LEADER_WORKER = {"leader": {"runner": RUNNER}, "worker": {"size": 2, "runner": WORKER}}
RUNTIME = runtime_manifest("vllm", engineConfig={"runner": RUNNER})
MODEL = model_manifest("llama", storage=MODEL_STORAGE)
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


def pods(kube, namespace: str = "default") -> dict[str, dict[str, Any]]:
    """The live pods by name."""
    found = {}
    for (resource, ns, name), versions in kube.objects.items():
        if resource.plural == "pods" and ns == namespace and not versions.deleted:
            found[name] = copy.deepcopy(versions.raw)
    return found


def creations(kube) -> dict[str, int]:
    """How many times each pod name was created."""
    counts: dict[str, int] = {}
    for request in requests(kube):
        if request.method.name == "POST" and request.url.path.endswith("/pods"):
            if isinstance(request.data, dict):
                name = request.data["metadata"]["name"]
                counts[name] = counts.get(name, 0) + 1
    return counts


def as_written(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod without what the server adds, its status, and its owner's uid (and the one of its
    InferenceService it records: ``render`` reads files, where objects have none)."""
    found = copy.deepcopy(pod)
    for key in SERVER_METADATA:
        found["metadata"].pop(key, None)
    found.pop("status", None)
    for reference in found["metadata"].get("ownerReferences") or []:
        reference.pop("uid", None)
    annotations = found["metadata"].get("annotations") or {}
    annotations.pop("ome.io/inferenceservice-uid", None)
    if not annotations:
        found["metadata"].pop("annotations", None)
    return found


def rendered_pods(*manifests: dict[str, Any]) -> dict[str, dict[str, Any]]:
    report = render_report(list(manifests), now="2026-01-01T00:00:00Z")
    return {
        obj["metadata"]["name"]: as_written(obj)
        for item in report["items"]
        for obj in item["objects"]
        if obj["kind"] == "Pod"
    }


def incarnations(kube) -> dict[str, str]:
    return {
        name: pod["metadata"]["labels"]["ome.io/instance-incarnation"]
        for name, pod in sorted(pods(kube).items())
    }


def gates(kube) -> dict[str, str | None]:
    found = {}
    for name, pod in sorted(pods(kube).items()):
        conditions = (pod.get("status") or {}).get("conditions") or []
        serving = [c["status"] for c in conditions if c["type"] == "ome.io/serving"]
        found[name] = serving[0] if serving else None
    return found


def replica_ready(kube, name: str = "chat-engine") -> tuple[str, str, str]:
    status = (stored(kube, REPLICA, "default", name) or {}).get("status") or {}
    (ready,) = [c for c in status.get("conditions") or [] if c["type"] == "Ready"] or [{}]
    return ready.get("status"), ready.get("reason"), ready.get("message")


def engine_ready(kube) -> tuple[str, str, str]:
    conditions = status_of(kube, "chat").get("conditions") or []
    (found,) = [c for c in conditions if c["type"] == "EngineReady"] or [{}]
    return found.get("status"), found.get("reason"), found.get("message")


MULTI = ["chat-engine-0-leader-0", "chat-engine-0-worker-0", "chat-engine-0-worker-1"]


def pods_written(caplog: pytest.LogCaptureFixture) -> list[tuple[list[str], ...]]:
    """The pods each ``Instance pods written`` line names: created, adopted, deleted."""
    return [
        (sorted(r.createdPods), r.adoptedPods, r.deletedPods)
        for r in caplog.records
        if r.getMessage() == "Instance pods written"
    ]


@pytest.mark.parametrize(
    ("engine", "names"),
    [
        pytest.param({}, ["chat-engine-0-default-0"], id="a single-pod engine"),
        pytest.param(LEADER_WORKER, MULTI, id="a leader and two workers"),
    ],
)
async def test_the_pods_are_exactly_the_ones_render_prints(kube, operator, engine, names, caplog):
    caplog.set_level(logging.INFO, logger="ome_operator")
    isvc = isvc_manifest("chat", deploymentMode="OMENative", engine=engine)
    await seed(kube, operator, RUNTIME, MODEL)
    await apply_object(kube, isvc)
    await eventually(lambda: sorted(pods(kube)) == names)
    await eventually(lambda: pods_written(caplog) != [])
    assert pods_written(caplog) == [(sorted(names), [], [])]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    live = {name: as_written(pod) for name, pod in pods(kube).items()}
    assert live == rendered_pods(RUNTIME, MODEL, isvc)
    replica = stored(kube, REPLICA, "default", "chat-engine")
    owners = [p["metadata"]["ownerReferences"][0]["uid"] for p in pods(kube).values()]
    assert set(owners) == {replica["metadata"]["uid"]}


async def test_readiness_flows_to_the_gate_the_replica_and_engine_ready(kube, operator):
    await seed(kube, operator, RUNTIME, MODEL)
    await apply_object(
        kube, isvc_manifest("chat", deploymentMode="OMENative", engine=LEADER_WORKER)
    )
    await eventually(lambda: sorted(pods(kube)) == MULTI)
    await eventually(lambda: replica_ready(kube)[1] == "ReplicaCountMismatch")
    insufficient = ("False", "InsufficientAvailable", "0/1 Instances serving, need 1")
    await eventually(lambda: engine_ready(kube) == insufficient)

    await make_pods_ready(kube, "default", *MULTI[:2])
    await operator.settled()
    assert set(gates(kube).values()) == {None}  # one pod not ready: nobody serves

    await make_pods_ready(kube, "default", MULTI[2])
    await eventually(lambda: set(gates(kube).values()) == {"True"})
    await eventually(
        lambda: replica_ready(kube) == ("True", "AllInstancesReady", "1/1 Instances Ready")
    )
    await eventually(lambda: engine_ready(kube) == ("True", "Ready", "All Instances are Ready"))
    lifecycle = status_of(kube, "chat")["components"]["engine"]["lifecycle"]
    assert {k: lifecycle[k] for k in ("replicas", "readyReplicas", "servingReplicas")} == {
        "replicas": 1,
        "readyReplicas": 1,
        "servingReplicas": 1,
    }

    await make_pods_ready(kube, "default", MULTI[1], ready=False)
    await eventually(lambda: set(gates(kube).values()) == {"False"})
    await eventually(lambda: engine_ready(kube)[1] == "InsufficientAvailable")


async def test_a_deleted_worker_recreates_its_whole_instance(kube, operator):
    await seed(kube, operator, RUNTIME, MODEL)
    await apply_object(
        kube, isvc_manifest("chat", deploymentMode="OMENative", engine=LEADER_WORKER)
    )
    await eventually(lambda: sorted(pods(kube)) == MULTI)
    await eventually(lambda: replica_ready(kube)[1] == "ReplicaCountMismatch")
    await operator.settled()
    uids = {name: pod["metadata"]["uid"] for name, pod in pods(kube).items()}

    await delete(kube, PODS, "default", "chat-engine-0-worker-0")
    await eventually(lambda: incarnations(kube) == dict.fromkeys(MULTI, "2"))
    assert all(pod["metadata"]["uid"] != uids[name] for name, pod in pods(kube).items())
    assert creations(kube) == dict.fromkeys(MULTI, 2)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(
            [3],
            ["chat-engine-0-default-0", "chat-engine-1-default-0", "chat-engine-2-default-0"],
            id="scaling up takes the lowest free indexes",
        ),
        pytest.param([3, 1], ["chat-engine-0-default-0"], id="scaling down takes the highest"),
    ],
)
async def test_scaling_by_index(kube, operator, steps, expected):
    """The operator's own scaling: the bounds are equal, so no autoscaler takes ``replicas``
    over and each step's count is applied."""
    await seed(kube, operator, RUNTIME, MODEL)
    fixed = {"minReplicas": 1, "maxReplicas": 1}
    await apply_object(kube, isvc_manifest("chat", deploymentMode="OMENative", engine=fixed))
    await eventually(lambda: sorted(pods(kube)) == ["chat-engine-0-default-0"])
    for count in steps:
        engine = {"minReplicas": count, "maxReplicas": count}
        await patch(kube, ISVC, "default", "chat", {"spec": {"engine": engine}})
        await eventually(lambda c=count: len(pods(kube)) == c)
    await operator.settled()
    assert sorted(pods(kube)) == expected


def settled_instances(kube) -> dict[str, Any]:
    """The pods as (incarnation, owner) and the InferenceReplica's rows."""
    status = (stored(kube, REPLICA, "default", "chat-engine") or {}).get("status") or {}
    return {
        "pods": {
            name: (
                pod["metadata"]["labels"]["ome.io/instance-incarnation"],
                pod["metadata"]["ownerReferences"][0]["name"],
            )
            for name, pod in sorted(pods(kube).items())
        },
        "rows": [
            (r["index"], r["phase"], r["incarnation"]) for r in status.get("instanceStatuses") or []
        ],
    }


CONVERGED = {
    "pods": dict.fromkeys(MULTI, ("1", "chat-engine")),
    "rows": [(0, "Pending", 1)],
}


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(
            {"status": 500, "method": "POST", "resource": PODS, "times": 4, "probability": 0.5},
            id="500s on pod creates",
        ),
        pytest.param(
            {
                "status": 500,
                "method": "PATCH",
                "resource": REPLICA,
                "subresource": "status",
                "times": 3,
            },
            id="500s on the InferenceReplica's status",
        ),
        pytest.param(
            {"status": None, "action": "watch", "resource": PODS, "cut_after": (1, 2), "times": 3},
            id="a pod watch cut in the middle",
        ),
        pytest.param(
            {"status": 410, "action": "watch", "resource": PODS, "times": 2},
            id="a pod watch answered 410",
        ),
    ],
)
async def test_faults_leave_no_duplicate_and_no_orphan(kube, operator, fault):
    kube.inject_fault(**fault)
    await seed(kube, operator, RUNTIME, MODEL)
    await apply_object(
        kube, isvc_manifest("chat", deploymentMode="OMENative", engine=LEADER_WORKER)
    )
    await eventually(lambda: settled_instances(kube) == CONVERGED, timeout=10)
    await operator.settled()
    assert settled_instances(kube) == CONVERGED


async def test_a_restart_between_the_leaders_create_and_its_workers(kube, kubeconfig):
    refused = kube.inject_fault(500, method="POST", resource=PODS, times=10_000)
    isvc = isvc_manifest("chat", deploymentMode="OMENative", engine=LEADER_WORKER)
    async with running_operator() as first:
        await seed(kube, first, RUNTIME, MODEL)
        await apply_object(kube, isvc)
        await eventually(lambda: stored(kube, REPLICA, "default", "chat-engine"))
    refused.times = 0
    replica = stored(kube, REPLICA, "default", "chat-engine")
    (leader,) = [
        with_owner(pod, replica)
        for pod in render_instance_pods(replica, 0)
        if pod["metadata"]["name"] == MULTI[0]
    ]
    made = await apply_object(kube, leader)  # what the first operator made before it stopped

    async with running_operator() as second:
        await eventually(lambda: settled_instances(kube) == CONVERGED)
        await second.settled()
    assert settled_instances(kube) == CONVERGED
    assert pods(kube)[MULTI[0]]["metadata"]["uid"] == made["metadata"]["uid"]  # kept


async def test_multinode_without_the_leader_worker_set_api_is_parked_with_a_reason(
    kube, kubeconfig, monkeypatch
):
    del kube.resources["leaderworkerset.x-k8s.io/v1/leaderworkersets"]
    multinode = {"annotations": {"ome.io/deploymentMode": "MultiNode"}, **LEADER_WORKER}
    async with running_operator() as operator:
        await seed(kube, operator, RUNTIME, MODEL)
        passes = record_passes(operator, monkeypatch)
        await apply_object(kube, isvc_manifest("chat", engine=multinode))
        await eventually(lambda: engine_ready(kube)[1] == "LeaderWorkerSetNotInstalled")
        await operator.settled()
        pending = len(operator.controller.queue)  # queued, running or waiting for a retry
    advice = (
        "engine component runs as MultiNode, which needs the LeaderWorkerSet CRD "
        "(leaderworkerset.x-k8s.io/v1); it is not installed: install it and restart the "
        "operator, or move the component to OMENative"
    )
    events = [(e["type"], e["reason"], e["message"]) for e in events_for(kube, "chat")]
    assert (engine_ready(kube), passes, events, pending) == (
        ("False", "LeaderWorkerSetNotInstalled", advice),
        [("default", "chat")],
        [("Warning", "LeaderWorkerSetNotInstalled", advice)],
        0,  # parked: no retry is scheduled
    )
