"""Snapshots for one reconcile, read from watch-fed caches, never from lists.

``Caches`` holds the parsed indexes of what reconciles read (runtimes, models, accelerator
classes) and the objects the operator writes; ``snapshot_for`` turns them into the core's
``Snapshot`` for one InferenceService.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cluster.resources import resource_named
from ..core.model_catalog import ModelCatalog
from ..core.reconciling import Snapshot
from ..core.rendering.naming import component_name
from ..core.selection import RuntimeCatalog
from ..models import COMPONENTS, InferenceService
from ..models.object_metadata import metadata_of
from .owned import OwnedObjects
from .sources import SourceIndex
from .watches import Watched, object_key

__all__ = ["Caches", "snapshot_for"]


def _namespace(obj: Mapping[str, Any]) -> str:
    return metadata_of(obj).get("namespace") or ""


def _cluster(obj: Mapping[str, Any]) -> None:
    return None


def _name(obj: Mapping[str, Any]) -> str:
    return metadata_of(obj).get("name") or ""


@dataclass
class Caches:
    """Watch-fed state: key -> the parsed values under it, and the written objects."""

    serving_runtimes: SourceIndex = field(
        default_factory=lambda: SourceIndex("ServingRuntime", _namespace)
    )
    cluster_serving_runtimes: SourceIndex = field(
        default_factory=lambda: SourceIndex("ClusterServingRuntime", _cluster)
    )
    base_models: SourceIndex = field(default_factory=lambda: SourceIndex("BaseModel", object_key))
    cluster_base_models: SourceIndex = field(
        default_factory=lambda: SourceIndex("ClusterBaseModel", _name)
    )
    accelerator_classes: SourceIndex = field(
        default_factory=lambda: SourceIndex("AcceleratorClass", _cluster, _name)
    )
    #: What the operator writes, by owner (and PodDisruptionBudgets by name).
    objects: OwnedObjects = field(default_factory=OwnedObjects)
    #: namespace -> (the versions of the runtimes it was built from, the catalog): a catalog is
    #: reused while its runtimes stand, so selection's memo serves a whole reconcile wave.
    _catalogs: dict[str, tuple[tuple[int, int], RuntimeCatalog]] = field(default_factory=dict)

    @property
    def sources(self) -> tuple[SourceIndex, ...]:
        return (
            self.serving_runtimes,
            self.cluster_serving_runtimes,
            self.base_models,
            self.cluster_base_models,
            self.accelerator_classes,
        )

    def watched(self, *, missing: Container[str] = ()) -> list[Watched]:
        own = self.objects.watched(missing=missing)
        return [*(Watched(resource_named(s.kind), s) for s in self.sources), *own]

    def runtimes(self, namespace: str) -> RuntimeCatalog:
        versions = (
            self.serving_runtimes.version(namespace),
            self.cluster_serving_runtimes.version(None),
        )
        cached = self._catalogs.get(namespace)
        if cached is not None and cached[0] == versions:
            return cached[1]
        found = self.serving_runtimes.get(namespace, ()) + self.cluster_serving_runtimes.get(
            None, ()
        )
        catalog = RuntimeCatalog.of(found)
        self._catalogs[namespace] = (versions, catalog)
        return catalog

    def models(self, namespace: str, name: str) -> ModelCatalog:
        """Only the entries a lookup of ``name`` in ``namespace`` can read."""
        base = self.base_models.get((namespace, name), ())
        cluster = self.cluster_base_models.get(name, ())
        return ModelCatalog.of([*base[:1], *cluster[:1]])

    def accelerator_class_names(self) -> frozenset[str]:
        return frozenset(self.accelerator_classes.get(None, ()))


def snapshot_for(
    isvc: InferenceService, caches: Caches, *, missing: Container[str], now: str
) -> Snapshot:
    components = [component_name(isvc.name, c) for c in COMPONENTS]
    model = isvc.spec.model.name if isvc.spec.model else ""
    return Snapshot(
        runtimes=caches.runtimes(isvc.namespace),
        models=caches.models(isvc.namespace, model),
        existing=caches.objects.existing(isvc.namespace, isvc.name, components),
        pods=caches.objects.pods(isvc.namespace, isvc.name),
        leader_worker_set_installed="LeaderWorkerSet" not in missing,
        keda_installed="ScaledObject" not in missing,
        now=now,
    )
