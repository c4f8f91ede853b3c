"""Builders for test objects: manifests as dicts, parsed by the real models.

Each builder takes the few fields a rule needs and fills in the rest, so a test row reads as the
rule it pins: ``make_runtime("vllm", formats=[entry(...)], size_range=("1B", "13B"))``.
"""

from __future__ import annotations

from typing import Any

from ome_operator.models import (
    InferenceService,
    ModelResource,
    ModelSpec,
    ServingRuntime,
    from_manifest,
)


def entry(
    fmt: str = "safetensors",
    framework: str = "transformers",
    *,
    fmt_version: str | None = None,
    framework_version: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A supportedModelFormats entry; extra keyword arguments are camelCase entry fields."""
    model_format: dict[str, Any] = {"name": fmt}
    if fmt_version is not None:
        model_format["version"] = fmt_version
    model_framework: dict[str, Any] = {"name": framework}
    if framework_version is not None:
        model_framework["version"] = framework_version
    return {"modelFormat": model_format, "modelFramework": model_framework, **fields}


def runtime_manifest(
    name: str = "rt",
    *,
    cluster: bool = True,
    namespace: str = "default",
    formats: list[dict[str, Any]] | None = None,
    size_range: tuple[str | None, str | None] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if not cluster:
        metadata["namespace"] = namespace
    body: dict[str, Any] = {
        "supportedModelFormats": formats if formats is not None else [entry(autoSelect=True)],
        **spec,
    }
    if size_range is not None:
        low, high = size_range
        body["modelSizeRange"] = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime" if cluster else "ServingRuntime",
        "metadata": metadata,
        "spec": body,
    }


def make_runtime(name: str = "rt", **kwargs: Any) -> ServingRuntime:
    return from_manifest(runtime_manifest(name, **kwargs))


def model_manifest(
    name: str = "llama",
    *,
    cluster: bool = True,
    namespace: str = "default",
    fmt: str = "safetensors",
    framework: str | None = "transformers",
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if not cluster:
        metadata["namespace"] = namespace
    body: dict[str, Any] = {"modelFormat": {"name": fmt}, **spec}
    if framework is not None:
        body.setdefault("modelFramework", {"name": framework})
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel" if cluster else "BaseModel",
        "metadata": metadata,
        "spec": body,
    }


def make_model(name: str = "llama", **kwargs: Any) -> ModelResource:
    return from_manifest(model_manifest(name, **kwargs))


def isvc_manifest(
    name: str = "svc",
    *,
    namespace: str = "default",
    model: str | None = "llama",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    body: dict[str, Any] = dict(spec)
    if model is not None:
        body.setdefault("model", {"name": model})
    body.setdefault("engine", {})
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": metadata,
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def make_isvc(name: str = "svc", **kwargs: Any) -> InferenceService:
    """An InferenceService; ``engine={}`` by default, pass ``engine=None`` to leave it out."""
    return from_manifest(isvc_manifest(name, **kwargs))


def make_model_spec(
    fmt: str = "safetensors",
    framework: str | None = "transformers",
    *,
    fmt_version: str | None = None,
    framework_version: str | None = None,
    **fields: Any,
) -> ModelSpec:
    """A BaseModelSpec; ``framework=None`` leaves modelFramework out; extra keyword arguments are
    camelCase spec fields (``modelParameterSize="7B"``)."""
    model_format: dict[str, Any] = {"name": fmt}
    if fmt_version is not None:
        model_format["version"] = fmt_version
    if framework is not None:
        model_framework: dict[str, Any] = {"name": framework}
        if framework_version is not None:
            model_framework["version"] = framework_version
        fields = {"modelFramework": model_framework, **fields}
    return make_model(framework=None, modelFormat=model_format, **fields).spec


def nested(levels: int) -> dict[str, Any]:
    """``levels`` maps, each holding the next under ``a`` (built without recursion)."""
    root: dict[str, Any] = {}
    tip = root
    for _ in range(levels - 1):
        tip["a"] = {}
        tip = tip["a"]
    return root


# -- the same objects as manifest text, for tests of the readers of ``-f`` --------------------

#: lastTransitionTime of every ``render`` in tests (``--now``).
RENDER_NOW = "2026-01-01T00:00:00Z"
MODEL_TEXT = (
    "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: llama}\n"
    "spec: {modelFormat: {name: safetensors}, modelFramework: {name: transformers}}\n"
)
RUNTIME_TEXT = (
    "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: vllm}\n"
    "spec:\n  supportedModelFormats:\n  - modelFormat: {name: safetensors}\n"
    "    modelFramework: {name: transformers}\n    autoSelect: true\n"
    "  engineConfig: {runner: {name: ome-container, image: 'vllm:1'}}\n"
)
SERVICE_TEXT = (
    "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: svc, namespace: demo}\n"
    "spec: {model: {name: llama}, engine: {}}\n"
)
