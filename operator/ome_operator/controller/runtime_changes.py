"""What a reviewed runtime change does to the cluster the caches show (docs/reference/admission.md).

``gather`` runs on the event loop, where the caches are fed: it takes the InferenceServices the
change can concern, each with the snapshot of runtimes and models a pass of it reads now, and
the models a proposed runtime can tie for. ``RuntimeChangeInputs.warnings`` then decides, off
the loop, with the pure core (``core.impact``, ``core.ties``): it reads only what was gathered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.impact import Impact, RuntimeChange, runtime_impact
from ..core.plans import Snapshot
from ..core.ties import ModelView, tie_warnings
from ..models import InferenceService, InvalidResourceError, ServingRuntime
from .snapshot import Caches
from .store import InferenceServiceStore

__all__ = ["RuntimeChangeInputs", "gather", "subjects"]


@dataclass(frozen=True)
class RuntimeChangeInputs:
    change: RuntimeChange
    subjects: tuple[tuple[InferenceService, Snapshot], ...]
    #: The proposed runtime and the models it may tie for (none for a deletion).
    proposed: ServingRuntime | None = None
    views: tuple[ModelView, ...] = ()

    def impact(self) -> Impact:
        return runtime_impact(self.subjects, self.change)

    def warnings(self) -> tuple[Impact, list[str]]:
        """The impact, and the warnings: the move warning, then the ties
        (docs/reference/admission.md, Runtime warnings)."""
        impact = self.impact()
        moved = impact.warning()
        found = [moved] if moved is not None else []
        if self.proposed is not None:
            found += tie_warnings(self.proposed, self.views)
        return impact, found


def subjects(
    store: InferenceServiceStore, caches: Caches, namespaces: Callable[[str], bool]
) -> list[tuple[InferenceService, Snapshot]]:
    """The InferenceServices of the ``namespaces`` the predicate accepts that parse, each with
    the snapshot of runtimes and models a pass of it reads now (shared by the InferenceServices
    of a namespace and model). On the event loop."""
    found = []
    snapshots: dict[tuple[str, str], Snapshot] = {}  # (namespace, model name) -> its snapshot
    for key in sorted(store):
        if not namespaces(key[0]):
            continue
        try:
            isvc = store.resolution(key)
        except InvalidResourceError:
            continue  # decided on by no pass either
        if isvc is None:
            continue
        model = isvc.spec.model.name if isvc.spec.model else ""
        snapshot = snapshots.get((key[0], model))
        if snapshot is None:
            runtimes, models = caches.runtimes(key[0]), caches.models(key[0], model)
            snapshot = snapshots[key[0], model] = Snapshot(runtimes=runtimes, models=models)
        found.append((isvc, snapshot))
    return found


def _views(runtime: ServingRuntime, change: RuntimeChange, caches: Caches) -> list[ModelView]:
    """The models ``runtime`` is selected for, each with the runtimes it competes with: for a
    ServingRuntime, its namespace's BaseModels and the ClusterBaseModels they do not shadow;
    for a ClusterServingRuntime, the ClusterBaseModels among cluster runtimes only."""
    namespace = runtime.namespace
    catalog = change.catalog(caches.runtimes(namespace), namespace)
    cluster_models = [m for models in caches.cluster_base_models.values() for m in models[:1]]
    found = cluster_models
    if not runtime.is_cluster:
        base = [m[0] for (ns, _), m in caches.base_models.items() if ns == namespace and m]
        shadowed = {m.name for m in base}
        found = [*base, *(m for m in cluster_models if m.name not in shadowed)]
    # A disabled model is served by no runtime (docs/reference/selection.md): nothing is
    # selected for it.
    return [ModelView(m.name, m.spec, catalog, namespace) for m in found if not m.spec.disabled]


def gather(
    change: RuntimeChange,
    store: InferenceServiceStore,
    caches: Caches,
    proposed: ServingRuntime | None = None,
) -> RuntimeChangeInputs:
    """On the event loop: what the decision reads, taken from the caches as they stand."""
    views = _views(proposed, change, caches) if proposed is not None else []
    found = tuple(subjects(store, caches, change.concerns))
    return RuntimeChangeInputs(change, found, proposed, tuple(views))
