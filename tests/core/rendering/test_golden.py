"""Whole manifests per mode, compared with hand-checked golden files (S5.1–S5.5).

Each case in ``cases/`` holds the inputs (runtime, model, InferenceService); ``golden/`` holds the
expected objects. A mismatch fails with a diff; goldens are never rewritten by the tests.
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ome_operator.core.rendering import ComponentContext, render_component, render_instance_pods
from ome_operator.models import InferenceService, ModelResource, ServingRuntime, from_manifest
from tests.core.rendering.contexts import assert_matches_golden, make_context

CASES = pathlib.Path(__file__).parent / "cases"


def load_case(name: str, component: str) -> ComponentContext:
    """The context of ``component`` in case ``name``: its InferenceService, runtime and model."""
    objects = [
        from_manifest(doc) for doc in yaml.safe_load_all((CASES / f"{name}.yaml").read_text())
    ]
    isvc = next(o for o in objects if isinstance(o, InferenceService))
    runtime = next(o for o in objects if isinstance(o, ServingRuntime))
    model = next((o for o in objects if isinstance(o, ModelResource)), None)
    return make_context(isvc, runtime, component, model=model if isvc.spec.model else None)


@pytest.mark.parametrize(
    ("case", "component"),
    [
        pytest.param(
            "raw_deployment_cluster_base_model",
            "engine",
            id="a RawDeployment engine serving a ClusterBaseModel",
        ),
        pytest.param(
            "raw_deployment_base_model", "engine", id="a RawDeployment engine serving a BaseModel"
        ),
        pytest.param("multi_node", "engine", id="a MultiNode engine with leader and workers"),
        pytest.param(
            "ome_native_single_pod", "engine", id="an OMENative engine with one pod per Instance"
        ),
        pytest.param(
            "ome_native_leader_worker",
            "engine",
            id="an OMENative engine whose ISVC declares leader and worker",
        ),
        pytest.param(
            "ome_native_runtime_worker",
            "engine",
            id="an OMENative engine whose worker comes only from the runtime",
        ),
        pytest.param("router_config", "router", id="a RawDeployment router with config"),
    ],
)
def test_component_objects_match_their_golden_file(case: str, component: str) -> None:
    assert_matches_golden(render_component(load_case(case, component)), case)


@pytest.mark.parametrize(
    ("case", "index"),
    [
        pytest.param("ome_native_single_pod", 0, id="the single pod of Instance 0"),
        pytest.param("ome_native_leader_worker", 1, id="the leader and two workers of Instance 1"),
    ],
)
def test_instance_pods_match_their_golden_file(case: str, index: int) -> None:
    inference_replica = render_component(load_case(case, "engine"))[0]
    assert_matches_golden(render_instance_pods(inference_replica, index), f"{case}_pods")
