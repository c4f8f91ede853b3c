"""BaseModel and ClusterBaseModel: one model, two scopes, ``kind`` tells which."""

from pydantic import StrictBool, StrictStr

from .base import CRDModel, JsonDict, ObjectMeta, defaults

__all__ = ["ModelFormatRef", "ModelResource", "ModelSpec", "ModelStorage"]


class ModelFormatRef(CRDModel):
    """A model's own format or framework: a name and an optional version."""

    name: StrictStr = ""
    version: StrictStr | None = None


class ModelStorage(CRDModel):
    path: StrictStr | None = None
    storage_uri: StrictStr | None = None


class ModelSpec(CRDModel):
    model_format: ModelFormatRef = defaults(ModelFormatRef)
    model_framework: ModelFormatRef | None = None
    model_architecture: StrictStr | None = None
    quantization: StrictStr | None = None
    model_parameter_size: StrictStr | None = None
    diffusion_pipeline: JsonDict | None = None
    disabled: StrictBool | None = None
    distribution: StrictStr = "PerNode"
    storage: ModelStorage = defaults(ModelStorage)


class ModelResource(CRDModel):
    """A BaseModel (namespaced) or ClusterBaseModel."""

    api_version: StrictStr = "ome.io/v1beta1"
    kind: StrictStr = "ClusterBaseModel"
    metadata: ObjectMeta = defaults(ObjectMeta)
    spec: ModelSpec = defaults(ModelSpec)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def is_cluster(self) -> bool:
        return self.kind == "ClusterBaseModel"
