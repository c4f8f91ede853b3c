"""OMENative on a real API server: the InferenceReplica controller makes exactly the pods
``render`` prints, keeps them by index, recreates a whole Instance when a pod goes, and its
readiness reaches the InferenceService; deleting the InferenceService removes every pod through
the garbage collector.

Readiness comes from real scheduling and the KWOK nodes acting as kubelets. One test still acts
as the kubelet of a pod no node was found for (its pod waits for a node labelled for its model),
through ``pods/status``, where a node cannot be told to: it turns the pod's phase to
``Failed``."""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pytest
import yaml

from ome_operator.cli.render import render_report
from ome_operator.cluster.applying import is_subset
from tests.controlplane.scenarios import (
    RUNNER,
    admitted,
    converged,
    isvc,
    model,
    runtime,
    seed,
    status,
)
from tests.support.installed_cluster import ISVC, PDB, REPLICA, SERVICE, eventually
from tests.support.kwok_nodes import model_label

pytestmark = pytest.mark.controlplane

POD = "v1/pods"
WORKER = {"name": "ome-container", "image": "vllm:1"}
LEADER_WORKER = {"leader": {"runner": RUNNER}, "worker": {"size": 2, "runner": WORKER}}
MIGRATION = "llama-3-3-70b-instruct-omenative-migration.yaml"
MULTI = ["chat-engine-0-leader-0", "chat-engine-0-worker-0", "chat-engine-0-worker-1"]


def pods(cluster, namespace: str, isvc: str = "chat") -> dict[str, dict[str, Any]]:
    return {
        pod["metadata"]["name"]: pod
        for pod in cluster.list(POD, namespace, f"ome.io/inferenceservice={isvc}")
        if not pod["metadata"].get("deletionTimestamp")
    }


