"""Rules of SPEC S5.4.3–S5.4.5: the pods of one OMENative Instance, made from its
InferenceReplica."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from ome_operator.core.rendering import SERVING_GATE, render_instance_pods, revision_hash


def make_inference_replica(
    runners: list[dict[str, Any]],
    *,
    isvc: str = "llama",
    component: str = "engine",
    replicas: int | None = 2,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "component": component,
        "parentRef": {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "name": isvc},
        "runners": runners,
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": f"{isvc}-{component}", "namespace": "llm"},
        "spec": spec,
    }


def runner(name: str, size: int = 1, **spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "ome-container", "image": "img"}])
    return {
        "name": name,
        "size": size,
        "template": {
            "metadata": {"labels": {"team": "a", "component": "wrong"}},
            "spec": {"containers": containers, **spec},
        },
    }


LEADER_WORKER = [runner("leader"), runner("worker", 2)]


def test_a_single_pod_instance_is_one_whole_pod() -> None:
    inference_replica = make_inference_replica([runner("default")])
    assert render_instance_pods(inference_replica, 4, incarnation=2) == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "llama-engine-4-default-0",
                "namespace": "llm",
                "labels": {
                    "component": "engine",
                    "ome.io/inferenceservice": "llama",
                    "ome.io/instance-incarnation": "2",
                    "ome.io/instance-index": "4",
                    "ome.io/managed-by": "OMENative",
                    "ome.io/pod-ordinal": "0",
                    "ome.io/revision-hash": revision_hash(inference_replica["spec"]["runners"]),
                    "ome.io/runner": "default",
                    "team": "a",
                },
            },
            "spec": {
                "containers": [
                    {
                        "name": "ome-container",
                        "image": "img",
                        "env": [
                            {"name": "OME_INFERENCESERVICE_NAME", "value": "llama"},
                            {"name": "OME_COMPONENT", "value": "engine"},
                            {"name": "OME_COMPONENT_REPLICAS", "value": "2"},
                            {"name": "OME_INSTANCE_INDEX", "value": "4"},
                            {"name": "OME_RUNNER", "value": "default"},
                            {"name": "OME_RUNNER_SIZE", "value": "1"},
                            {"name": "OME_RUNNER_INDEX", "value": "0"},
                            {"name": "OME_INSTANCE_SUBDOMAIN", "value": "llama-engine-4"},
                        ],
                    }
                ],
                "hostname": "llama-engine-4-default-0",
                "readinessGates": [{"conditionType": "ome.io/serving"}],
                "subdomain": "llama-engine-headless",
            },
        }
    ]


def _env(pod: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}


@pytest.mark.parametrize(
    ("position", "name", "expected"),
    [
        pytest.param(
            0,
            "llama-engine-1-leader-0",
            {
                "OME_RUNNER": "leader",
                "OME_RUNNER_SIZE": "1",
                "OME_RUNNER_INDEX": "0",
                "OME_INSTANCE_POD_RANK": "0",
            },
            id="the leader has rank 0 and runner size 1",
        ),
        pytest.param(
            1,
            "llama-engine-1-worker-0",
            {
                "OME_RUNNER": "worker",
                "OME_RUNNER_SIZE": "2",
                "OME_RUNNER_INDEX": "0",
                "OME_INSTANCE_POD_RANK": "1",
            },
            id="worker 0 has rank 1 and the worker size",
        ),
        pytest.param(
            2,
            "llama-engine-1-worker-1",
            {
                "OME_RUNNER": "worker",
                "OME_RUNNER_SIZE": "2",
                "OME_RUNNER_INDEX": "1",
                "OME_INSTANCE_POD_RANK": "2",
            },
            id="worker 1 has rank 2 and runner index 1",
        ),
    ],
)
def test_leader_worker_pods(position: int, name: str, expected: dict[str, str]) -> None:
    pod = render_instance_pods(make_inference_replica(LEADER_WORKER), 1)[position]
    assert pod["metadata"]["name"] == name
    assert pod["spec"]["hostname"] == name
    assert pod["metadata"]["labels"]["ome.io/pod-ordinal"] == name[-1]
    assert _env(pod) == {
        "OME_INFERENCESERVICE_NAME": "llama",
        "OME_COMPONENT": "engine",
        "OME_COMPONENT_REPLICAS": "2",
        "OME_INSTANCE_INDEX": "1",
        "OME_INSTANCE_SUBDOMAIN": "llama-engine-1",
        "OME_LEADER_ADDRESS": "llama-engine-1-leader-0.llama-engine-headless",
        "OME_INSTANCE_POD_COUNT": "3",
        **expected,
    }


@pytest.mark.parametrize(
    "replicas",
    [
        pytest.param(None, id="no replicas means one Instance"),
        pytest.param(0, id="zero replicas means one Instance"),
    ],
)
def test_component_replicas_default_to_one(replicas: int | None) -> None:
    inference_replica = make_inference_replica([runner("default")], replicas=replicas)
    (pod,) = render_instance_pods(inference_replica, 0)
    assert _env(pod)["OME_COMPONENT_REPLICAS"] == "1"


def test_ome_variables_overwrite_same_named_ones_on_every_container_but_init_containers() -> None:
    user_env = [
        {"name": "KEEP", "value": "1"},
        {"name": "OME_RUNNER", "value": "user"},
        {"name": "OME_COMPONENT", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
    init = {"name": "init", "image": "busybox", "env": [{"name": "OME_RUNNER", "value": "user"}]}
    containers = [{"name": "main", "env": user_env}, {"name": "sidecar"}]
    inference_replica = make_inference_replica(
        [runner("default", containers=containers, initContainers=[init])]
    )
    (pod,) = render_instance_pods(inference_replica, 0)
    main, sidecar = pod["spec"]["containers"]
    assert [e["name"] for e in main["env"]][:3] == ["KEEP", "OME_RUNNER", "OME_COMPONENT"]
    assert main["env"][1:3] == [
        {"name": "OME_RUNNER", "value": "default"},
        {"name": "OME_COMPONENT", "value": "engine"},
    ]
    assert _env({"spec": {"containers": [sidecar]}})["OME_RUNNER"] == "default"
    assert pod["spec"]["initContainers"] == [init]


def test_ome_labels_win_over_the_template_labels() -> None:
    (pod,) = render_instance_pods(make_inference_replica([runner("default")]), 0)
    assert pod["metadata"]["labels"]["component"] == "engine"
    assert list(pod["metadata"]["labels"]) == sorted(pod["metadata"]["labels"])


def test_the_serving_gate_is_not_duplicated() -> None:
    gates = [{"conditionType": "example.com/other"}, {"conditionType": SERVING_GATE}]
    inference_replica = make_inference_replica([runner("default", readinessGates=gates)])
    (pod,) = render_instance_pods(inference_replica, 0)
    assert pod["spec"]["readinessGates"] == gates


def test_revision_hash_is_sha256_of_the_canonical_json_of_the_runner_templates() -> None:
    runners = make_inference_replica(LEADER_WORKER)["spec"]["runners"]
    canonical = json.dumps(
        [r["template"] for r in runners], sort_keys=True, separators=(",", ":")
    ).encode()
    assert revision_hash(runners) == hashlib.sha256(canonical).hexdigest()[:8]


@pytest.mark.parametrize(
    ("changed", "same"),
    [
        pytest.param(
            [runner("leader"), runner("worker", 2, nodeSelector={"a": "b"})],
            False,
            id="a template change changes the revision hash",
        ),
        pytest.param(
            [runner("leader"), runner("worker", 5)],
            True,
            id="a size change keeps the revision hash",
        ),
    ],
)
def test_revision_hash_follows_templates_only(changed: list[dict[str, Any]], same: bool) -> None:
    assert (revision_hash(changed) == revision_hash(LEADER_WORKER)) is same


def test_long_names_keep_hostnames_valid_and_the_leader_address_consistent() -> None:
    isvc = "a-very-long-inference-service-name-for-a-model"
    pods = render_instance_pods(make_inference_replica(LEADER_WORKER, isvc=isvc), 10)
    leader, worker, _ = pods
    assert all(len(p["spec"]["hostname"]) <= 63 for p in pods)
    assert leader["metadata"]["name"] == leader["spec"]["hostname"]
    assert _env(worker)["OME_LEADER_ADDRESS"] == (
        f"{leader['metadata']['name']}.{isvc}-engine-headless"
    )
    assert _env(worker)["OME_INSTANCE_SUBDOMAIN"] == f"{isvc}-engine-10"
