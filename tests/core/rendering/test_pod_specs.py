"""Rules of SPEC S5.1.4 (pod spec assembly), S5.1.5 (runner environment) and S5.1.6 (model node
selector)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.rendering import ResourceQuantityError
from ome_operator.core.rendering.pod_specs import render_pod_spec
from tests.builders import make_isvc, make_model, make_runtime
from tests.core.rendering.contexts import make_context

MODE = "ome.io/deploymentMode"
GPU = "nvidia.com/gpu"


def _runner_env(spec: dict[str, Any]) -> dict[str, str]:
    (container,) = spec["containers"]
    return {e["name"]: e["value"] for e in container.get("env", [])}


@pytest.mark.parametrize(
    ("engine", "role", "expected"),
    [
        pytest.param(
            {"runner": {"resources": {"requests": {GPU: 2}}}},
            "default",
            "2",
            id="an integer GPU request times one pod",
        ),
        pytest.param(
            {"runner": {"resources": {"requests": {GPU: "2"}}}},
            "default",
            "2",
            id="a string GPU request is accepted",
        ),
        pytest.param(
            {"runner": {"resources": {"limits": {GPU: 4}}}},
            "default",
            "4",
            id="a GPU limit alone counts, as the API server defaults the request to it",
        ),
        pytest.param(
            {
                "runner": {
                    "resources": {"requests": {GPU: 2}},
                    "env": [{"name": "PARALLELISM_SIZE", "value": "99"}],
                }
            },
            "default",
            "2",
            id="PARALLELISM_SIZE overwrites the user's value",
        ),
        pytest.param(
            {"runner": {"env": [{"name": "PARALLELISM_SIZE", "value": "99"}]}},
            "default",
            "99",
            id="without GPUs PARALLELISM_SIZE is left alone",
        ),
        pytest.param(
            {"runner": {"resources": {"requests": {GPU: 0}}}},
            "default",
            None,
            id="zero GPUs sets no PARALLELISM_SIZE",
        ),
        pytest.param(
            {
                "annotations": {MODE: "MultiNode"},
                "leader": {},
                "worker": {"size": 3},
                "runner": {"resources": {"requests": {GPU: 2}}},
            },
            "worker",
            "8",
            id="MultiNode multiplies by 1 + worker.size",
        ),
        pytest.param(
            {
                "leader": {"runner": {"resources": {"requests": {GPU: 8}}}},
                "worker": {"size": 1, "runner": {"resources": {"requests": {GPU: 8}}}},
            },
            "leader",
            "16",
            id="OMENative multiplies by the pods of one Instance",
        ),
        pytest.param(
            {
                "annotations": {MODE: "OMENative"},
                "leader": {},
                "runner": {"resources": {"requests": {GPU: 1}}},
            },
            "leader",
            "2",
            id="a leader without worker counts one worker",
        ),
        pytest.param(
            {
                "annotations": {MODE: "RawDeployment"},
                "leader": {},
                "worker": {"size": 3},
                "runner": {"resources": {"requests": {GPU: 2}}},
            },
            "default",
            "2",
            id="a Deployment replica is one pod whatever worker.size says",
        ),
    ],
)
def test_parallelism_size(engine: dict[str, Any], role: str, expected: str | None) -> None:
    ctx = make_context(make_isvc("llama", model=None, engine=engine), make_runtime("rt"))
    assert _runner_env(render_pod_spec(ctx, role)).get("PARALLELISM_SIZE") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            "1.5",
            'spec.engine.runner.resources.requests["nvidia.com/gpu"] must be a whole number of '
            'GPUs (got "1.5")',
            id="a fractional GPU request fails",
        ),
        pytest.param(
            True,
            'spec.engine.runner.resources.requests["nvidia.com/gpu"] must be a whole number of '
            "GPUs (got true)",
            id="a boolean GPU request fails",
        ),
    ],
)
def test_gpu_request_that_is_no_count_fails(value: Any, message: str) -> None:
    engine = {"runner": {"resources": {"requests": {GPU: value}}}}
    ctx = make_context(make_isvc("llama", model=None, engine=engine), make_runtime("rt"))
    with pytest.raises(ResourceQuantityError) as caught:
        render_pod_spec(ctx, "default")
    assert str(caught.value) == message


def test_without_a_model_nothing_model_related_is_added() -> None:
    engine = {"runner": {"image": "img", "args": ["--model", "$(MODEL_PATH)"]}}
    ctx = make_context(make_isvc("llama", model=None, engine=engine), make_runtime("rt"))
    assert render_pod_spec(ctx, "default") == {
        "containers": [
            {"name": "ome-container", "image": "img", "args": ["--model", "$(MODEL_PATH)"]}
        ]
    }


def test_a_model_without_storage_path_adds_no_model_path_or_volume() -> None:
    isvc = make_isvc("llama", engine={"runner": {"image": "img"}})
    ctx = make_context(isvc, make_runtime("rt"), model=make_model("llama"))
    assert render_pod_spec(ctx, "default") == {
        "containers": [{"name": "ome-container", "image": "img"}],
        "nodeSelector": {"models.ome.io/clusterbasemodel.llama": "Ready"},
    }


def test_model_mount_is_not_duplicated_when_the_runner_mounts_the_path() -> None:
    mount = {"name": "mine", "mountPath": "/models/llama"}
    isvc = make_isvc("llama", engine={"runner": {"image": "img", "volumeMounts": [mount]}})
    model = make_model("llama", storage={"path": "/models/llama", "storageUri": "s"})
    spec = render_pod_spec(make_context(isvc, make_runtime("rt"), model=model), "default")
    assert spec["containers"][0]["volumeMounts"] == [mount]
    assert spec["volumes"] == [{"name": "llama", "hostPath": {"path": "/models/llama"}}]


@pytest.mark.parametrize(
    ("runtime_spec", "engine", "model_kind", "expected"),
    [
        pytest.param(
            {"nodeSelector": {"a": "runtime", "b": "runtime", "c": "runtime"}},
            {"nodeSelector": {"c": "isvc"}},
            None,
            {"a": "runtime", "b": "runtime", "c": "isvc"},
            id="the ISVC component's node selector wins over the runtime's",
        ),
        pytest.param(
            {
                "nodeSelector": {"a": "runtime", "b": "runtime"},
                "engineConfig": {"nodeSelector": {"b": "config"}},
            },
            {},
            None,
            {"a": "runtime", "b": "config"},
            id="the runtime config's node selector wins over the runtime spec's",
        ),
        pytest.param(
            {},
            {},
            "ClusterBaseModel",
            {"models.ome.io/clusterbasemodel.llama": "Ready"},
            id="a ClusterBaseModel adds the clusterbasemodel key",
        ),
        pytest.param(
            {},
            {},
            "BaseModel",
            {"models.ome.io/team-a.basemodel.llama": "Ready"},
            id="a BaseModel adds the namespaced basemodel key",
        ),
    ],
)
def test_node_selector(
    runtime_spec: dict[str, Any],
    engine: dict[str, Any],
    model_kind: str | None,
    expected: dict[str, str],
) -> None:
    model = None
    if model_kind is not None:
        model = make_model("llama", cluster=model_kind == "ClusterBaseModel", namespace="team-a")
    isvc = make_isvc("svc", namespace="team-a", model=model and "llama", engine=engine)
    ctx = make_context(isvc, make_runtime("rt", **runtime_spec), model=model)
    assert render_pod_spec(ctx, "default")["nodeSelector"] == expected


@pytest.mark.parametrize(
    ("runtime_scheduler", "isvc_scheduler", "expected"),
    [
        pytest.param("volcano", None, "volcano", id="schedulerName falls back to the runtime's"),
        pytest.param("volcano", "kueue", "kueue", id="the component's schedulerName wins"),
        pytest.param(None, None, None, id="no schedulerName anywhere leaves it unset"),
    ],
)
def test_scheduler_name(
    runtime_scheduler: str | None, isvc_scheduler: str | None, expected: str | None
) -> None:
    engine = {"schedulerName": isvc_scheduler} if isvc_scheduler else {}
    runtime = make_runtime("rt", schedulerName=runtime_scheduler)
    ctx = make_context(make_isvc("llama", model=None, engine=engine), runtime)
    assert render_pod_spec(ctx, "default").get("schedulerName") == expected


@pytest.mark.parametrize(
    ("engine", "expected_containers"),
    [
        pytest.param(
            {
                "containers": [
                    {"name": "sidecar", "image": "proxy"},
                    {"name": "ome-container", "image": "old", "ports": [{"containerPort": 9}]},
                ],
                "runner": {"image": "new"},
            },
            [
                {"name": "sidecar", "image": "proxy"},
                {"name": "ome-container", "image": "new", "ports": [{"containerPort": 9}]},
            ],
            id="the runner merges into the container of the same name, runner fields winning",
        ),
        pytest.param(
            {"containers": [{"name": "sidecar", "image": "proxy"}], "runner": {"image": "new"}},
            [{"name": "sidecar", "image": "proxy"}, {"name": "ome-container", "image": "new"}],
            id="a runner without a same-named container is appended as ome-container",
        ),
        pytest.param(
            {"containers": [{"name": "sidecar", "image": "proxy"}]},
            [{"name": "sidecar", "image": "proxy"}],
            id="a component without a runner keeps its containers as written",
        ),
    ],
)
def test_runner_container(engine: dict[str, Any], expected_containers: list[Any]) -> None:
    ctx = make_context(make_isvc("llama", model=None, engine=engine), make_runtime("rt"))
    assert render_pod_spec(ctx, "default")["containers"] == expected_containers


def test_component_fields_that_are_no_pod_fields_stay_off_the_pod() -> None:
    engine = {
        "minReplicas": 2,
        "labels": {"a": "b"},
        "topologyKey": "zone",
        "unknownField": 1,
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "runner": {"image": "img"},
    }
    ctx = make_context(make_isvc("llama", model=None, engine=engine), make_runtime("rt"))
    assert render_pod_spec(ctx, "default") == {
        "containers": [{"name": "ome-container", "image": "img"}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
    }


def test_leader_pod_fields_are_merged_over_the_component_fields() -> None:
    engine = {
        "nodeSelector": {"pool": "component", "zone": "a"},
        "tolerations": [{"key": "component"}],
        "leader": {"nodeSelector": {"pool": "leader"}, "runner": {"image": "leader"}},
        "worker": {"tolerations": [{"key": "worker"}]},
        "runner": {"image": "component"},
    }
    ctx = make_context(make_isvc("llama", model=None, engine=engine), make_runtime("rt"))
    assert render_pod_spec(ctx, "leader") == {
        "containers": [{"name": "ome-container", "image": "leader"}],
        "nodeSelector": {"pool": "leader", "zone": "a"},
        "tolerations": [{"key": "component"}],
    }
    assert render_pod_spec(ctx, "worker") == {
        "containers": [{"name": "ome-container", "image": "component"}],
        "nodeSelector": {"pool": "component", "zone": "a"},
        "tolerations": [{"key": "worker"}],
    }


def test_router_pods_get_no_runtime_node_selector_model_selector_or_model_path() -> None:
    isvc = make_isvc(
        "llama", router={"runner": {"image": "router"}, "config": {"B": "2", "A": "1"}}
    )
    runtime = make_runtime("rt", nodeSelector={"pool": "gpu"})
    model = make_model("llama", storage={"path": "/models/llama", "storageUri": "s"})
    ctx = make_context(isvc, runtime, "router", model=model)
    assert render_pod_spec(ctx, "default") == {
        "containers": [
            {
                "name": "ome-container",
                "image": "router",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            }
        ]
    }
