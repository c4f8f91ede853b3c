"""Rules of SPEC S5 across modes: which objects each mode renders and in which order, replica
counts (S5.2 + OPEN-14, S5.3, S5.4.2), OPEN-17, and the determinism of rendering."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.deployment_modes import DeploymentMode, InvalidComponentModeError
from ome_operator.core.rendering import ComponentContext, render_component
from tests.builders import make_isvc, make_runtime
from tests.core.rendering.contexts import make_context

MODE = "ome.io/deploymentMode"


def _context(component: str = "engine", **component_spec: Any) -> ComponentContext:
    isvc = make_isvc("llama", model=None, **{component: component_spec})
    return make_context(isvc, make_runtime("rt"), component)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param(
            "RawDeployment",
            [
                ("apps/v1", "Deployment", "llama-engine"),
                ("v1", "Service", "llama-engine"),
                ("policy/v1", "PodDisruptionBudget", "llama-engine"),
            ],
            id="RawDeployment renders a Deployment, a Service and a PDB",
        ),
        pytest.param(
            "MultiNode",
            [
                ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws-llama-engine"),
                ("v1", "Service", "llama-engine"),
            ],
            id="MultiNode renders a LeaderWorkerSet and a Service, no PDB",
        ),
        pytest.param(
            "OMENative",
            [
                ("ome.io/v1beta1", "InferenceReplica", "llama-engine"),
                ("v1", "Service", "llama-engine"),
                ("v1", "Service", "llama-engine-headless"),
                ("policy/v1", "PodDisruptionBudget", "llama-engine"),
            ],
            id="OMENative renders an InferenceReplica, two Services and a PDB",
        ),
    ],
)
def test_objects_of_each_mode(mode: str, expected: list[tuple[str, str, str]]) -> None:
    objects = render_component(_context(annotations={MODE: mode}))
    assert [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects] == expected
    assert all(o["metadata"]["namespace"] == "default" for o in objects)
    assert all("ownerReferences" not in o["metadata"] for o in objects)


@pytest.mark.parametrize(
    ("component", "mode", "message"),
    [
        pytest.param(
            "router", "MultiNode", "invalid deployment mode for router", id="a MultiNode router"
        ),
        pytest.param(
            "engine",
            "VirtualDeployment",
            "invalid deployment mode for engine",
            id="a VirtualDeployment engine",
        ),
    ],
)
def test_a_mode_the_component_cannot_run_fails(component: str, mode: str, message: str) -> None:
    ctx = _context(component, annotations={MODE: mode})
    with pytest.raises(InvalidComponentModeError) as caught:
        render_component(ctx)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("mode", "min_replicas", "path", "expected"),
    [
        pytest.param("RawDeployment", 3, ("spec", "replicas"), 3, id="Deployment replicas"),
        pytest.param(
            "RawDeployment", 0, ("spec", "replicas"), 1, id="Deployment replicas are at least 1"
        ),
        pytest.param("MultiNode", 2, ("spec", "replicas"), 2, id="LeaderWorkerSet replicas"),
        pytest.param(
            "MultiNode",
            0,
            ("spec", "replicas"),
            0,
            id="LeaderWorkerSet replicas are the effective minReplicas, even 0",
        ),
        pytest.param(
            "OMENative",
            0,
            ("spec", "replicas"),
            1,
            id="InferenceReplica replicas are at least 1",
        ),
    ],
)
def test_replicas(mode: str, min_replicas: int, path: tuple[str, ...], expected: int) -> None:
    workload = render_component(_context(annotations={MODE: mode}, minReplicas=min_replicas))[0]
    value: Any = workload
    for key in path:
        value = value[key]
    assert value == expected


def test_multi_node_without_leader_or_worker_runs_the_component_as_a_lone_leader() -> None:
    ctx = _context(annotations={MODE: "MultiNode"}, runner={"image": "img"})
    template = render_component(ctx)[0]["spec"]["leaderWorkerTemplate"]
    assert template["size"] == 1
    assert template["leaderTemplate"]["metadata"]["labels"]["app"] == "llama-engine"
    assert template["leaderTemplate"]["spec"] == {
        "containers": [{"name": "ome-container", "image": "img"}]
    }
    assert "app" not in template["workerTemplate"]["metadata"]["labels"]


def test_deployment_strategy_defaults_to_a_surge_rollout() -> None:
    deployment = render_component(_context())[0]
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }


def test_rendering_is_deterministic_and_maps_are_sorted() -> None:
    ctx = _context(labels={"z": "1", "a": "2"}, annotations={"y": "1", "b": "2"})
    first, second = render_component(ctx), render_component(ctx)
    assert first == second
    for obj in first:
        for key in ("labels", "annotations"):
            keys = list(obj["metadata"].get(key, {}))
            assert keys == sorted(keys)


def test_the_inference_replica_records_the_parent_generation() -> None:
    isvc = make_isvc("llama", model=None, deploymentMode="OMENative")
    isvc = isvc.model_copy(update={"metadata": isvc.metadata.model_copy(update={"generation": 9})})
    inference_replica = render_component(make_context(isvc, make_runtime("rt")))[0]
    assert inference_replica["metadata"]["annotations"] == {
        "ome.io/controller-write": "true",
        "ome.io/parent-generation": "9",
    }
    assert inference_replica["spec"]["component"] == "engine"
    assert inference_replica["spec"]["parentRef"] == {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "name": "llama",
    }


def test_context_rejects_an_unknown_component() -> None:
    ctx = _context()
    with pytest.raises(ValueError, match="component must be one of"):
        ComponentContext(
            isvc=ctx.isvc,
            component="predictor",
            declared=ctx.declared,
            merged=ctx.merged,
            mode=DeploymentMode.RAW_DEPLOYMENT,
            runtime=ctx.runtime,
            model=None,
            min_replicas=1,
            max_replicas=1,
        )