def rendered(namespace: str, manifest: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """What ``render`` prints for the same manifests, by (kind, name)."""
    report = render_report(
        [model(namespace), runtime(namespace), manifest], now="2026-01-01T00:00:00Z"
    )
    return {
        (obj["kind"], obj["metadata"]["name"]): obj
        for item in report["items"]
        for obj in item["objects"]
    }


def first_difference(want: Any, got: Any, at: str = "") -> str:
    """Where ``want`` is not held by ``got``: the path and both values."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            if key not in got or not is_subset(value, got[key]):
                return first_difference(value, got.get(key), f"{at}.{key}")
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for n, (a, b) in enumerate(zip(want, got, strict=True)):
            if not is_subset(a, b):
                return first_difference(a, b, f"{at}[{n}]")
    return f"{at}: {want!r} != {got!r}"


def without_token_volume(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod without the ServiceAccount token volume its admission plugin adds."""
    spec = copy.deepcopy(pod["spec"])

    def kept(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [i for i in items if not i["name"].startswith("kube-api-access-")]

    spec["volumes"] = kept(spec.get("volumes") or [])
    for container in spec.get("containers") or []:
        container["volumeMounts"] = kept(container.get("volumeMounts") or [])
    return {**pod, "spec": spec}


def without_owner_uids(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj["metadata"])
    meta["ownerReferences"] = [
        {k: v for k, v in ref.items() if k != "uid"} for ref in meta.get("ownerReferences") or []
    ]
    return {**obj, "metadata": meta}


def kubelet(cluster, namespace: str, name: str, *, ready: bool = True, phase: str = "Running"):
    condition = {"type": "ContainersReady", "status": "True" if ready else "False"}
    body = {"status": {"phase": phase, "conditions": [condition]}}
    cluster.patch(POD, namespace, name, body, subresource="status", strategic=True)


def gate(pod: dict[str, Any]) -> str | None:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next((c["status"] for c in conditions if c["type"] == "ome.io/serving"), None)


def condition(obj: dict[str, Any], kind: str) -> tuple[str, str, str] | None:
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return (found[0]["status"], found[0].get("reason"), found[0].get("message")) if found else None


@pytest.mark.parametrize(
    ("engine", "names", "leaders_only"),
    [
        pytest.param({}, ["chat-engine-0-default-0"], False, id="a single-pod engine"),
        pytest.param(LEADER_WORKER, MULTI, True, id="a leader and two workers"),
    ],
)
def test_the_pods_services_and_budget_are_the_ones_render_prints(
    cluster, namespace, operator, engine, names, leaders_only
):
    manifest = isvc(namespace, deploymentMode="OMENative", engine=engine)
    seed(cluster, namespace, manifest)
    live = eventually(
        lambda: (found := pods(cluster, namespace)) and sorted(found) == names and found
    )
    expected = rendered(namespace, manifest)
    for name, pod in live.items():
        want = without_owner_uids(expected["Pod", name])
        got = without_token_volume(without_owner_uids(pod))
        assert is_subset(want, got), first_difference(want, got)
    replica = cluster.stored(REPLICA, namespace, "chat-engine")
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in live.values()} == {
        replica["metadata"]["uid"]
    }
    env = {e["name"]: e["value"] for e in live[names[-1]]["spec"]["containers"][0]["env"]}
    if leaders_only:
        assert {
            k: env[k]
            for k in ("OME_LEADER_ADDRESS", "OME_INSTANCE_POD_RANK", "OME_INSTANCE_POD_COUNT")
        } == {
            "OME_LEADER_ADDRESS": "chat-engine-0-leader-0.chat-engine-headless",
            "OME_INSTANCE_POD_RANK": "2",
            "OME_INSTANCE_POD_COUNT": "3",
        }
    selector = cluster.stored(SERVICE, namespace, "chat-engine")["spec"]["selector"]
    assert selector == expected["Service", "chat-engine"]["spec"]["selector"]
    assert (selector.get("ome.io/runner") == "leader") is leaders_only
    budget = cluster.stored(PDB, namespace, "chat-engine")["spec"]
    assert (
        budget["minAvailable"]
        == expected["PodDisruptionBudget", "chat-engine"]["spec"]["minAvailable"]
    )
    assert {g["conditionType"] for p in live.values() for g in p["spec"]["readinessGates"]} == {
        "ome.io/serving"
    }


def test_readiness_reaches_the_replica_and_the_inference_service(
    cluster, namespace, operator, nodes
):
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=LEADER_WORKER))
    eventually(lambda: sorted(pods(cluster, namespace)) == MULTI)
    waiting = (
        "False",
        "PodsUnschedulable",
        "3 of 3 pods cannot be scheduled: no node has model llama ready (node label "
        f"{model_label('llama', namespace)}=Ready); OME's model agent sets it",
    )
    eventually(
        lambda: condition(cluster.stored(REPLICA, namespace, "chat-engine"), "Ready") == waiting
    )

    nodes.label_for_model("llama", namespace)  # scheduled; KWOK runs them as a kubelet would

    eventually(lambda: {gate(p) for p in pods(cluster, namespace).values()} == {"True"}, 60)
    eventually(
        lambda: (
            condition(cluster.stored(REPLICA, namespace, "chat-engine"), "Ready")
            == ("True", "AllInstancesReady", "1/1 Instances Ready")
        )
    )
    eventually(
        lambda: (
            condition(cluster.stored(ISVC, namespace, "chat"), "EngineReady")
            == ("True", "Ready", "All Instances are Ready")
        )
    )
    replica = cluster.stored(REPLICA, namespace, "chat-engine")
    assert [row["phase"] for row in replica["status"]["instanceStatuses"]] == ["Ready"]
    lifecycle = status(cluster, namespace, "chat")["components"]["engine"]["lifecycle"]
    assert (lifecycle["readyReplicas"], lifecycle["servingReplicas"]) == (1, 1)

    # A worker's node stops answering: the whole Instance leaves the Services.
    lost = pods(cluster, namespace)[MULTI[2]]["spec"]["nodeName"]
    nodes.make_unreachable(lost)

    eventually(lambda: {gate(p) for p in pods(cluster, namespace).values()} == {"False"}, 60)
    engine = eventually(
        lambda: (
            (found := condition(cluster.stored(ISVC, namespace, "chat"), "EngineReady"))
            and found[:2] == ("False", "NodeLost")
            and found
        )
    )
    assert f"node {lost} does not answer" in engine[2]


def test_a_deleted_worker_recreates_its_whole_instance(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=LEADER_WORKER))
    first = eventually(
        lambda: (found := pods(cluster, namespace)) and sorted(found) == MULTI and found
    )
    converged(cluster, namespace)

    cluster.delete(POD, namespace, MULTI[1])

    def recreated() -> dict[str, Any] | None:
        found = pods(cluster, namespace)
        labels = {
            n: p["metadata"]["labels"]["ome.io/instance-incarnation"] for n, p in found.items()
        }
        return found if labels == dict.fromkeys(MULTI, "2") else None

    second = eventually(recreated)
    assert all(second[n]["metadata"]["uid"] != first[n]["metadata"]["uid"] for n in MULTI)
    converged(cluster, namespace)
    assert sorted(pods(cluster, namespace)) == MULTI


def test_pods_orphaned_by_their_replica_are_adopted_by_the_next_one(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=LEADER_WORKER))
    first = eventually(
        lambda: (found := pods(cluster, namespace)) and sorted(found) == MULTI and found
    )
    old = cluster.stored(REPLICA, namespace, "chat-engine")
    converged(cluster, namespace)

    cluster.plane.kubectl(
        "delete",
        "inferencereplica",
        "chat-engine",
        "-n",
        namespace,
        "--cascade=orphan",
        "--wait=false",  # the garbage collector's orphaning is waited for below, bounded
    )

    def adopted() -> dict[str, Any] | None:  # by the InferenceReplica the operator made again
        replica = cluster.get(REPLICA, namespace, "chat-engine")
        if replica is None or replica["metadata"]["uid"] == old["metadata"]["uid"]:
            return None
        found = pods(cluster, namespace)
        uids = {
            ref["uid"] for p in found.values() for ref in p["metadata"].get("ownerReferences", [])
        }
        return found if uids == {replica["metadata"]["uid"]} else None

    second = eventually(adopted)
    assert {n: p["metadata"]["uid"] for n, p in second.items()} == {
        n: p["metadata"]["uid"] for n, p in first.items()
    }  # the same pods: none deleted, none made twice
    converged(cluster, namespace)
    assert sorted(pods(cluster, namespace)) == MULTI


