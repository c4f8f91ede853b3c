"""A ServingRuntime change and deletion under running InferenceServices (S9, S8.2, S8.3)."""

from __future__ import annotations

import pytest

from tests.controlplane.scenarios import converged, isvc, runtime, seed, status
from tests.support.installed_cluster import DEPLOYMENT, SR, eventually

pytestmark = pytest.mark.controlplane


def _image(cluster, namespace: str) -> str:
    deployment = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
    return deployment["spec"]["template"]["spec"]["containers"][0]["image"]


def test_a_runtime_change_rolls_out_to_its_inference_services(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace))
    eventually(lambda: cluster.get(DEPLOYMENT, namespace, "chat-engine"))
    converged(cluster, namespace)

    changed = runtime(namespace)
    changed["spec"]["engineConfig"]["runner"]["image"] = "vllm:2"
    cluster.apply(changed)

    eventually(lambda: _image(cluster, namespace) == "vllm:2")
    assert status(cluster, namespace, "chat")["runtime"] == {
        "kind": "ServingRuntime",
        "name": "vllm",
        "selection": "Selected",
    }


def test_a_limit_taken_out_of_the_runtime_leaves_the_workload(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace))
    eventually(lambda: cluster.get(DEPLOYMENT, namespace, "chat-engine"))
    converged(cluster, namespace)

    changed = runtime(namespace)
    del changed["spec"]["engineConfig"]["runner"]["resources"]["limits"]["cpu"]
    cluster.apply(changed)  # nothing else in the rendered Deployment changes

    def resources_stored():
        deployment = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
        return deployment["spec"]["template"]["spec"]["containers"][0]["resources"]

    eventually(lambda: "cpu" not in resources_stored()["limits"])
    assert resources_stored() == {
        "limits": {"nvidia.com/gpu": "1", "memory": "1Gi"},
        "requests": {"nvidia.com/gpu": "1", "cpu": "1", "memory": "1Gi"},
    }
    converged(cluster, namespace)


def test_what_the_runtime_no_longer_renders_leaves_the_workload_and_nothing_else(
    cluster, namespace, operator
):
    pinned = runtime(namespace, labels={"tier": "gold"}, nodeSelector={"gpu": "a100"})
    seed(cluster, namespace, isvc(namespace))
    cluster.apply(pinned)
    eventually(lambda: "gpu" in _template(cluster, namespace)["spec"]["nodeSelector"])
    cluster.plane.kubectl("label", "deployment", "chat-engine", "-n", namespace, "team=a")
    converged(cluster, namespace)

    cluster.apply(runtime(namespace))  # the label and the nodeSelector taken out

    # The model's own key stays (S5.1): only the runtime's goes.
    eventually(lambda: "gpu" not in _template(cluster, namespace)["spec"]["nodeSelector"])
    deployment = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
    assert (
        "tier" in deployment["metadata"]["labels"],
        deployment["metadata"]["labels"]["team"],
    ) == (
        False,
        "a",
    )
    assert "tier" not in deployment["spec"]["template"]["metadata"]["labels"]
    converged(cluster, namespace)


def _template(cluster, namespace: str) -> dict:
    return cluster.stored(DEPLOYMENT, namespace, "chat-engine")["spec"]["template"]


def test_deleting_the_selected_runtime_moves_to_the_next_one_then_to_none(
    cluster, namespace, operator
):
    # Same score as vllm and later by name (S2.11): chosen only once vllm is gone.
    backup = runtime(namespace, "vllm-spare")
    backup["spec"]["engineConfig"]["runner"]["image"] = "backup:1"
    seed(cluster, namespace, isvc(namespace))
    cluster.apply(backup)
    eventually(lambda: status(cluster, namespace, "chat")["runtime"]["name"] == "vllm")

    cluster.delete(SR, namespace, "vllm")

    eventually(lambda: status(cluster, namespace, "chat")["runtime"]["name"] == "vllm-spare")
    eventually(lambda: _image(cluster, namespace) == "backup:1")

    cluster.delete(SR, namespace, "vllm-spare")

    def not_found():
        found = [c for c in status(cluster, namespace, "chat")["conditions"]]
        return [c for c in found if c["type"] == "RuntimeReady" and c["status"] == "False"]

    (condition,) = eventually(not_found)
    expected = (
        "no runtime found to support model safetensors with format safetensors in namespace "
        f"{namespace}"
    )
    assert (condition["reason"], condition["severity"]) == ("RuntimeNotFound", "Info")
    assert condition["message"].startswith(expected)
    events = eventually(
        lambda: [
            e for e in cluster.list("v1/events", namespace) if e["reason"] == "RuntimeNotFound"
        ]
    )
    assert [(e["type"], e["message"], e["involvedObject"]["name"]) for e in events] == [
        ("Warning", condition["message"], "chat")
    ]
    # The workloads of the last runtime stay: a missing runtime does not take a service down.
    assert _image(cluster, namespace) == "backup:1"
