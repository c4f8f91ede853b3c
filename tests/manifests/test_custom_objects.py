"""ome.io objects against our CRDs (tests/support/crd_schema.py): the samples, the builders' output,
every status shape the operator writes (a status the API server rejects is silently lost, see
shared/notes/testing-stack.md §5), and the converter's own rules."""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonschema
import pytest

from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest
from tests.manifests.manifest_files import MANIFESTS, Document, documents, params
from tests.support.crd_schema import (
    CustomObjectInvalid,
    apply_defaults,
    to_json_schema,
    validate_custom_object,
    version_schema,
)

SAMPLES = tuple(doc for doc in documents(MANIFESTS / "samples") if doc.group == "ome.io")


def test_the_samples_create_the_namespaces_they_use() -> None:
    samples = documents(MANIFESTS / "samples")
    created = {doc.name for doc in samples if doc.kind == "Namespace"}
    used = {doc.namespace for doc in samples if doc.namespace is not None}
    assert created == used


def test_there_are_samples() -> None:
    assert {doc.kind for doc in SAMPLES} >= {
        "InferenceService",
        "ClusterServingRuntime",
        "ClusterBaseModel",
    }


@pytest.mark.parametrize("doc", params(SAMPLES))
def test_every_sample_is_valid_for_our_crds(doc: Document) -> None:
    validate_custom_object(doc.body)


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(isvc_manifest(), id="InferenceService"),
        pytest.param(
            isvc_manifest(runtime={"name": "rt"}, decoder={}, router={"config": {"A": "b"}}),
            id="InferenceService with a named runtime and every component",
        ),
        pytest.param(runtime_manifest(), id="ClusterServingRuntime"),
        pytest.param(
            runtime_manifest(cluster=False, size_range=("1B", "13B")),
            id="ServingRuntime with a size range",
        ),
        pytest.param(
            runtime_manifest(formats=[entry(fmt_version="1", autoSelect=True, priority=2)]),
            id="ClusterServingRuntime entry with version and priority",
        ),
        pytest.param(model_manifest(), id="ClusterBaseModel"),
        pytest.param(model_manifest(cluster=False, framework=None), id="BaseModel"),
    ],
)
def test_the_test_builders_make_objects_our_crds_accept(manifest: dict[str, Any]) -> None:
    validate_custom_object(manifest)


# ------------------------------------------------------------------ status the operator writes

NOW = "2025-01-02T03:04:05Z"


def _isvc_with_status(status: dict[str, Any]) -> dict[str, Any]:
    return {**isvc_manifest(), "status": status}


ISVC_STATUSES = [
    pytest.param(
        {
            "conditions": [
                {
                    "type": "RuntimeReady",
                    "status": "False",
                    "reason": "RuntimeNotFound",
                    "severity": "Info",
                    "message": "runtime srt-llama-3-2-1b-instruct not found in namespace "
                    "llama-demo or at cluster scope",
                    "lastTransitionTime": NOW,
                }
            ]
        },
        id="RuntimeReady False (S8.2)",
    ),
    pytest.param(
        {
            "observedGeneration": 3,
            "url": "http://svc.default.svc.cluster.local:8080",
            "address": {"url": "http://svc.default.svc.cluster.local:8080"},
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": NOW}
                for t in ("EngineReady", "IngressReady", "Ready")
            ],
            "components": {
                "engine": {
                    "url": "http://svc-engine.default.svc.cluster.local",
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "svc-engine",
                    },
                }
            },
            "runtime": {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
        },
        id="RawDeployment engine ready (S5.2, S16.4)",
    ),
    pytest.param(
        {
            "components": {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ServiceSpec",
                    "lifecycle": {
                        "replicas": 2,
                        "readyReplicas": 1,
                        "servingReplicas": 1,
                        "availableReplicas": 1,
                        "updatedReplicas": 2,
                        "updatedReadyReplicas": 1,
                        "currentRevision": "a1b2c3d4",
                        "updateRevision": "a1b2c3d4",
                        "conditions": [
                            {
                                "type": "Ready",
                                "status": "True",
                                "reason": "MinimumAvailable",
                                "message": "1/2 Instances serving (min 1)",
                                "lastTransitionTime": NOW,
                            }
                        ],
                    },
                    "scaleTargetRef": {
                        "apiVersion": "ome.io/v1beta1",
                        "kind": "InferenceReplica",
                        "name": "svc-engine",
                    },
                },
                "router": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ComponentAnnotation",
                },
            },
            "runtime": {"kind": "ServingRuntime", "name": "rt", "selection": "Explicit"},
        },
        id="OMENative engine lifecycle (S5.4.10)",
    ),
    pytest.param(
        {
            "kopf": {"progress": {"reconcile": {"started": NOW, "retries": 1, "success": False}}},
            "reconcile": {"any": ["handler", "result"]},
            "components": {
                "decoder": {
                    "deploymentMode": "MultiNode",
                    "deploymentModeSource": "LeaderWorkerShape",
                }
            },
        },
        id="kopf progress and handler results are preserved",
    ),
]


