"""Snapshots for one reconcile, read from watch-fed caches (kopf indexes), never from lists.

``Caches`` holds references to the live index mappings; ``snapshot_for`` turns them into the
core's ``Snapshot`` for one InferenceService.
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

__all__ = ["Caches", "snapshot_for"]

#: Owned kinds whose objects the reconcile compares against, and their cache attribute.
OWNED_KINDS = (
    "Deployment",
    "Service",
    "PodDisruptionBudget",
    "LeaderWorkerSet",
    "InferenceReplica",
)


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
    owned: tuple[Mapping[Any, Iterable[Mapping[str, Any]]], ...] = ()  # (namespace, isvc)
    disruption_budgets: Mapping[Any, Iterable[Mapping[str, Any]]] | None = None  # (ns, name)
    #: (namespace, owning InferenceService) -> {name: LeaderWorkerSet}; fed by watch events.
    leader_worker_sets: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = field(
        default_factory=dict
    )

    @property
    def ready(self) -> bool:
        return self.serving_runtimes is not None

    def runtimes(self, namespace: str) -> RuntimeCatalog:
        return RuntimeCatalog.of(
            _values(self.serving_runtimes, namespace) + _values(self.cluster_serving_runtimes, None)
        )

    def models(self, namespace: str, name: str) -> ModelCatalog:
        """Only the entries a lookup of ``name`` in ``namespace`` can read."""
        base = _values(self.base_models, (namespace, name))
        cluster = _values(self.cluster_base_models, name)
        return ModelCatalog.of([*base[:1], *cluster[:1]])

    def accelerator_class_names(self) -> frozenset[str]:
        return frozenset(_values(self.accelerator_classes, None))

    def existing(
        self, namespace: str, isvc: str, names: Iterable[str]
    ) -> dict[tuple[str, str], Mapping[str, Any]]:
        found: dict[tuple[str, str], Mapping[str, Any]] = {}
        for index in self.owned:
            for obj in _values(index, (namespace, isvc)):
                found[(obj["kind"], obj["metadata"]["name"])] = obj
        for name, lws in self.leader_worker_sets.get((namespace, isvc), {}).items():
            found[("LeaderWorkerSet", name)] = lws
        for name in names:
            for budget in _values(self.disruption_budgets, (namespace, name)):
                found.setdefault(("PodDisruptionBudget", name), budget)
        return found


def snapshot_for(
    isvc: InferenceService, caches: Caches, *, lws_installed: bool, now: str
) -> Snapshot:
    components = [component_name(isvc.name, c) for c in COMPONENTS]
    model = isvc.spec.model.name if isvc.spec.model else ""
    return Snapshot(
        runtimes=caches.runtimes(isvc.namespace),
        models=caches.models(isvc.namespace, model),
        existing=caches.existing(isvc.namespace, isvc.name, components),
        leader_worker_set_installed=lws_installed,
        now=now,
    )
