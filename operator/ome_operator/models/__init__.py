"""Pydantic models of the ome.io resources (the fields manifests/crds/ types).

Pure data: no I/O.
"""

from .accelerator_class import AcceleratorClass
from .base import CRDModel, InvalidResourceError, JsonDict, ObjectMeta, parse
from .base_model import ModelFormatRef, ModelResource, ModelSpec, ModelStorage
from .components import AcceleratorSelector, ComponentSpec, KedaConfig, LeaderSpec, WorkerSpec
from .inference_service import (
    COMPONENTS,
    InferenceService,
    InferenceServiceSpec,
    ModelRef,
    RuntimeRef,
)
from .resources import MODEL_BY_KIND, from_manifest, storable_manifest
from .serving_runtime import (
    AcceleratorRequirements,
    ModelFormat,
    ModelSizeRange,
    ServingRuntime,
    ServingRuntimeSpec,
    SupportedModelFormat,
)

__all__ = [
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
