"""Snapshots for one reconcile, read from watch-fed caches, never from lists.

``Caches`` holds references to kopf's live indexes (runtimes, models, accelerator classes) and
the informer-fed objects the operator writes; ``snapshot_for`` turns them into the core's
``Snapshot`` for one InferenceService.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.model_catalog import ModelCatalog
from ..core.reconciling import Snapshot
from ..core.rendering.naming import component_name
from ..core.selection import RuntimeCatalog
from ..models import COMPONENTS, InferenceService, ModelResource, ServingRuntime
from .owned import OwnedObjects

__all__ = ["Caches", "snapshot_for"]


def _values(index: Mapping[Any, Iterable[Any]] | None, key: Any) -> list[Any]:
    if index is None or key not in index:
        return []
    return list(index[key])


@dataclass
class Caches:
    """Live mappings fed by watches: key -> iterable of values (kopf ``Index`` semantics)."""

    serving_runtimes: Mapping[Any, Iterable[ServingRuntime]] | None = None  # namespace
    cluster_serving_runtimes: Mapping[Any, Iterable[ServingRuntime]] | None = None  # None
    base_models: Mapping[Any, Iterable[ModelResource]] | None = None  # (namespace, name)
    cluster_base_models: Mapping[Any, Iterable[ModelResource]] | None = None  # name
    accelerator_classes: Mapping[Any, Iterable[str]] | None = None  # None
    #: What the operator writes, by owner (and PodDisruptionBudgets by name).
    objects: OwnedObjects = field(default_factory=OwnedObjects)
    #: namespace -> (the runtime objects it was built from, the catalog): a catalog is reused
    #: while its runtimes are, so selection's memo serves a whole reconcile wave.
    _catalogs: dict[str, tuple[tuple[ServingRuntime, ...], RuntimeCatalog]] = field(
        default_factory=dict
    )

    @property
    def ready(self) -> bool:
        return self.serving_runtimes is not None

    def runtimes(self, namespace: str) -> RuntimeCatalog:
        found = tuple(
            _values(self.serving_runtimes, namespace) + _values(self.cluster_serving_runtimes, None)
        )
        cached = self._catalogs.get(namespace)
        if cached is not None and len(cached[0]) == len(found):
            if all(a is b for a, b in zip(cached[0], found, strict=True)):
                return cached[1]
        catalog = RuntimeCatalog.of(found)
        self._catalogs[namespace] = (found, catalog)
        return catalog

    def models(self, namespace: str, name: str) -> ModelCatalog:
        """Only the entries a lookup of ``name`` in ``namespace`` can read."""
        base = _values(self.base_models, (namespace, name))
        cluster = _values(self.cluster_base_models, name)
        return ModelCatalog.of([*base[:1], *cluster[:1]])

    def accelerator_class_names(self) -> frozenset[str]:
        return frozenset(_values(self.accelerator_classes, None))


def snapshot_for(
    isvc: InferenceService, caches: Caches, *, lws_installed: bool, now: str
) -> Snapshot:
    components = [component_name(isvc.name, c) for c in COMPONENTS]
    model = isvc.spec.model.name if isvc.spec.model else ""
    return Snapshot(
        runtimes=caches.runtimes(isvc.namespace),
        models=caches.models(isvc.namespace, model),
        existing=caches.objects.existing(isvc.namespace, isvc.name, components),
        leader_worker_set_installed=lws_installed,
        now=now,
    )
