"""ServingRuntime and ClusterServingRuntime: one model, two scopes."""

from typing import Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr

from .base import CRDModel, JsonDict, ObjectMeta, defaults
from .components import ComponentSpec

__all__ = [
    "AcceleratorRequirements",
    "ModelFormat",
    "ModelSizeRange",
    "ServingRuntime",
    "ServingRuntimeSpec",
    "SupportedModelFormat",
]


class ModelFormat(CRDModel):
    """A runtime entry's modelFormat or modelFramework, CRD defaults applied
    (docs/reference/selection.md, Entry defaults)."""

    name: StrictStr
    version: StrictStr | None = None
    operator: StrictStr = "Equal"
    weight: StrictInt = 1


class SupportedModelFormat(CRDModel):
    name: StrictStr | None = None
    model_format: ModelFormat
    model_framework: ModelFormat
    model_architecture: StrictStr | None = None
    quantization: StrictStr | None = None
    diffusion_pipeline: JsonDict | None = None
    auto_select: StrictBool | None = None
    priority: Annotated[StrictInt, Field(ge=1)] | None = None  # CRD minimum 1


class ModelSizeRange(CRDModel):
    min: StrictStr | None = None
    max: StrictStr | None = None


class AcceleratorRequirements(CRDModel):
    accelerator_classes: list[StrictStr] | None = None


class ServingRuntimeSpec(CRDModel):
    supported_model_formats: list[SupportedModelFormat] = []
    model_size_range: ModelSizeRange | None = None
    disabled: StrictBool | None = None
    engine_config: ComponentSpec | None = None
    decoder_config: ComponentSpec | None = None
    router_config: ComponentSpec | None = None
    accelerator_requirements: AcceleratorRequirements | None = None
    node_selector: dict[str, StrictStr] = {}
    scheduler_name: StrictStr | None = None

    def config(self, component: str) -> ComponentSpec | None:
        """The runtime config merged into ``component`` (docs/reference/merging.md)."""
        return getattr(self, f"{component}_config")


class ServingRuntime(CRDModel):
    """A ServingRuntime (namespaced) or ClusterServingRuntime (``kind`` tells which)."""

    api_version: StrictStr = "ome.io/v1beta1"
    kind: StrictStr = "ServingRuntime"
    metadata: ObjectMeta = defaults(ObjectMeta)
    spec: ServingRuntimeSpec = defaults(ServingRuntimeSpec)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """A ServingRuntime's namespace; "" for a ClusterServingRuntime."""
        return "" if self.is_cluster else self.metadata.namespace or "default"

    @property
    def is_cluster(self) -> bool:
        return self.kind == "ClusterServingRuntime"

    def seen_from(self, namespace: str) -> bool:
        """Whether an InferenceService of ``namespace`` has this runtime among its candidates
        (every ClusterServingRuntime, the ServingRuntimes of its namespace:
        docs/reference/selection.md, Candidates)."""
        return self.is_cluster or self.namespace == namespace

    @property
    def disabled(self) -> bool:
        return self.spec.disabled is True
