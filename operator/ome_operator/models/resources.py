"""Turning a manifest dict into the model of its kind."""

from __future__ import annotations

from typing import Any

from .accelerator_class import AcceleratorClass
from .base import CRDModel, InvalidResourceError, parse, shown
from .base_model import ModelResource
from .inference_service import InferenceService
from .limits import size_problem
from .serving_runtime import ServingRuntime

__all__ = [
    "MODEL_BY_KIND",
    "build_validators",
    "display_name",
    "from_manifest",
    "storable_manifest",
]

#: The ome.io kinds this operator reads, and the model each one parses into.
MODEL_BY_KIND: dict[str, type[CRDModel]] = {
    "InferenceService": InferenceService,
    "ServingRuntime": ServingRuntime,
    "ClusterServingRuntime": ServingRuntime,
    "BaseModel": ModelResource,
    "ClusterBaseModel": ModelResource,
    "AcceleratorClass": AcceleratorClass,
}


def build_validators() -> None:
    """Build every kind's validator now, rather than on its first parse (``base``): the
    operator builds them before it serves, so no review waits for one."""
    for model in MODEL_BY_KIND.values():
        model.model_rebuild()


def display_name(obj: Any) -> str:
    """How messages name an object: ``"<namespace>/<name>"`` (strings only)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return '""'
    name = meta.get("name")
    name = name if isinstance(name, str) else ""  # pydantic names the field and its value
    namespace = meta.get("namespace")
    shown = f"{namespace}/{name}" if isinstance(namespace, str) and namespace else f"{name}"
    return f'"{shown}"'


def from_manifest(obj: Any) -> CRDModel:
    """Parse an ome.io object; InvalidResourceError names the kind, object, field and value."""
    if not isinstance(obj, dict):
        found = shown(obj)
        raise InvalidResourceError(
            "object", '""', (("(root)", f"must be an object (got {found})"),)
        )
    kind = obj.get("kind")
    model = MODEL_BY_KIND.get(kind) if isinstance(kind, str) else None
    if model is None:
        named = kind if isinstance(kind, str) and kind else "object"
        problem = (
            "is required but not set"
            if kind is None
            else f"must be an ome.io kind: {', '.join(MODEL_BY_KIND)} (got {shown(kind)})"
        )
        raise InvalidResourceError(named, display_name(obj), (("kind", problem),))
    return parse(model, obj, kind=kind, name=display_name(obj))


def storable_manifest(obj: Any) -> CRDModel:
    """``from_manifest``, and refused when too big for an API server to store (admission's
    parse: the controller only ever reads stored objects)."""
    model = from_manifest(obj)
    too_big = size_problem(obj)
    if too_big is not None:
        raise InvalidResourceError(obj["kind"], display_name(obj), (("(root)", too_big),))
    return model
