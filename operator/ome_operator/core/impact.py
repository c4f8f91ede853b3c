"""Runtime-change impact (docs/reference/cli.md, runtime impact): which InferenceServices a
runtime change moves, and why.

For each InferenceService the runtime is resolved before and after the change by the
controller's own path (``resolving``: the model, then the named runtime or auto-selection), over
the same ``Snapshot`` type; the change only swaps the runtime catalog. An InferenceService is
listed when its runtime or its ``RuntimeReady`` status differs.

Only the InferenceServices a changed runtime can concern are resolved (``may_read``): one that
names a runtime of another name, or whose model no changed runtime (as it was, or as it is
proposed) qualifies for, keeps its runtime whatever else the catalog holds.

``WHY``, the first that applies:

1. ``no runtime qualifies``: nothing is selected after the change (AFTER ``-``);
2. ``<before> was deleted``;
3. ``<before> no longer qualifies: <reason>``: its exclusion or qualification reason after the
   change;
4. ``<after> ranks higher``: the runtime before still qualifies (or there was none).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..models import InferenceService, ModelResource, ModelSpec, ServingRuntime
from .model_catalog import ModelCatalog
from .plans import Snapshot
from .resolving import Stop, resolve_model, resolve_runtime
from .selection import ModelSpecError, RuntimeCatalog, may_qualify, select_runtime

__all__ = [
    "API_VERSION",
    "WARNING_LIST_LENGTH",
    "Impact",
    "InUse",
    "Move",
    "RuntimeChange",
    "RuntimeKey",
    "may_read",
    "runtime_impact",
    "runtime_in_use",
    "runtime_key",
    "shown",
    "standing",
]

API_VERSION = "cli.ome.io/v1alpha1"
#: The admission warning names this many InferenceServices, then counts the rest.
WARNING_LIST_LENGTH = 5
_NONE = "-"

#: (is a ClusterServingRuntime, namespace or "" for one, name)
RuntimeKey = tuple[bool, str, str]


def runtime_key(runtime: ServingRuntime) -> RuntimeKey:
    return (runtime.is_cluster, runtime.namespace, runtime.name)


def shown(runtime: ServingRuntime | None) -> str:
    """``CSR/<name>``, ``SR/<name>`` or ``-`` (no runtime), as the table shows it."""
    if runtime is None:
        return _NONE
    return f"{'CSR' if runtime.is_cluster else 'SR'}/{runtime.name}"


@dataclass(frozen=True)
class RuntimeChange:
    """Runtimes created or replaced as given (``applied``), and runtimes removed."""

    applied: tuple[ServingRuntime, ...] = ()
    deleted: frozenset[RuntimeKey] = frozenset()
    _keys: frozenset[RuntimeKey] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        keys = self.deleted | {runtime_key(r) for r in self.applied}
        object.__setattr__(self, "_keys", keys)

    def concerns(self, namespace: str) -> bool:
        """Whether the change touches the runtimes an InferenceService of ``namespace`` sees."""
        return any(is_cluster or ns == namespace for is_cluster, ns, _ in self._keys)

    def catalog(self, before: RuntimeCatalog, namespace: str) -> RuntimeCatalog:
        """The catalog an InferenceService of ``namespace`` sees after the change."""
        added = [r for r in self.applied if r.seen_from(namespace)]
        return before.changed(lambda r: runtime_key(r) in self._keys, added)

    def touched(self, before: RuntimeCatalog, namespace: str) -> list[ServingRuntime]:
        """The changed runtimes of ``namespace``'s view: as they were, and as proposed."""
        old = [r for r in before if runtime_key(r) in self._keys]
        return old + [r for r in self.applied if r.seen_from(namespace)]


@dataclass(frozen=True)
class InUse:
    """The runtime the controller runs an InferenceService with (None: none), and whether its
    ``RuntimeReady`` is ``False`` (no runtime found)."""

    runtime: ServingRuntime | None
    unresolved: bool = False

    def same(self, other: InUse) -> bool:
        keys = (runtime_key(r) if r else None for r in (self.runtime, other.runtime))
        return len(set(keys)) == 1 and self.unresolved == other.unresolved


def runtime_in_use(isvc: InferenceService, snapshot: Snapshot) -> InUse:
    """The controller's resolution (the model, then the named runtime or auto-selection), without
    its side effects."""
    try:
        model = resolve_model(isvc, snapshot)
        return InUse(resolve_runtime(isvc, snapshot, model).runtime)
    except Stop as stop:
        return InUse(None, stop.plan.decisions.runtime_unresolved)


@dataclass(frozen=True)
class Move:
    namespace: str
    name: str
    before: str
    after: str
    why: str

    def row(self) -> list[str]:
        return [self.namespace, self.name, self.before, self.after, self.why]

    def item(self) -> dict[str, Any]:
        """One ``items`` entry of the document: no runtime is ``null``."""
        before, after = (None if v == _NONE else v for v in (self.before, self.after))
        return {
            "namespace": self.namespace,
            "name": self.name,
            "before": before,
            "after": after,
            "why": self.why,
        }

    def brief(self) -> str:
        return f"{self.namespace}/{self.name} ({self.before} -> {self.after})"


