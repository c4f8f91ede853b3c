"""ModelCatalog: the BaseModels and ClusterBaseModels a decision may read
(docs/reference/selection.md, Model lookup)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..models import ModelRef, ModelResource

__all__ = ["ModelCatalog"]


@dataclass(frozen=True)
class ModelCatalog:
    base_models: Mapping[tuple[str, str], ModelResource] = field(default_factory=dict)
    cluster_base_models: Mapping[str, ModelResource] = field(default_factory=dict)

    @classmethod
    def of(cls, models: Iterable[ModelResource]) -> ModelCatalog:
        base, cluster = {}, {}
        for model in models:
            if model.is_cluster:
                cluster[model.name] = model
            else:
                base[(model.metadata.namespace or "default", model.name)] = model
        return cls(base, cluster)

    def lookup(self, namespace: str, name: str) -> ModelResource | None:
        """A BaseModel in the namespace, else the ClusterBaseModel (webhook and CLI)."""
        return self.base_models.get((namespace, name)) or self.cluster_base_models.get(name)

    def referenced(self, ref: ModelRef, namespace: str) -> ModelResource | None:
        """The controller's lookup: the kind ``ref`` names must exist, but a BaseModel of the
        same name in the namespace supplies the data even for kind ClusterBaseModel."""
        if ref.kind == "BaseModel":
            return self.base_models.get((namespace, ref.name))
        if ref.name not in self.cluster_base_models:
            return None
        return self.lookup(namespace, ref.name)