@pytest.mark.parametrize("status", ISVC_STATUSES)
def test_inference_service_status_shapes_are_accepted(status: dict[str, Any]) -> None:
    validate_custom_object(_isvc_with_status(status))


def _replica(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {
            "name": "svc-engine",
            "namespace": "default",
            "labels": {
                "ome.io/inferenceservice": "svc",
                "component": "engine",
                "ome.io/managed-by": "OMENative",
            },
            "annotations": {"ome.io/controller-write": "true", "ome.io/parent-generation": "2"},
        },
        "spec": {
            "component": "engine",
            "parentRef": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "name": "svc",
            },
            "replicas": 2,
            "runners": [
                {"name": "leader", "size": 1, "template": {"spec": {"containers": []}}},
                {"name": "worker", "size": 2, "template": {"spec": {"containers": []}}},
            ],
            "minReadySeconds": 0,
            "lifecycle": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}},
        },
        "status": status,
    }


def test_an_inference_replica_with_its_status_is_accepted() -> None:
    validate_custom_object(
        _replica(
            observedGeneration=1,
            replicas=2,
            readyReplicas=2,
            servingReplicas=2,
            availableReplicas=2,
            updatedReplicas=2,
            updatedReadyReplicas=2,
            currentRevision="a1b2c3d4",
            updateRevision="a1b2c3d4",
            labelSelector="component=engine,ome.io/inferenceservice=svc",
            instanceStatuses=[
                {"index": 0, "phase": "Ready", "incarnation": 1, "readyPods": 3},
                {"index": 1, "phase": "Creating", "incarnation": 1, "readyPods": 0},
            ],
            conditions=[
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "AllInstancesReady",
                    "message": "2/2 Instances Ready",
                    "lastTransitionTime": NOW,
                }
            ],
        )
    )


# ------------------------------------------------------------------ what the CRDs reject


def _rejects(manifest: dict[str, Any]) -> str:
    with pytest.raises(CustomObjectInvalid) as caught:
        validate_custom_object(manifest)
    return str(caught.value)


def _isvc(**spec: Any) -> dict[str, Any]:
    manifest = isvc_manifest(name="chat", namespace="demo")
    manifest["spec"].update(spec)
    return manifest


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(
            _isvc(deploymentMode="MultiNode"),
            'InferenceService "demo/chat" is invalid: spec.deploymentMode: must be one of '
            '"OMENative", "RawDeployment" (got "MultiNode")',
            id="deploymentMode outside the CRD enum (S3.2)",
        ),
        pytest.param(
            _isvc(model={"kind": "BaseModel"}),
            'InferenceService "demo/chat" is invalid: spec.model.name: is required but not set',
            id="model without a name",
        ),
        pytest.param(
            _isvc(engine={"minReplicas": "2", "minAvailable": True}),
            'InferenceService "demo/chat" is invalid: '
            "spec.engine.minAvailable: must be an integer or a string (got true); "
            'spec.engine.minReplicas: must be of type integer (got "2")',
            id="every problem at once, with its path",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt", "autoSync": "no"}),
            'InferenceService "demo/chat" is invalid: '
            'spec.runtime.autoSync: must be of type boolean (got "no")',
            id="autoSync not a boolean",
        ),
        pytest.param(
            runtime_manifest("rt", formats=[entry(priority=0)]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[0].priority: must be at least 1 (got 0)",
            id="priority below 1 (S7.4.3)",
        ),
        pytest.param(
            runtime_manifest("rt", formats=[{"modelFormat": {"name": "safetensors"}}]),
            'ClusterServingRuntime "rt" is invalid: '
            "spec.supportedModelFormats[0].modelFramework: is required but not set",
            id="entry without modelFramework",
        ),
        pytest.param(
            runtime_manifest("rt", modelSizeRange={"min": "1B", "maxx": "2B"}),
            'ClusterServingRuntime "rt" is invalid: spec.modelSizeRange.maxx: '
            "is not a field of the schema (the API server prunes it)",
            id="a typo in a closed object",
        ),
        pytest.param(
            model_manifest("m", distribution="Replicated", storage={"path": "/m"}),
            'ClusterBaseModel "m" is invalid: spec.distribution: must be one of "PerNode", '
            '"Sharded" (got "Replicated"); spec.storage.storageUri: is required but not set',
            id="model distribution and storage",
        ),
        pytest.param(
            _replica() | {"spec": {"component": "predictor"}},
            'InferenceReplica "default/svc-engine" is invalid: spec.component: must be one of '
            '"engine", "decoder", "router" (got "predictor")',
            id="InferenceReplica component",
        ),
        pytest.param(
            _isvc_with_status({"runtime": {"kind": "ClusterServingRuntime", "selection": "Auto"}}),
            'InferenceService "default/svc" is invalid: status.runtime.selection: must be one of '
            '"Explicit", "Selected" (got "Auto")',
            id="status.runtime.selection vocabulary (S16.4)",
        ),
        pytest.param(
            _isvc_with_status({"conditions": [{"type": "Ready", "status": "true"}]}),
            'InferenceService "default/svc" is invalid: status.conditions[0].status: must be one '
            'of "True", "False", "Unknown" (got "true")',
            id="condition status (S0.3)",
        ),
    ],
)
def test_the_crds_reject_with_every_problem_and_its_field_path(
    manifest: dict[str, Any], message: str
) -> None:
    assert _rejects(manifest) == message