@dataclass(frozen=True)
class Impact:
    moves: tuple[Move, ...]  #: by namespace, then name
    total: int  #: the InferenceServices in scope

    @property
    def changed(self) -> int:
        return len(self.moves)

    def summary(self) -> str:
        return f"{self.changed} of {self.total} InferenceServices change runtime"

    def warning(self) -> str | None:
        """The admission warning (docs/reference/admission.md, Runtime warnings); None when nothing
        moves."""
        if not self.moves:
            return None
        listed = ", ".join(m.brief() for m in self.moves[:WARNING_LIST_LENGTH])
        more = self.changed - WARNING_LIST_LENGTH
        tail = f", and {more} more" if more > 0 else ""
        return (
            f"this change moves {self.changed} InferenceService(s) to another runtime: "
            f"{listed}{tail}"
        )

    def document(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "RuntimeImpact",
            "items": [m.item() for m in self.moves],
            "changed": self.changed,
            "total": self.total,
        }


def _model_of(isvc: InferenceService, snapshot: Snapshot) -> ModelSpec | None:
    ref = isvc.spec.model
    found = snapshot.models.referenced(ref, isvc.namespace) if ref is not None else None
    return found.spec if found is not None else None


@dataclass(frozen=True)
class _View:
    """What the change is to the runtimes one namespace sees: the catalog before (held, so
    that its identity stands), the catalog after, and the changed runtimes as they were and
    as proposed."""

    before: RuntimeCatalog
    after: RuntimeCatalog
    touched: tuple[ServingRuntime, ...]


def _view(catalog: RuntimeCatalog, namespace: str, change: RuntimeChange) -> _View:
    return _View(
        catalog,
        change.catalog(catalog, namespace),
        tuple(change.touched(catalog, namespace)),
    )


def may_read(
    isvc: InferenceService,
    snapshot: Snapshot,
    runtimes: Sequence[ServingRuntime],
    catalog: RuntimeCatalog | None = None,
) -> bool:
    """Whether a pass of ``isvc`` over ``snapshot`` can resolve to one of ``runtimes`` (its
    scope's only): the runtime it names, or one that qualifies for its model for some
    InferenceService (``catalog``, default the snapshot's, only memoizes). When none can,
    the pass reads nothing of them."""
    namespace = isvc.namespace
    runtimes = [r for r in runtimes if r.seen_from(namespace)]
    if not runtimes:
        return False
    if isvc.spec.runtime is not None:
        return isvc.spec.runtime.name in {r.name for r in runtimes}
    model = _model_of(isvc, snapshot)
    if model is None:
        return False
    catalog = catalog if catalog is not None else snapshot.runtimes
    return any(may_qualify(r, model, catalog) for r in runtimes)


def _why(
    isvc: InferenceService,
    before: InUse,
    after: InUse,
    after_snapshot: Snapshot,
    change: RuntimeChange,
) -> str:
    if after.runtime is None:
        return "no runtime qualifies"
    if before.runtime is None:
        return f"{shown(after.runtime)} ranks higher"
    was = shown(before.runtime)
    key = runtime_key(before.runtime)
    if key in change.deleted:
        return f"{was} was deleted"
    if isvc.spec.runtime is None:
        model = _model_of(isvc, after_snapshot)
        reason = _reason_after(isvc, model, key, after_snapshot.runtimes)
        if reason is not None:
            return f"{was} no longer qualifies: {reason}"
    return f"{shown(after.runtime)} ranks higher"


def _reason_after(
    isvc: InferenceService, model: ModelSpec | None, key: RuntimeKey, catalog: RuntimeCatalog
) -> str | None:
    """The runtime's reason in the selection after the change (None: it still qualifies)."""
    if model is None or isvc.spec.model is None:
        return None
    try:
        selection = select_runtime(model, isvc.spec.model.name, isvc, catalog, isvc.namespace)
    except ModelSpecError:
        return None
    for verdict in selection.verdicts:
        if runtime_key(verdict.runtime) == key:
            return verdict.reason
    return None


def runtime_impact(
    subjects: Iterable[tuple[InferenceService, Snapshot]], change: RuntimeChange
) -> Impact:
    """Every InferenceService (with the snapshot a pass of it reads now) whose runtime the
    change moves."""
    moves, total = [], 0
    views: dict[tuple[int, str], _View] = {}  # by (id of the catalog before, namespace)
    for isvc, snapshot in subjects:
        total += 1
        if not change.concerns(isvc.namespace):
            continue
        catalog, namespace = snapshot.runtimes, isvc.namespace
        view = views.get((id(catalog), namespace))
        if view is None:
            view = views[id(catalog), namespace] = _view(catalog, namespace, change)
        if not may_read(isvc, snapshot, view.touched, view.before):
            continue
        before = runtime_in_use(isvc, snapshot)
        after_snapshot = replace(snapshot, runtimes=view.after)
        after = runtime_in_use(isvc, after_snapshot)
        if before.same(after):
            continue
        why = _why(isvc, before, after, after_snapshot, change)
        moves.append(
            Move(isvc.namespace, isvc.name, shown(before.runtime), shown(after.runtime), why)
        )
    moves.sort(key=lambda m: (m.namespace, m.name))
    return Impact(tuple(moves), total)


def standing(
    isvcs: Iterable[InferenceService],
    runtimes: Iterable[ServingRuntime],
    models: Iterable[ModelResource],
) -> list[tuple[InferenceService, Snapshot]]:
    """Each InferenceService with the snapshot a pass of it would read from these objects
    (manifests, or a cluster's lists): one runtime catalog per namespace."""
    runtimes, catalog_of_models = list(runtimes), ModelCatalog.of(models)
    catalogs: dict[str, RuntimeCatalog] = {}
    subjects = []
    for isvc in isvcs:
        namespace = isvc.namespace
        if namespace not in catalogs:
            catalogs[namespace] = RuntimeCatalog.of(r for r in runtimes if r.seen_from(namespace))
        subjects.append((isvc, Snapshot(runtimes=catalogs[namespace], models=catalog_of_models)))
    return subjects
