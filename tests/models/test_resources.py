"""Rules of the resource models (SPEC S1.2–S1.6): unset vs zero, CRD defaults, round trips,
camelCase aliases, and the InvalidResourceError that bad input raises."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from ome_operator import models
from ome_operator.models import (
    AcceleratorClass,
    InferenceService,
    InvalidResourceError,
    LeaderSpec,
    ModelFormat,
    ModelResource,
    ServingRuntime,
    WorkerSpec,
    from_manifest,
)
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest


def _isvc(**spec: Any) -> dict[str, Any]:
    """An InferenceService manifest whose spec holds exactly ``spec`` (model and engine too)."""
    manifest = isvc_manifest(model=None, engine=None)
    manifest["spec"] = spec
    return manifest


def _engine(**engine: Any) -> dict[str, Any]:
    return isvc_manifest(engine=engine)


def _entry_of(manifest: dict[str, Any]) -> Any:
    return from_manifest(manifest).spec.supported_model_formats[0]


def test_the_package_exports_exactly_its_public_api() -> None:
    assert sorted(models.__all__) == sorted(
        [
            "COMPONENTS",
            "MODEL_BY_KIND",
            "AcceleratorClass",
            "AcceleratorRequirements",
            "AcceleratorSelector",
            "CRDModel",
            "ComponentSpec",
            "InferenceService",
            "InferenceServiceSpec",
            "InvalidResourceError",
            "JsonDict",
            "KedaConfig",
            "LeaderSpec",
            "ModelFormat",
            "ModelFormatRef",
            "ModelRef",
            "ModelResource",
            "ModelSizeRange",
            "ModelSpec",
            "ModelStorage",
            "ObjectMeta",
            "RuntimeRef",
            "ServingRuntime",
            "ServingRuntimeSpec",
            "SupportedModelFormat",
            "WorkerSpec",
            "from_manifest",
            "parse",
            "storable_manifest",
        ]
    )


@pytest.mark.parametrize(
    ("manifest", "kind", "is_cluster"),
    [
        pytest.param(isvc_manifest(), InferenceService, None, id="an InferenceService parses"),
        pytest.param(
            runtime_manifest(cluster=False), ServingRuntime, False, id="a ServingRuntime parses"
        ),
        pytest.param(
            runtime_manifest(cluster=True),
            ServingRuntime,
            True,
            id="a ClusterServingRuntime parses into the same model, cluster-scoped",
        ),
        pytest.param(model_manifest(cluster=False), ModelResource, False, id="a BaseModel parses"),
        pytest.param(
            model_manifest(cluster=True),
            ModelResource,
            True,
            id="a ClusterBaseModel parses into the same model, cluster-scoped",
        ),
        pytest.param(
            {"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": "a"}},
            AcceleratorClass,
            None,
            id="an AcceleratorClass parses",
        ),
    ],
)
def test_from_manifest_parses_every_ome_kind_into_its_model(
    manifest: dict[str, Any], kind: type, is_cluster: bool | None
) -> None:
    parsed = from_manifest(manifest)
    assert type(parsed) is kind
    assert getattr(parsed, "is_cluster", None) is is_cluster


# S1.3 / S1.5: unset stays apart from zero, false and empty ------------------------------------


@pytest.mark.parametrize(
    ("manifest", "read", "expected"),
    [
        pytest.param(
            _engine(), lambda o: o.spec.engine.min_replicas, None, id="minReplicas absent is unset"
        ),
        pytest.param(
            _engine(minReplicas=0),
            lambda o: o.spec.engine.min_replicas,
            0,
            id="minReplicas 0 is kept as 0",
        ),
        pytest.param(
            _engine(), lambda o: o.spec.engine.max_replicas, None, id="maxReplicas absent is unset"
        ),
        pytest.param(
            _engine(maxReplicas=0),
            lambda o: o.spec.engine.max_replicas,
            0,
            id="maxReplicas 0 is kept as written (the merge treats it as unset)",
        ),
        pytest.param(
            _engine(worker={}),
            lambda o: o.spec.engine.worker.size,
            None,
            id="worker.size absent is unset",
        ),
        pytest.param(
            _engine(worker={"size": 0}),
            lambda o: o.spec.engine.worker.size,
            0,
            id="worker.size 0 is kept as 0",
        ),
        pytest.param(_engine(), lambda o: o.spec.engine.leader, None, id="leader absent is unset"),
        pytest.param(
            _engine(leader={}),
            lambda o: o.spec.engine.leader,
            LeaderSpec(),
            id="an empty leader is a declared leader",
        ),
        pytest.param(_engine(), lambda o: o.spec.engine.worker, None, id="worker absent is unset"),
        pytest.param(
            _engine(worker={}),
            lambda o: o.spec.engine.worker,
            WorkerSpec(),
            id="an empty worker is a declared worker",
        ),
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].auto_select,
            None,
            id="autoSelect absent is unset, not false",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(autoSelect=False)]),
            lambda o: o.spec.supported_model_formats[0].auto_select,
            False,
            id="autoSelect false is kept as false",
        ),
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].priority,
            None,
            id="priority absent is unset, not 1",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(priority=1)]),
            lambda o: o.spec.supported_model_formats[0].priority,
            1,
            id="priority 1 is kept as set",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(modelFormat={"name": "safetensors", "weight": 0})]),
            lambda o: o.spec.supported_model_formats[0].model_format.weight,
            0,
            id="modelFormat weight 0 is kept as 0, not the default 1",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(modelFramework={"name": "transformers", "weight": 0})]),
            lambda o: o.spec.supported_model_formats[0].model_framework.weight,
            0,
            id="modelFramework weight 0 is kept as 0, not the default 1",
        ),
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].model_format.version,
            None,
            id="an entry's modelFormat version absent is unset",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(fmt_version="")]),
            lambda o: o.spec.supported_model_formats[0].model_format.version,
            "",
            id="an entry's empty modelFormat version is kept as set",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(framework_version="")]),
            lambda o: o.spec.supported_model_formats[0].model_framework.version,
            "",
            id="an entry's empty modelFramework version is kept as set",
        ),
        pytest.param(
            model_manifest(),
            lambda o: o.spec.model_format.version,
            None,
            id="a model's format version absent is unset",
        ),
        pytest.param(
            model_manifest(modelFormat={"name": "safetensors", "version": ""}),
            lambda o: o.spec.model_format.version,
            "",
            id="a model's empty format version is kept as set",
        ),
        pytest.param(
            model_manifest(modelFramework={"name": "transformers", "version": ""}),
            lambda o: o.spec.model_framework.version,
            "",
            id="a model's empty framework version is kept as set",
        ),
        pytest.param(
            model_manifest(),
            lambda o: o.spec.model_parameter_size,
            None,
            id="modelParameterSize absent is unset",
        ),
        pytest.param(
            model_manifest(modelParameterSize=""),
            lambda o: o.spec.model_parameter_size,
            "",
            id="an empty modelParameterSize is kept as set",
        ),
        pytest.param(
            model_manifest(),
            lambda o: o.spec.model_architecture,
            None,
            id="a model's modelArchitecture absent is unset",
        ),
        pytest.param(
            model_manifest(modelArchitecture=""),
            lambda o: o.spec.model_architecture,
            "",
            id="a model's empty modelArchitecture is kept as set",
        ),
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].model_architecture,
            None,
            id="an entry's modelArchitecture absent is unset",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(modelArchitecture="")]),
            lambda o: o.spec.supported_model_formats[0].model_architecture,
            "",
            id="an entry's empty modelArchitecture is kept as set",
        ),
        pytest.param(
            model_manifest(),
            lambda o: o.spec.quantization,
            None,
            id="a model's quantization absent is unset",
        ),
        pytest.param(
            model_manifest(quantization=""),
            lambda o: o.spec.quantization,
            "",
            id="a model's empty quantization is kept as set",
        ),
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].quantization,
            None,
            id="an entry's quantization absent is unset",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(quantization="")]),
            lambda o: o.spec.supported_model_formats[0].quantization,
            "",
            id="an entry's empty quantization is kept as set",
        ),
    ],
)
def test_unset_stays_distinguishable_from_zero_false_and_empty(
    manifest: dict[str, Any], read: Callable[[Any], Any], expected: Any
) -> None:
    found = read(from_manifest(manifest))
    assert (type(found), found) == (type(expected), expected)


# S1.2 / S1.5: CRD defaults applied when a field is absent, never written back -----------------


@pytest.mark.parametrize(
    ("manifest", "read", "expected"),
    [
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].model_format,
            ModelFormat(name="safetensors", version=None, operator="Equal", weight=1),
            id="a modelFormat without operator and weight gets Equal and 1",
        ),
        pytest.param(
            runtime_manifest(formats=[entry()]),
            lambda o: o.spec.supported_model_formats[0].model_framework,
            ModelFormat(name="transformers", version=None, operator="Equal", weight=1),
            id="a modelFramework without operator and weight gets Equal and 1",
        ),
        pytest.param(
            runtime_manifest(
                formats=[entry(modelFormat={"name": "safetensors", "operator": "LessThan"})]
            ),
            lambda o: o.spec.supported_model_formats[0].model_format.operator,
            "LessThan",
            id="any operator string is accepted as written",
        ),
        pytest.param(
            _isvc(model={"name": "llama"}),
            lambda o: (o.spec.model.kind, o.spec.model.api_group),
            ("ClusterBaseModel", "ome.io"),
            id="model.kind defaults to ClusterBaseModel",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            lambda o: (o.spec.runtime.kind, o.spec.runtime.api_group, o.spec.runtime.auto_sync),
            ("ClusterServingRuntime", "ome.io", True),
            id="runtime.kind defaults to ClusterServingRuntime and autoSync to true",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt", "autoSync": False}),
            lambda o: o.spec.runtime.auto_sync,
            False,
            id="autoSync false is kept as false",
        ),
        pytest.param(
            _isvc(model={"name": "llama"}),
            lambda o: o.spec.deployment_mode,
            None,
            id="spec.deploymentMode has no default (unset is not RawDeployment)",
        ),
        pytest.param(
            model_manifest(),
            lambda o: o.spec.distribution,
            "PerNode",
            id="a model's distribution defaults to PerNode",
        ),
    ],
)
def test_crd_defaults_apply_to_absent_fields(
    manifest: dict[str, Any], read: Callable[[Any], Any], expected: Any
) -> None:
    assert read(from_manifest(manifest)) == expected


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(runtime_manifest(formats=[entry()]), id="entry defaults are not written out"),
        pytest.param(
            _isvc(model={"name": "llama"}, runtime={"name": "rt"}),
            id="model and runtime reference defaults are not written out",
        ),
        pytest.param(model_manifest(), id="model spec defaults are not written out"),
    ],
)
def test_raw_returns_the_object_without_defaults_filled_in(manifest: dict[str, Any]) -> None:
    assert from_manifest(manifest).raw() == manifest


# Round trip: unknown fields survive at every level -------------------------------------------

ISVC_WITH_EXTRAS: dict[str, Any] = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {
        "name": "svc",
        "namespace": "ns",
        "annotations": {"ome.io/deploymentMode": "omenative"},
        "finalizers": ["ome.io/finalizer"],
        "managedFields": [{"manager": "kubectl"}],
    },
    "spec": {
        "model": {"name": "llama", "kind": "BaseModel", "apiGroup": "ome.io", "extra": 1},
        "runtime": {"name": "rt", "revision": "rt-abc", "autoSync": False, "extra": 2},
        "acceleratorSelector": {
            "acceleratorClass": "h100",
            "constraints": {"minMemory": 80},
            "policy": "Required",
        },
        "engine": {
            "minReplicas": 0,
            "maxReplicas": 0,
            "minAvailable": "50%",
            "annotations": {"ome.io/deploymentMode": "OMENative"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "topologyKey": "zone",
            "lifecycle": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}},
            "autoscalerPolicyRef": {"name": "p"},
            "acceleratorOverride": {"acceleratorClass": "a100", "extra": 3},
            "runner": {"name": "", "image": "vllm", "args": ["--x"], "unknownRunnerField": 4},
            "leader": {"runner": {"image": "l"}, "hostNetwork": True},
            "worker": {"size": 0, "runner": {"image": "w"}, "schedulerName": "volcano"},
        },
        "decoder": {},
        "router": {"config": {"K": "V"}, "maxUnavailable": 1, "timeoutSeconds": 30},
        "traffic": {"canary": 10},
        "rollout": {"strategy": "x"},
        "scalingPolicy": {"x": 1},
        "placement": {"clusters": ["a"]},
        "routing": {},
        "replicaRefs": [],
    },
    "status": {"url": "http://svc", "conditions": [{"type": "Ready", "status": "True"}]},
}

RUNTIME_WITH_EXTRAS: dict[str, Any] = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ServingRuntime",
    "metadata": {"name": "rt", "namespace": "ns", "labels": {"a": "b"}, "resourceVersion": "7"},
    "spec": {
        "supportedModelFormats": [
            {
                "name": "llama",
                "modelFormat": {"name": "safetensors", "version": "1", "extra": 5},
                "modelFramework": {"name": "transformers", "operator": "GreaterThan"},
                "modelType": "llama",
                "version": "3",
                "modelCacheProviders": ["x"],
                "acceleratorConfig": {"h100": {}},
                "diffusionPipeline": {"className": "X", "vae": {"library": "l"}},
                "autoSelect": False,
                "priority": 2,
            }
        ],
        "modelSizeRange": {"min": "1B", "extra": 6},
        "disabled": False,
        "acceleratorRequirements": {"acceleratorClasses": [], "preferenceOrder": ["a"]},
        "protocolVersions": ["openAI"],
        "scalingPolicy": {},
        "volumes": [{"name": "v"}],
        "engineConfig": {"runner": {"image": "e"}, "affinity": {"x": {}}},
        "routerConfig": {"config": {}},
    },
}

MODEL_WITH_EXTRAS: dict[str, Any] = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterBaseModel",
    "metadata": {"name": "llama", "annotations": {"models.ome.io/category": "LARGE"}},
    "spec": {
        "modelFormat": {"name": "safetensors", "version": "1.0.0", "extra": 7},
        "modelFramework": {"name": "transformers", "extra": 8},
        "modelType": "llama",
        "vendor": "meta",
        "storage": {"storageUri": "hf://meta/llama", "path": "/models", "key": "k"},
        "distribution": "PerNode",
    },
    "status": {"state": "Ready"},
}


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(ISVC_WITH_EXTRAS, id="an InferenceService keeps unknown fields everywhere"),
        pytest.param(RUNTIME_WITH_EXTRAS, id="a ServingRuntime keeps unknown fields everywhere"),
        pytest.param(MODEL_WITH_EXTRAS, id="a ClusterBaseModel keeps unknown fields everywhere"),
        pytest.param(
            {"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": "a"}},
            id="an AcceleratorClass keeps its fields",
        ),
    ],
)
def test_raw_round_trips_the_object_as_written(manifest: dict[str, Any]) -> None:
    written = copy.deepcopy(manifest)
    assert from_manifest(manifest).raw() == written
    assert manifest == written


# camelCase aliases ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "read", "expected"),
    [
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            lambda o: o.spec.deployment_mode,
            "OMENative",
            id="spec.deploymentMode is deployment_mode",
        ),
        pytest.param(
            _isvc(acceleratorSelector={"acceleratorClass": "h100"}),
            lambda o: o.spec.accelerator_selector.accelerator_class,
            "h100",
            id="spec.acceleratorSelector.acceleratorClass is read as accelerator_class",
        ),
        pytest.param(
            _engine(
                minReplicas=1,
                maxReplicas=2,
                minAvailable=1,
                maxUnavailable="10%",
                deploymentStrategy={"type": "Recreate"},
                nodeSelector={"a": "b"},
                schedulerName="volcano",
                acceleratorOverride={"acceleratorClass": "a100"},
            ),
            lambda o: (
                o.spec.engine.min_replicas,
                o.spec.engine.max_replicas,
                o.spec.engine.min_available,
                o.spec.engine.max_unavailable,
                o.spec.engine.deployment_strategy,
                o.spec.engine.node_selector,
                o.spec.engine.scheduler_name,
                o.spec.engine.accelerator_override.accelerator_class,
            ),
            (1, 2, 1, "10%", {"type": "Recreate"}, {"a": "b"}, "volcano", "a100"),
            id="component fields are read through their camelCase names",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt", "autoSync": False, "apiGroup": "x"}),
            lambda o: (o.spec.runtime.auto_sync, o.spec.runtime.api_group),
            (False, "x"),
            id="spec.runtime.autoSync and apiGroup are auto_sync and api_group",
        ),
        pytest.param(
            runtime_manifest(
                formats=[entry(autoSelect=True, modelArchitecture="A")],
                size_range=("1B", "2B"),
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                engineConfig={"minReplicas": 2},
                schedulerName="volcano",
            ),
            lambda o: (
                o.spec.supported_model_formats[0].auto_select,
                o.spec.supported_model_formats[0].model_architecture,
                (o.spec.model_size_range.min, o.spec.model_size_range.max),
                o.spec.accelerator_requirements.accelerator_classes,
                o.spec.engine_config.min_replicas,
                o.spec.scheduler_name,
            ),
            (True, "A", ("1B", "2B"), ["h100"], 2, "volcano"),
            id="runtime fields are read through their camelCase names",
        ),
        pytest.param(
            model_manifest(
                modelParameterSize="7B",
                modelArchitecture="A",
                diffusionPipeline={},
                storage={"storageUri": "hf://x", "path": "/m"},
            ),
            lambda o: (
                o.spec.model_parameter_size,
                o.spec.model_architecture,
                o.spec.diffusion_pipeline,
                o.spec.storage.storage_uri,
                o.spec.storage.path,
            ),
            ("7B", "A", {}, "hf://x", "/m"),
            id="model fields are read through their camelCase names",
        ),
        pytest.param(
            {**_isvc(), "metadata": {"name": "svc", "resourceVersion": "9", "generation": 2}},
            lambda o: (o.metadata.resource_version, o.metadata.generation),
            ("9", 2),
            id="metadata.resourceVersion is resource_version",
        ),
    ],
)
def test_fields_are_read_through_camel_case_aliases(
    manifest: dict[str, Any], read: Callable[[Any], Any], expected: Any
) -> None:
    assert read(from_manifest(manifest)) == expected


def test_models_are_frozen() -> None:
    isvc = from_manifest(_engine(minReplicas=1))
    with pytest.raises(ValidationError) as raised:
        isvc.spec.engine.min_replicas = 2  # type: ignore[misc]
    assert [e["type"] for e in raised.value.errors()] == ["frozen_instance"]


# Bad input: one InvalidResourceError naming kind, object, every field path and value ----------


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(
            _engine(minReplicas="2"),
            'InferenceService "default/svc" is invalid: '
            'spec.engine.minReplicas: must be an integer (got "2")',
            id="a quoted integer is not an integer",
        ),
        pytest.param(
            _engine(maxReplicas=True),
            'InferenceService "default/svc" is invalid: '
            "spec.engine.maxReplicas: must be an integer (got true)",
            id="a boolean is not an integer",
        ),
        pytest.param(
            _engine(minReplicas=1.5),
            'InferenceService "default/svc" is invalid: '
            "spec.engine.minReplicas: must be an integer (got 1.5)",
            id="a float is not an integer",
        ),
        pytest.param(
            _engine(worker={"size": "2"}),
            'InferenceService "default/svc" is invalid: '
            'spec.engine.worker.size: must be an integer (got "2")',
            id="worker.size must be an integer",
        ),
        pytest.param(
            _engine(minAvailable=1.5),
            'InferenceService "default/svc" is invalid: '
            "spec.engine.minAvailable: must be an integer or a string (got 1.5)",
            id="an IntOrString field names both types once",
        ),
        pytest.param(
            _engine(maxUnavailable=False),
            'InferenceService "default/svc" is invalid: '
            "spec.engine.maxUnavailable: must be an integer or a string (got false)",
            id="a boolean is not an IntOrString",
        ),
        pytest.param(
            _engine(annotations={"ome.io/deploymentMode": 3}),
            'InferenceService "default/svc" is invalid: '
            'spec.engine.annotations["ome.io/deploymentMode"]: must be a string (got 3)',
            id="a map key that is not a name is shown in brackets",
        ),
        pytest.param(
            _engine(labels="app"),
            'InferenceService "default/svc" is invalid: '
            'spec.engine.labels: must be an object (got "app")',
            id="a map must be an object",
        ),
        pytest.param(
            _engine(leader=[]),
            'InferenceService "default/svc" is invalid: '
            "spec.engine.leader: must be an object (got [])",
            id="leader must be an object",
        ),
        pytest.param(
            _isvc(model={"name": "llama"}, engine="vllm"),
            'InferenceService "default/svc" is invalid: '
            'spec.engine: must be an object (got "vllm")',
            id="a component must be an object",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt", "autoSync": "false"}),
            'InferenceService "default/svc" is invalid: '
            'spec.runtime.autoSync: must be a boolean (got "false")',
            id="autoSync must be a boolean",
        ),
        pytest.param(
            _isvc(model={"kind": "BaseModel"}),
            'InferenceService "default/svc" is invalid: spec.model.name: is required but not set',
            id="spec.model.name is required when spec.model is set",
        ),
        pytest.param(
            _isvc(runtime={"kind": "ServingRuntime"}),
            'InferenceService "default/svc" is invalid: spec.runtime.name: is required but not set',
            id="spec.runtime.name is required when spec.runtime is set",
        ),
        pytest.param(
            _isvc(model={"name": "llama"}, deploymentMode="MultiNode"),
            'InferenceService "default/svc" is invalid: '
            'spec.deploymentMode: must be "OMENative" or "RawDeployment" (got "MultiNode")',
            id="spec.deploymentMode outside the enum is invalid",
        ),
        pytest.param(
            _isvc(model={"name": "llama"}, deploymentMode="omenative"),
            'InferenceService "default/svc" is invalid: '
            'spec.deploymentMode: must be "OMENative" or "RawDeployment" (got "omenative")',
            id="spec.deploymentMode is case-sensitive",
        ),
        pytest.param(
            isvc_manifest(engine={"minReplicas": "1"}, decoder={"maxReplicas": "x"}),
            'InferenceService "default/svc" is invalid: '
            'spec.engine.minReplicas: must be an integer (got "1"); '
            'spec.decoder.maxReplicas: must be an integer (got "x")',
            id="every problem is reported together, in field order",
        ),
        pytest.param(
            {**_isvc(), "metadata": {"name": "svc", "labels": {"app": 1, "1x": 2}}},
            'InferenceService "svc" is invalid: metadata.labels.app: must be a string (got 1); '
            'metadata.labels["1x"]: must be a string (got 2)',
            id="each bad map value is reported under its own key",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(priority=0)]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[0].priority: must be at least 1 (got 0)",
            id="priority 0 is below the schema minimum of 1",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(), entry(priority=-1)]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[1].priority: must be at least 1 (got -1)",
            id="list indexes appear in brackets",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(priority="1")]),
            'ClusterServingRuntime "rt" is invalid: '
            'spec.supportedModelFormats[0].priority: must be an integer (got "1")',
            id="priority must be an integer",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(autoSelect="true")]),
            'ClusterServingRuntime "rt" is invalid: '
            'spec.supportedModelFormats[0].autoSelect: must be a boolean (got "true")',
            id="autoSelect must be a boolean",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(modelFormat={"name": "x", "weight": "1"})]),
            'ClusterServingRuntime "rt" is invalid: '
            'spec.supportedModelFormats[0].modelFormat.weight: must be an integer (got "1")',
            id="weight must be an integer",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(modelFormat={"version": "1"})]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[0].modelFormat.name: is required but not set",
            id="an entry's modelFormat.name is required",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(modelFramework={})]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[0].modelFramework.name: is required but not set",
            id="an entry's modelFramework.name is required",
        ),
        pytest.param(
            runtime_manifest(formats=[{"modelFormat": {"name": "safetensors"}}]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[0].modelFramework: is required but not set",
            id="an entry's modelFramework is required",
        ),
        pytest.param(
            runtime_manifest(cluster=False, disabled="yes"),
            'ServingRuntime "default/rt" is invalid: spec.disabled: must be a boolean (got "yes")',
            id="a namespaced object is named namespace/name",
        ),
        pytest.param(
            runtime_manifest(acceleratorRequirements={"acceleratorClasses": ["h100", 7]}),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.acceleratorRequirements.acceleratorClasses[1]: must be a string (got 7)",
            id="an accelerator class must be a string",
        ),
        pytest.param(
            model_manifest(modelParameterSize=7),
            'ClusterBaseModel "llama" is invalid: '
            "spec.modelParameterSize: must be a string (got 7)",
            id="modelParameterSize must be a string",
        ),
        pytest.param(
            model_manifest(cluster=False, namespace="ns", disabled="true"),
            'BaseModel "ns/llama" is invalid: spec.disabled: must be a boolean (got "true")',
            id="disabled must be a boolean",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
            'Deployment "d" is invalid: kind: must be an ome.io kind: InferenceService, '
            "ServingRuntime, ClusterServingRuntime, BaseModel, ClusterBaseModel, AcceleratorClass "
            '(got "Deployment")',
            id="a kind outside ome.io is refused with the kinds it could be",
        ),
        pytest.param(
            {"metadata": {"name": "x", "namespace": "ns"}},
            'object "ns/x" is invalid: kind: is required but not set',
            id="an object without kind is refused",
        ),
        pytest.param(
            ["kind", "InferenceService"],
            'object "" is invalid: (root): must be an object (got ["kind", "InferenceService"])',
            id="a manifest that is not an object is refused",
        ),
        pytest.param(
            {"kind": "InferenceService", "metadata": {"name": "svc"}, "spec": []},
            'InferenceService "svc" is invalid: spec: must be an object (got [])',
            id="spec must be an object",
        ),
        pytest.param(
            _engine(minReplicas="x" * 1_000_000),
            'InferenceService "default/svc" is invalid: spec.engine.minReplicas: '
            f'must be an integer (got "{"x" * 76}...)',
            id="a huge value is shown cut short",
        ),
        pytest.param(
            {"kind": "ClusterServingRuntime", "metadata": {"name": None}},
            'ClusterServingRuntime "" is invalid: metadata.name: must be a string (got null)',
            id="a name that is not a string is not shown as the object's name",
        ),
    ],
)
def test_bad_input_raises_one_error_naming_object_paths_and_values(
    manifest: Any, message: str
) -> None:
    with pytest.raises(InvalidResourceError) as raised:
        from_manifest(manifest)
    assert str(raised.value) == message
