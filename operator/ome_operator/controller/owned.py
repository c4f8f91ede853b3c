"""The objects reconciles compare their plans against, kept current by informers
(docs/architecture.md).

One ``KindCache`` per kind the operator writes, fed on the event loop with the messages of
``cluster.informing``. Objects labelled ``ome.io/inferenceservice`` are found by their owner;
PodDisruptionBudgets are watched whether labelled or not and found by name, since a same-named
budget the operator did not create fails preflight (docs/workloads.md, PodDisruptionBudgets).
The pods of Deployments and
LeaderWorkerSets are held too, found by their InferenceService, for why a component does not
serve (OMENative pods are the InferenceReplica controller's). Every change to a labelled object is
reported to ``on_change`` (the controller re-queues the owner unless it echoes its own write);
after a relist, so is whatever changed while the watch was down. The first listing reports
nothing: every InferenceService is reconciled at start anyway.

A label says which InferenceService an object is for, never that it is its own: the core
decides that from the owner reference and the recorded uid (``core.ownership``), and a labelled
object that is someone else's is held here all the same, so that its change or deletion
re-queues the InferenceService whose name it takes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..cluster.api import newer_version, resource_version
from ..cluster.informing import lean
from ..cluster.resources import resource_named
from ..core.rendering.metadata import MANAGED_BY, OWNER_LABEL
from .packing import Held, Packed, pack, unpack
from .watches import Collection, Key, Watched, object_key

__all__ = ["OWNER_LABEL", "KindCache", "OwnedObjects", "OwnerChange", "OwnerOf", "labelled_owner"]


#: (namespace, owner, the object, deleted?)
OwnerChange = Callable[[str, str, Mapping[str, Any], bool], None]
#: An object's owner's name (in its namespace), or None.
OwnerOf = Callable[[Mapping[str, Any]], str | None]


def labelled_owner(obj: Mapping[str, Any]) -> str | None:
    """The InferenceService an object's ``ome.io/inferenceservice`` label names."""
    return ((obj.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL)


class KindCache(Collection):
    """One kind's objects as the watch last showed them: by name, and by owner (by default the
    InferenceService its label names). Held packed (``packing``): each read unpacks a copy."""

    def __init__(
        self,
        kind: str,
        on_change: OwnerChange,
        scopes: Iterable[str | None] = (None,),
        *,
        owner: OwnerOf = labelled_owner,
    ):
        super().__init__()
        self.kind = kind
        #: The namespaces (None: all) whose listings make the cache complete.
        self.scopes = frozenset(scopes)
        self._on_change = on_change
        self._owner = owner
        #: (namespace, name) -> (its owner, its resourceVersion, the packed object)
        self._by_name: dict[Key, tuple[str | None, str | None, Held]] = {}
        #: (namespace, owner) -> the names of the objects it owns
        self._by_owner: dict[Key, set[str]] = {}

    def named(self, namespace: str, name: str) -> dict[str, Any] | None:
        held = self._by_name.get((namespace, name))
        return unpack(held[2]) if held is not None else None

    def owned_by(self, namespace: str, owner: str) -> dict[str, dict[str, Any]]:
        names = self._by_owner.get((namespace, owner), ())
        return {name: unpack(self._by_name[namespace, name][2]) for name in sorted(names)}

    def keys(self) -> list[Key]:
        """(namespace, name) of every object held, sorted."""
        return sorted(self._by_name)

    def wrote(self, obj: Mapping[str, Any]) -> bool:
        """``obj`` as a patch of this operator's returned it: it replaces the cached version when
        it is newer, so a pass before the watch catches up does not patch the same thing again;
        True when it did.

        Only a patch, and only over an older cached version: an object the watch has shown
        deleted (or not yet shown) stays as the watch says. Versions compare as integers, as
        etcd-backed servers issue them; any other form is left to the watch.
        """
        old = self._by_name.get(object_key(obj))
        if old is not None and newer_version(resource_version(obj), old[1]):
            held = {**obj, "metadata": dict(obj.get("metadata") or {})}  # lean leaves obj as it is
            self._change(lean(held), deleted=False, report=False)
            return True
        return False

    def _held(self) -> Mapping[Key, Mapping[str, Any]]:
        return Packed(self._by_name, lambda held: held[2])

    def _change(self, obj: Mapping[str, Any], *, deleted: bool, report: bool) -> None:
        key = object_key(obj)
        namespace, name = key
        former = self._by_name.pop(key, None)
        if former is not None and former[0] is not None:
            bucket = self._by_owner.get((namespace, former[0]), set())
            bucket.discard(name)
            if not bucket:
                self._by_owner.pop((namespace, former[0]), None)
        owner = self._owner(obj)
        if not deleted:
            self._by_name[key] = (owner, resource_version(obj), pack(obj))
            if owner is not None:
                self._by_owner.setdefault((namespace, owner), set()).add(name)
        if report and owner is not None:
            self._on_change(namespace, owner, obj, deleted)


class OwnedObjects:
    """A ``KindCache`` per written kind, and the informers that feed them."""

    #: Kinds found by owner, then the one also watched unlabelled and found by name.
    LABELLED = ("Deployment", "Service", "InferenceReplica", "LeaderWorkerSet")
    BUDGETS = "PodDisruptionBudget"
    #: Pods, read (never written) for why a component does not serve.
    PODS = "Pod"
    #: The pods held: an InferenceService's, but not OMENative ones.
    POD_SELECTOR = ",".join([OWNER_LABEL, *(f"{k}!={v}" for k, v in MANAGED_BY.items())])

    def __init__(self) -> None:
        self.caches = {
            kind: KindCache(kind, self._report)
            for kind in (*self.LABELLED, self.BUDGETS, self.PODS)
        }
        #: Told of every change to a labelled object (set by the controller).
        self.on_change: OwnerChange | None = None
        #: Told of every change to a labelled object of one kind, after ``on_change`` (the
        #: InferenceReplica controller listens to InferenceReplicas).
        self._listeners: dict[str, list[OwnerChange]] = {}

    def listen(self, kind: str, listener: OwnerChange) -> None:
        self._listeners.setdefault(kind, []).append(listener)

    def _report(self, namespace: str, owner: str, obj: Mapping[str, Any], deleted: bool) -> None:
        if self.on_change is not None:
            self.on_change(namespace, owner, obj, deleted)
        for listener in self._listeners.get(obj.get("kind", ""), ()):
            listener(namespace, owner, obj, deleted)

    def wrote(self, obj: Mapping[str, Any], *, by: OwnerChange | None = None) -> None:
        """A write's answer into its cache (``KindCache.wrote``). Whoever else is told of changes
        to its kind is told of this one now: once the cache holds the new version, a relist
        after a lost watch event would find nothing changed. ``by`` is the writer (a listener),
        None for the InferenceService controller (``on_change``)."""
        kind = obj.get("kind", "")
        cache = self.caches.get(kind)
        if cache is None or not cache.wrote(obj):
            return
        namespace, _ = object_key(obj)
        owner = labelled_owner(obj)
        if owner is None:
            return
        told = [*self._listeners.get(kind, ())]
        if by is not None and self.on_change is not None:
            told = [self.on_change, *told]
        for listener in told:
            if listener != by:  # bound methods compare equal, not identical
                listener(namespace, owner, obj, False)

    def existing(
        self, namespace: str, isvc: str, budget_names: Iterable[str]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """(kind, name) -> object: what ``isvc`` owns, and the budgets of these names (copies:
        a pass may keep and change them)."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for kind in self.LABELLED:
            for name, obj in self.caches[kind].owned_by(namespace, isvc).items():
                found[(kind, name)] = obj
        budgets = self.caches[self.BUDGETS]
        for name in budget_names:
            budget = budgets.named(namespace, name)
            if budget is not None:
                found[(self.BUDGETS, name)] = budget
        return found

    def pods(self, namespace: str, isvc: str) -> dict[str, tuple[dict[str, Any], ...]]:
        """component -> the pods of ``isvc``'s Deployments and LeaderWorkerSets, by name."""
        found: dict[str, list[dict[str, Any]]] = {}
        for pod in self.caches[self.PODS].owned_by(namespace, isvc).values():
            component = ((pod.get("metadata") or {}).get("labels") or {}).get("component")
            if isinstance(component, str):
                found.setdefault(component, []).append(pod)
        return {component: tuple(pods) for component, pods in sorted(found.items())}

    def watched(self, *, leader_worker_sets: bool = True) -> list[Watched]:
        """What to watch for these caches; a kind that is not installed (the LeaderWorkerSet
        API) holds nothing and is not watched."""
        selectors = {self.BUDGETS: None, self.PODS: self.POD_SELECTOR}
        return [
            Watched(resource_named(kind), cache, label_selector=selectors.get(kind, OWNER_LABEL))
            for kind, cache in self.caches.items()
            if leader_worker_sets or kind != "LeaderWorkerSet"
        ]