def test_an_api_version_no_crd_serves_is_rejected() -> None:
    manifest = {"apiVersion": "ome.io/v1", "kind": "InferenceService", "metadata": {"name": "x"}}
    assert _rejects(manifest).startswith('InferenceService "x" is invalid: kind: no CRD in ')
    assert _rejects(manifest).endswith(" serves ome.io/v1 InferenceService")


# ------------------------------------------------------------------ the converter's rules


def test_defaults_are_applied_before_validation_as_the_api_server_does() -> None:
    schema = version_schema("ome.io/v1beta1", "InferenceService")
    manifest = _isvc(runtime={"name": "rt"}, model={"name": "m", "kind": None})
    defaulted = apply_defaults(manifest, schema)
    assert defaulted["spec"]["runtime"] == {
        "name": "rt",
        "kind": "ClusterServingRuntime",
        "apiGroup": "ome.io",
        "autoSync": True,
    }
    assert defaulted["spec"]["model"] == {
        "name": "m",
        "kind": "ClusterBaseModel",
        "apiGroup": "ome.io",
    }
    assert manifest["spec"]["runtime"] == {"name": "rt"}, "the input is left alone"


def test_defaults_reach_list_items() -> None:
    schema = version_schema("ome.io/v1beta1", "ClusterServingRuntime")
    defaulted = apply_defaults(runtime_manifest(formats=[entry(), entry("gguf")]), schema)
    assert [
        (e["modelFormat"]["operator"], e["modelFormat"]["weight"], e["modelFramework"]["weight"])
        for e in defaulted["spec"]["supportedModelFormats"]
    ] == [("Equal", 1, 1), ("Equal", 1, 1)]


@pytest.mark.parametrize(
    ("node", "value", "valid"),
    [
        pytest.param({"x-kubernetes-int-or-string": True}, 1, True, id="int-or-string takes 1"),
        pytest.param(
            {"x-kubernetes-int-or-string": True}, "50%", True, id="int-or-string takes 50%"
        ),
        pytest.param(
            {"x-kubernetes-int-or-string": True}, 1.5, False, id="int-or-string refuses 1.5"
        ),
        pytest.param({"type": "string", "nullable": True}, None, True, id="nullable takes null"),
        pytest.param({"type": "string"}, None, False, id="not nullable refuses null"),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"b": "x"},
            False,
            id="closed object refuses an unknown field",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-preserve-unknown-fields": True,
            },
            {"b": "x"},
            True,
            id="preserving object keeps an unknown field",
        ),
        pytest.param(
            {"type": "object"}, {"b": "x"}, False, id="object without properties is closed"
        ),
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "string"}},
            {"b": "x"},
            True,
            id="a map takes any key",
        ),
        pytest.param(
            {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
            1,
            False,
            id="exclusive minimum",
        ),
        pytest.param(
            {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
            "x",
            True,
            id="transition rules are skipped",
        ),
    ],
)
def test_the_converter_follows_the_api_server_schema_dialect(
    node: dict[str, Any], value: Any, valid: bool
) -> None:
    assert (
        jsonschema.Draft202012Validator(to_json_schema(node, is_root=False)).is_valid(value)
        is valid
    )


def test_the_converter_refuses_cel_rules_it_cannot_evaluate() -> None:
    with pytest.raises(NotImplementedError, match=re.escape("self.size() > 1")):
        to_json_schema(
            {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() > 1"}]}
        )


def test_validation_does_not_change_the_object() -> None:
    manifest = _isvc(runtime={"name": "rt"})
    before = copy.deepcopy(manifest)
    validate_custom_object(manifest)
    assert manifest == before
