"""Rules of SPEC S4: merging a runtime config into the component an InferenceService declares."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core import merging
from ome_operator.core.merging import (
    effective_replicas,
    merge_component,
    merge_values,
)
from ome_operator.core.operator_config import ReplicaDefaults
from ome_operator.models import ComponentSpec, LeaderSpec, WorkerSpec, parse

MODE = "ome.io/deploymentMode"


def _component(fields: dict[str, Any]) -> ComponentSpec:
    return parse(ComponentSpec, fields, kind="component", name="test")


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(merging.__all__) == [
        "KEYED_LISTS",
        "component_mode",
        "effective_replicas",
        "merge_component",
        "merge_values",
    ]


@pytest.mark.parametrize(
    ("runtime", "isvc", "expected"),
    [
        # maps: union by key, the InferenceService wins per key
        pytest.param(
            {"labels": {"a": "rt", "b": "rt"}},
            {"labels": {"b": "isvc", "c": "isvc"}},
            {"labels": {"a": "rt", "b": "isvc", "c": "isvc"}},
            id="labels are a union by key and the ISVC wins per key",
        ),
        pytest.param(
            {"annotations": {"a": "rt", "b": "rt"}},
            {"annotations": {"b": "isvc", "c": "isvc"}},
            {"annotations": {"a": "rt", "b": "isvc", "c": "isvc"}},
            id="annotations are a union by key and the ISVC wins per key",
        ),
        pytest.param(
            {"nodeSelector": {"pool": "rt", "zone": "a"}},
            {"nodeSelector": {"pool": "isvc", "gpu": "h100"}},
            {"nodeSelector": {"pool": "isvc", "zone": "a", "gpu": "h100"}},
            id="nodeSelector is a union by key and the ISVC wins per key",
        ),
        pytest.param(
            {
                "runner": {
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "limits": {"nvidia.com/gpu": "1", "memory": "2Gi"},
                    }
                }
            },
            {
                "runner": {
                    "resources": {
                        "requests": {"cpu": "4"},
                        "limits": {"nvidia.com/gpu": "8"},
                    }
                }
            },
            {
                "runner": {
                    "resources": {
                        "requests": {"cpu": "4", "memory": "1Gi"},
                        "limits": {"nvidia.com/gpu": "8", "memory": "2Gi"},
                    }
                }
            },
            id="runner resources requests and limits are unions by key and the ISVC wins",
        ),
        pytest.param(
            {"config": {"A": "rt", "B": "rt"}},
            {"config": {"B": "isvc", "C": "isvc"}},
            {"config": {"A": "rt", "B": "isvc", "C": "isvc"}},
            id="router config is a union by key and the ISVC wins per key",
        ),
        # keyed lists: merged item by item; ISVC items first in ISVC order, then runtime-only
        pytest.param(
            {"runner": {"env": [{"name": "A", "value": "rt"}, {"name": "B", "value": "rt"}]}},
            {"runner": {"env": [{"name": "C", "value": "isvc"}, {"name": "B", "value": "isvc"}]}},
            {
                "runner": {
                    "env": [
                        {"name": "C", "value": "isvc"},
                        {"name": "B", "value": "isvc"},
                        {"name": "A", "value": "rt"},
                    ]
                }
            },
            id="env merges by name, ISVC items first in ISVC order, then runtime-only items",
        ),
        pytest.param(
            {"runner": {"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}},
            {"runner": {"env": [{"name": "A", "valueFrom": {"fieldRef": {"apiVersion": "v1"}}}]}},
            {
                "runner": {
                    "env": [
                        {
                            "name": "A",
                            "valueFrom": {"fieldRef": {"fieldPath": "x", "apiVersion": "v1"}},
                        }
                    ]
                }
            },
            id="env items with the same name are merged recursively",
        ),
        pytest.param(
            {
                "volumes": [
                    {"name": "a", "emptyDir": {}},
                    {"name": "b", "hostPath": {"path": "/rt"}},
                ]
            },
            {"volumes": [{"name": "b", "hostPath": {"path": "/isvc"}}, {"name": "c"}]},
            {
                "volumes": [
                    {"name": "b", "hostPath": {"path": "/isvc"}},
                    {"name": "c"},
                    {"name": "a", "emptyDir": {}},
                ]
            },
            id="volumes merge by name",
        ),
        pytest.param(
            {
                "containers": [
                    {"name": "main", "image": "rt", "env": [{"name": "X", "value": "1"}]},
                    {"name": "sidecar", "image": "side"},
                ]
            },
            {"containers": [{"name": "main", "env": [{"name": "Y", "value": "2"}]}]},
            {
                "containers": [
                    {
                        "name": "main",
                        "image": "rt",
                        "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}],
                    },
                    {"name": "sidecar", "image": "side"},
                ]
            },
            id="containers merge by name, recursively down to their env",
        ),
        pytest.param(
            {"initContainers": [{"name": "init", "image": "rt", "args": ["a"]}]},
            {"initContainers": [{"name": "init", "image": "isvc"}, {"name": "other"}]},
            {
                "initContainers": [
                    {"name": "init", "image": "isvc", "args": ["a"]},
                    {"name": "other"},
                ]
            },
            id="initContainers merge by name",
        ),
        pytest.param(
            {"runner": {"ports": [{"containerPort": 8080, "name": "http"}, {"containerPort": 1}]}},
            {
                "runner": {
                    "ports": [{"containerPort": 9090}, {"containerPort": 8080, "protocol": "TCP"}]
                }
            },
            {
                "runner": {
                    "ports": [
                        {"containerPort": 9090},
                        {"containerPort": 8080, "name": "http", "protocol": "TCP"},
                        {"containerPort": 1},
                    ]
                }
            },
            id="ports merge by containerPort",
        ),
        pytest.param(
            {"runner": {"volumeMounts": [{"name": "rt", "mountPath": "/m", "readOnly": True}]}},
            {"runner": {"volumeMounts": [{"name": "isvc", "mountPath": "/m"}]}},
            {"runner": {"volumeMounts": [{"name": "isvc", "mountPath": "/m", "readOnly": True}]}},
            id="volumeMounts merge by mountPath, the ISVC name winning",
        ),
        # plain lists: the ISVC list replaces the runtime's
        pytest.param(
            {"runner": {"args": ["--a", "--b"]}},
            {"runner": {"args": ["--c"]}},
            {"runner": {"args": ["--c"]}},
            id="args are replaced by the ISVC list",
        ),
        pytest.param(
            {"runner": {"command": ["python", "-m", "vllm"]}},
            {"runner": {"command": ["sglang"]}},
            {"runner": {"command": ["sglang"]}},
            id="command is replaced by the ISVC list",
        ),
        pytest.param(
            {"tolerations": [{"key": "a", "operator": "Exists"}]},
            {"tolerations": [{"key": "b", "operator": "Exists"}]},
            {"tolerations": [{"key": "b", "operator": "Exists"}]},
            id="tolerations are replaced by the ISVC list",
        ),
        pytest.param(
            {"imagePullSecrets": [{"name": "a"}]},
            {"imagePullSecrets": [{"name": "b"}]},
            {"imagePullSecrets": [{"name": "b"}]},
            id="other plain lists are replaced by the ISVC list",
        ),
        # scalars: the ISVC value replaces when set
        pytest.param(
            {"runner": {"image": "rt:1"}},
            {"runner": {"image": "isvc:2"}},
            {"runner": {"image": "isvc:2"}},
            id="runner image is replaced by the ISVC value",
        ),
        pytest.param(
            {"schedulerName": "rt"},
            {"schedulerName": "isvc"},
            {"schedulerName": "isvc"},
            id="schedulerName is replaced by the ISVC value",
        ),
        pytest.param(
            {"worker": {"size": 2}},
            {"worker": {"size": 4}},
            {"worker": {"size": 4}},
            id="worker.size is replaced by the ISVC value",
        ),
        pytest.param(
            {"worker": {"size": 2}},
            {"worker": {"size": 0}},
            {"worker": {"size": 0}},
            id="worker.size 0 is a set value and replaces the runtime's",
        ),
        # runner, leader, worker: merged recursively
        pytest.param(
            {"runner": {"name": "main", "image": "rt", "args": ["--x"]}},
            {"runner": {"image": "isvc"}},
            {"runner": {"name": "main", "image": "isvc", "args": ["--x"]}},
            id="the runner is merged field by field",
        ),
        pytest.param(
            {"leader": {"runner": {"image": "rt", "args": ["--x"]}, "nodeSelector": {"a": "b"}}},
            {"leader": {"runner": {"image": "isvc"}}},
            {"leader": {"runner": {"image": "isvc", "args": ["--x"]}, "nodeSelector": {"a": "b"}}},
            id="the leader is merged recursively",
        ),
        pytest.param(
            {"worker": {"size": 2, "runner": {"image": "rt"}}},
            {"worker": {"runner": {"args": ["--y"]}}},
            {"worker": {"size": 2, "runner": {"image": "rt", "args": ["--y"]}}},
            id="the worker is merged recursively and keeps the runtime size when unset",
        ),
        pytest.param(
            {"leader": {"runner": {"image": "l"}}, "worker": {"size": 2}},
            {"leader": {}, "worker": {}},
            {"leader": {"runner": {"image": "l"}}, "worker": {"size": 2}},
            id="an empty leader and worker keep the runtime settings",
        ),
        pytest.param(
            {"runner": {"image": "rt"}},
            {"leader": {}, "worker": {}},
            {"runner": {"image": "rt"}, "leader": {}, "worker": {}},
            id="an empty leader and worker still declare the shape when the runtime has none",
        ),
        # unset ISVC values never erase runtime values
        pytest.param(
            {"minReplicas": 2, "maxReplicas": 5, "runner": {"image": "rt"}},
            {},
            {"minReplicas": 2, "maxReplicas": 5, "runner": {"image": "rt"}},
            id="an absent ISVC field keeps the runtime value",
        ),
        pytest.param(
            {"maxReplicas": 5},
            {"maxReplicas": 0},
            {"maxReplicas": 5},
            id="maxReplicas 0 is unset and keeps the runtime value",
        ),
        pytest.param(
            {"minReplicas": 2},
            {"minReplicas": 0},
            {"minReplicas": 0},
            id="minReplicas 0 is set and replaces the runtime value",
        ),
        pytest.param(
            {"runner": {"image": "rt"}, "schedulerName": "rt"},
            {"runner": {"image": ""}, "schedulerName": ""},
            {"runner": {"image": "rt"}, "schedulerName": "rt"},
            id="an empty string keeps the runtime value",
        ),
        pytest.param(
            {"runner": {"args": ["--x"], "env": [{"name": "A"}]}, "tolerations": [{"key": "t"}]},
            {"runner": {"args": [], "env": []}, "tolerations": []},
            {"runner": {"args": ["--x"], "env": [{"name": "A"}]}, "tolerations": [{"key": "t"}]},
            id="an empty list keeps the runtime list",
        ),
        pytest.param(
            {"labels": {"a": "b"}, "runner": {"image": "rt"}},
            {"labels": {}, "runner": {}},
            {"labels": {"a": "b"}, "runner": {"image": "rt"}},
            id="an empty map keeps the runtime map",
        ),
        # the runner name
        pytest.param(
            {"runner": {"name": "vllm", "image": "rt"}},
            {"runner": {"name": "", "image": "isvc"}},
            {"runner": {"name": "vllm", "image": "isvc"}},
            id="an empty ISVC runner name keeps the runtime runner's name",
        ),
        pytest.param(
            {"runner": {"name": "vllm"}},
            {"runner": {"image": "isvc"}},
            {"runner": {"name": "vllm", "image": "isvc"}},
            id="an absent ISVC runner name keeps the runtime runner's name",
        ),
        pytest.param(
            {"runner": {"name": "vllm"}},
            {"runner": {"name": "mine"}},
            {"runner": {"name": "mine"}},
            id="a set ISVC runner name wins",
        ),
        # fields a runtime config never contributes
        pytest.param(
            {"acceleratorOverride": {"acceleratorClass": "h100"}, "minReplicas": 1},
            {},
            {"minReplicas": 1},
            id="the runtime's acceleratorOverride is ignored",
        ),
        pytest.param(
            {"autoscalerPolicyRef": {"name": "p"}, "minReplicas": 1},
            {},
            {"minReplicas": 1},
            id="the runtime's autoscalerPolicyRef is ignored",
        ),
        pytest.param(
            {"acceleratorOverride": {"acceleratorClass": "h100"}},
            {"acceleratorOverride": {"acceleratorClass": "a100"}, "autoscalerPolicyRef": {"n": 1}},
            {"acceleratorOverride": {"acceleratorClass": "a100"}, "autoscalerPolicyRef": {"n": 1}},
            id="the ISVC's own acceleratorOverride and autoscalerPolicyRef are kept",
        ),
        # deployment-mode annotations travel through the merge (S3.3 rule 1)
        pytest.param(
            {"annotations": {MODE: "MultiNode"}},
            {"labels": {"a": "b"}},
            {"annotations": {MODE: "MultiNode"}, "labels": {"a": "b"}},
            id="a runtime config's deploymentMode annotation becomes the component's",
        ),
        pytest.param(
            {"annotations": {MODE: "MultiNode", "x": "rt"}},
            {"annotations": {MODE: "OMENative"}},
            {"annotations": {MODE: "OMENative", "x": "rt"}},
            id="the ISVC component's deploymentMode annotation wins over the runtime's",
        ),
        # no runtime config
        pytest.param(
            None,
            {"runner": {"image": "isvc"}, "maxReplicas": 0, "leader": {}, "worker": {}},
            {"runner": {"image": "isvc"}, "maxReplicas": 0, "leader": {}, "worker": {}},
            id="without a runtime config the component is as declared",
        ),
    ],
)
def test_merge_component_follows_the_s4_table(
    runtime: dict[str, Any] | None, isvc: dict[str, Any], expected: dict[str, Any]
) -> None:
    config = _component(runtime) if runtime is not None else None
    assert merge_component(config, _component(isvc), where="svc/engine").raw() == expected


@pytest.mark.parametrize(
    ("runtime", "isvc", "leader", "worker"),
    [
        pytest.param({}, {"leader": {}}, LeaderSpec(), None, id="an empty leader is a leader"),
        pytest.param({}, {"worker": {}}, None, WorkerSpec(), id="an empty worker is a worker"),
        pytest.param(
            {"worker": {"size": 3}}, {}, None, WorkerSpec(size=3), id="a runtime worker is kept"
        ),
        pytest.param({}, {}, None, None, id="no leader or worker on either side stays none"),
    ],
)
def test_the_merged_shape_declares_leader_and_worker(
    runtime: dict[str, Any],
    isvc: dict[str, Any],
    leader: LeaderSpec | None,
    worker: WorkerSpec | None,
) -> None:
    merged = merge_component(_component(runtime), _component(isvc), where="svc/engine")
    assert (merged.leader, merged.worker) == (leader, worker)


def test_merging_leaves_both_inputs_unchanged() -> None:
    runtime = {"runner": {"env": [{"name": "A", "value": "1"}]}, "labels": {"a": "b"}}
    isvc = {"runner": {"env": [{"name": "A", "value": "2"}]}, "labels": {"c": "d"}}
    merge_values(runtime, isvc)
    assert (runtime, isvc) == (
        {"runner": {"env": [{"name": "A", "value": "1"}]}, "labels": {"a": "b"}},
        {"runner": {"env": [{"name": "A", "value": "2"}]}, "labels": {"c": "d"}},
    )


# Replica bounds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("component", "runtime", "isvc", "defaults", "expected"),
    [
        pytest.param("engine", {}, {}, ReplicaDefaults(), (1, 3), id="engine defaults are 1 and 3"),
        pytest.param(
            "decoder", {}, {}, ReplicaDefaults(), (1, 3), id="decoder defaults are 1 and 3"
        ),
        pytest.param("router", {}, {}, ReplicaDefaults(), (1, 2), id="router defaults are 1 and 2"),
        pytest.param(
            "engine",
            {"minReplicas": 2, "maxReplicas": 4},
            {},
            ReplicaDefaults(),
            (2, 4),
            id="the runtime config's bounds apply when the ISVC sets none",
        ),
        pytest.param(
            "engine",
            {"minReplicas": 2, "maxReplicas": 4},
            {"minReplicas": 3, "maxReplicas": 6},
            ReplicaDefaults(),
            (3, 6),
            id="the ISVC component's bounds win over the runtime config's",
        ),
        pytest.param(
            "engine",
            {"minReplicas": 2},
            {"minReplicas": 0},
            ReplicaDefaults(),
            (0, 3),
            id="minReplicas 0 is set and is the effective minimum",
        ),
        pytest.param(
            "engine",
            {"maxReplicas": 6},
            {"maxReplicas": 0},
            ReplicaDefaults(),
            (1, 6),
            id="maxReplicas 0 is unset and the runtime's maximum applies",
        ),
        pytest.param(
            "engine",
            {},
            {"maxReplicas": 0},
            ReplicaDefaults(),
            (1, 3),
            id="maxReplicas 0 with no runtime maximum falls back to the default",
        ),
        pytest.param(
            "engine",
            {},
            {"minReplicas": 5},
            ReplicaDefaults(),
            (5, 5),
            id="a default maximum below the effective minimum is raised to match",
        ),
        pytest.param(
            "router",
            {"minReplicas": 4},
            {},
            ReplicaDefaults(),
            (4, 4),
            id="a default maximum is raised to a runtime minimum too",
        ),
        pytest.param(
            "engine",
            {},
            {"minReplicas": 5, "maxReplicas": 2},
            ReplicaDefaults(),
            (5, 2),
            id="an explicit maximum below the minimum is not raised (only a default is)",
        ),
        pytest.param(
            "decoder",
            {},
            {},
            ReplicaDefaults(min_replicas=2, max_replicas={"decoder": 7}),
            (2, 7),
            id="configured deploy.replicas defaults are used",
        ),
    ],
)
def test_effective_replicas(
    component: str,
    runtime: dict[str, Any],
    isvc: dict[str, Any],
    defaults: ReplicaDefaults,
    expected: tuple[int, int],
) -> None:
    merged = merge_component(_component(runtime), _component(isvc), where=f"svc/{component}")
    assert effective_replicas(component, merged, defaults) == expected


def test_replica_defaults_are_never_written_into_the_component() -> None:
    merged = merge_component(None, _component({"labels": {"a": "b"}}), where="svc/engine")
    assert effective_replicas("engine", merged, ReplicaDefaults()) == (1, 3)
    assert merged.raw() == {"labels": {"a": "b"}}
