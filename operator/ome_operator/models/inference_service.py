"""InferenceService: the fields the operator reads; everything else preserved."""

from typing import Literal

from pydantic import StrictBool, StrictStr

from .base import CRDModel, JsonDict, ObjectMeta, defaults
from .components import AcceleratorSelector, ComponentSpec, KedaConfig

__all__ = ["COMPONENTS", "InferenceService", "InferenceServiceSpec", "ModelRef", "RuntimeRef"]

#: Components in reconcile order (engine, decoder, router); also the order of every
#: per-component listing.
COMPONENTS = ("engine", "decoder", "router")


class ModelRef(CRDModel):
    name: StrictStr
    kind: StrictStr = "ClusterBaseModel"
    api_group: StrictStr = "ome.io"


class RuntimeRef(CRDModel):
    name: StrictStr
    kind: StrictStr = "ClusterServingRuntime"
    api_group: StrictStr = "ome.io"
    auto_sync: StrictBool = True
    revision: StrictStr | None = None


class InferenceServiceSpec(CRDModel):
    deployment_mode: Literal["OMENative", "RawDeployment"] | None = None
    model: ModelRef | None = None
    runtime: RuntimeRef | None = None
    engine: ComponentSpec | None = None
    decoder: ComponentSpec | None = None
    router: ComponentSpec | None = None
    accelerator_selector: AcceleratorSelector | None = None
    keda_config: KedaConfig | None = None

    def component(self, name: str) -> ComponentSpec | None:
        return getattr(self, name)


class InferenceService(CRDModel):
    api_version: StrictStr = "ome.io/v1beta1"
    kind: StrictStr = "InferenceService"
    metadata: ObjectMeta = defaults(ObjectMeta)
    spec: InferenceServiceSpec = defaults(InferenceServiceSpec)
    status: JsonDict = {}

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    def declared_components(self) -> tuple[str, ...]:
        """The components the spec declares, in reconcile order."""
        return tuple(c for c in COMPONENTS if self.spec.component(c) is not None)
