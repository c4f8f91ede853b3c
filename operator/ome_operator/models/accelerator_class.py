"""AcceleratorClass: only its existence, by name, is read (docs/reference/admission.md)."""

from pydantic import StrictStr

from .base import CRDModel, JsonDict, ObjectMeta, defaults

__all__ = ["AcceleratorClass"]


class AcceleratorClass(CRDModel):
    api_version: StrictStr = "ome.io/v1beta1"
    kind: StrictStr = "AcceleratorClass"
    metadata: ObjectMeta = defaults(ObjectMeta)
    spec: JsonDict = {}