def test_a_failed_pod_recreates_its_instance(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative"))
    eventually(lambda: sorted(pods(cluster, namespace)) == ["chat-engine-0-default-0"])
    kubelet(cluster, namespace, "chat-engine-0-default-0", ready=False, phase="Failed")
    eventually(
        lambda: (
            [
                p["metadata"]["labels"]["ome.io/instance-incarnation"]
                for p in pods(cluster, namespace).values()
            ]
            == ["2"]
        )
    )


def test_scaling_picks_indexes_and_deleting_the_service_removes_every_pod(
    cluster, namespace, operator, nodes
):
    # One 8-GPU pod per node: the three Instances run on three nodes.
    nodes.label_for_model("llama", namespace, nodes.names[:3])
    whole_node = {**copy.deepcopy(RUNNER), "resources": {"limits": {"nvidia.com/gpu": 8}}}
    seed(
        cluster,
        namespace,
        isvc(namespace, deploymentMode="OMENative"),
        engine_config={"runner": whole_node},
    )
    eventually(lambda: sorted(pods(cluster, namespace)) == ["chat-engine-0-default-0"])
    three = [f"chat-engine-{i}-default-0" for i in range(3)]

    cluster.patch(
        ISVC, namespace, "chat", {"spec": {"engine": {"minReplicas": 3, "maxReplicas": 3}}}
    )
    eventually(
        lambda: (
            {n: gate(p) for n, p in pods(cluster, namespace).items()}
            == dict.fromkeys(three, "True")
        ),
        60,
    )
    # Instances 0 and 1 stop serving (their nodes stop answering): the ready one stays, the
    # non-ready ones go first, the highest index of them first.
    lost = [pods(cluster, namespace)[name]["spec"]["nodeName"] for name in three[:2]]
    for node in lost:
        nodes.make_unreachable(node)
    eventually(
        lambda: [gate(p) for p in pods(cluster, namespace).values()] == ["False"] * 2 + ["True"], 60
    )
    fixed_at_two = {"spec": {"engine": {"minReplicas": 2, "maxReplicas": 2}}}  # no autoscaler
    cluster.patch(ISVC, namespace, "chat", fixed_at_two)
    eventually(lambda: sorted(pods(cluster, namespace)) == [three[0], three[2]])
    for node in lost:  # its kubelet back, the pod scaled away is gone for good
        nodes.make_reachable(node)
    budget = eventually(
        lambda: (
            (spec := cluster.stored(PDB, namespace, "chat-engine")["spec"]).get("minAvailable") == 1
            and spec
        )
    )
    assert budget["minAvailable"] == 1  # 2 Instances x 1 pod - maxUnavailable 1

    cluster.delete(ISVC, namespace, "chat")
    nodes.wait_gone(namespace)
    eventually(lambda: cluster.get(REPLICA, namespace, "chat-engine") is None)


SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"


def test_the_migration_sample_runs_as_render_prints_it(cluster, namespace, operator):
    """docs/migrating-from-multinode.md: the MultiNode runtime's OMENative copy, in the test's
    namespace; its pods carry the OME_* variables its commands use, and no LWS_* one."""
    sample = list(yaml.safe_load_all((SAMPLES / MIGRATION).read_text()))
    for obj in sample:
        obj["metadata"]["namespace"] = namespace
    model = yaml.safe_load((SAMPLES / "clusterbasemodel-llama-3-3-70b-instruct.yaml").read_text())
    cluster.apply(model, sample[0])
    admitted(cluster, sample[1])
    names = ["llama-3-70b-engine-0-leader-0", "llama-3-70b-engine-0-worker-0"]
    live = eventually(
        lambda: (
            (found := pods(cluster, namespace, "llama-3-70b")) and sorted(found) == names and found
        )
    )
    report = render_report([model, *sample], now="2026-01-01T00:00:00Z")
    expected = {
        obj["metadata"]["name"]: obj
        for item in report["items"]
        for obj in item["objects"]
        if obj["kind"] == "Pod"
    }
    for name, pod in live.items():
        want = without_owner_uids(expected[name])
        got = without_token_volume(without_owner_uids(pod))
        assert is_subset(want, got), first_difference(want, got)
        env = [e["name"] for e in pod["spec"]["containers"][0]["env"]]
        assert [e for e in env if e.startswith("LWS_")] == []
    selector = cluster.stored(SERVICE, namespace, "llama-3-70b-engine")["spec"]["selector"]
    assert selector["ome.io/runner"] == "leader"
