"""The objects reconciles compare their plans against, kept current by informers
(docs/architecture.md).

One ``KindCache`` per kind the operator writes, fed on the event loop with the messages of
``cluster.informing``, read through the record of the operator's own writes (``write_record``).
Objects labelled ``ome.io/inferenceservice`` are found by their owner; PodDisruptionBudgets are
watched whether labelled or not and found by name, since a same-named budget the operator did
not create fails preflight (docs/workloads.md, PodDisruptionBudgets). The pods of Deployments
and LeaderWorkerSets are held too, found by their InferenceService, for why a component does not
serve (OMENative pods are the InferenceReplica controller's). Every change to a labelled object
is reported to the listeners of its kind (the controllers re-queue the owner unless it echoes
their own write); after a relist, so is whatever changed while the watch was down. The first
listing reports nothing: every InferenceService is reconciled at start anyway.

A label says which InferenceService an object is for, never that it is its own: the core
decides that from the owner reference and the recorded uid (``core.ownership``), and a labelled
object that is someone else's is held here all the same, so that its change or deletion
re-queues the InferenceService whose name it takes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any

from ..cluster.api import resource_version
from ..cluster.resources import resource_named
from ..core.rendering.metadata import MANAGED_BY, OWNER_LABEL
from ..models.object_metadata import labels_of, metadata_of
from .packing import Held, Packed, pack, unpack
from .watches import Collection, Key, Watched, object_key
from .write_record import WriteRecord

__all__ = ["OWNER_LABEL", "KindCache", "OwnedObjects", "OwnerChange", "OwnerOf", "labelled_owner"]


#: (namespace, owner, the object, deleted?)
OwnerChange = Callable[[str, str, Mapping[str, Any], bool], None]
#: An object's owner's name (in its namespace), or None.
OwnerOf = Callable[[Mapping[str, Any]], str | None]


def labelled_owner(obj: Mapping[str, Any]) -> str | None:
    """The InferenceService an object's ``ome.io/inferenceservice`` label names."""
    return labels_of(obj).get(OWNER_LABEL)


def _mark(obj: Mapping[str, Any]) -> tuple[Any, int]:
    """What a change other than its status moves: its spec (the generation), and a digest of
    its labels, annotations and owners (a digest: held for every object of the kind)."""
    meta = metadata_of(obj)
    held = {k: meta.get(k) for k in ("labels", "annotations", "ownerReferences")}
    return meta.get("generation"), hash(json.dumps(held, sort_keys=True))


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
        record: WriteRecord | None = None,
        status_read: bool = True,
    ):
        super().__init__()
        self.kind = kind
        #: What the operator wrote of this kind (shared by every cache and both controllers).
        self.record = record if record is not None else WriteRecord()
        #: The namespaces (None: all) whose listings make the cache complete.
        self.scopes = frozenset(scopes)
        self._on_change = on_change
        self._owner = owner
        #: (namespace, name) -> (its owner, its resourceVersion, the packed object)
        self._by_name: dict[Key, tuple[str | None, str | None, Held]] = {}
        #: (namespace, owner) -> the names of the objects it owns
        self._by_owner: dict[Key, set[str]] = {}
        #: For a kind whose status no pass reads (``status_read`` False): (namespace, name) ->
        #: what a change must move to be reported (``_mark``); a status change alone is not.
        self._marks: dict[Key, Any] | None = None if status_read else {}

    def named(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The object as the watch shows it, or as a write of the operator's answered since
        (``write_record``)."""
        held = self._by_name.get((namespace, name))
        cached = unpack(held[2]) if held is not None else None
        return self.record.current((self.kind, namespace, name), cached)

    def owned_by(self, namespace: str, owner: str) -> dict[str, dict[str, Any]]:
        """The objects of ``owner``, as ``named`` reads them, with those created for it that
        the watch has not shown yet, by name."""
        found = {
            obj["metadata"]["name"]: obj for obj in self.record.unseen(self.kind, namespace, owner)
        }
        for name in self._by_owner.get((namespace, owner), ()):
            obj = self.named(namespace, name)
            if obj is not None:
                found[name] = obj
        return dict(sorted(found.items()))

    def keys(self) -> list[Key]:
        """(namespace, name) of every object held, sorted."""
        return sorted(self._by_name)

    def _held(self) -> Mapping[Key, Mapping[str, Any]]:
        return Packed(self._by_name, lambda held: held[2])

    def _change(self, obj: Mapping[str, Any], *, deleted: bool, report: bool) -> None:
        self.record.saw(obj, deleted)
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
        moved = self._moved(key, obj, deleted)
        if report and owner is not None and moved:
            self._on_change(namespace, owner, obj, deleted)

    def _moved(self, key: Key, obj: Mapping[str, Any], deleted: bool) -> bool:
        """Whether a change is worth a pass: always, unless no pass reads this kind's status
        and only its status moved (an autoscaler's, every sync)."""
        if self._marks is None:
            return True
        if deleted:
            self._marks.pop(key, None)
            return True
        mark = _mark(obj)
        before = self._marks.get(key)
        self._marks[key] = mark
        return before != mark


class OwnedObjects:
    """A ``KindCache`` per written kind, and the informers that feed them."""

    #: Kinds found by owner, then the one also watched unlabelled and found by name.
    LABELLED = (
        "Deployment",
        "Service",
        "InferenceReplica",
        "LeaderWorkerSet",
        "HorizontalPodAutoscaler",
        "ScaledObject",
    )
    BUDGETS = "PodDisruptionBudget"
    #: Pods, read (never written) for why a component does not serve.
    PODS = "Pod"
    #: The pods held: an InferenceService's, but not OMENative ones.
    POD_SELECTOR = ",".join([OWNER_LABEL, *(f"{k}!={v}" for k, v in MANAGED_BY.items())])

    #: Every kind held, in the order a pass reads them.
    KINDS = (*LABELLED, BUDGETS, PODS)
    #: Kinds whose status no pass reads: a change of it alone re-queues nothing (an HPA writes
    #: its status at every sync where its metrics moved).
    STATUS_UNREAD = frozenset({"HorizontalPodAutoscaler", "ScaledObject"})

    def __init__(self, record: WriteRecord | None = None) -> None:
        #: What the operator wrote (``write_record``): each cache reads through it.
        self.record = record if record is not None else WriteRecord()
        self.caches = {
            kind: KindCache(
                kind,
                functools.partial(self._report, kind),
                record=self.record,
                status_read=kind not in self.STATUS_UNREAD,
            )
            for kind in self.KINDS
        }
        #: Told of every change to a labelled object of one kind (``listen``).
        self._listeners: dict[str, list[OwnerChange]] = {}

    def listen(self, kind: str, listener: OwnerChange) -> None:
        """Tell ``listener`` of every change to a labelled object of ``kind``."""
        self._listeners.setdefault(kind, []).append(listener)

    def _report(
        self, kind: str, namespace: str, owner: str, obj: Mapping[str, Any], deleted: bool
    ) -> None:
        for listener in self._listeners.get(kind, ()):
            listener(namespace, owner, obj, deleted)

    def tell(self, answer: Mapping[str, Any]) -> None:
        """A write's answer, told to the listeners of its kind now rather than when the watch
        shows it (each listener knows its own echo: ``write_record``). The InferenceService
        controller learns of the InferenceReplica status it mirrors at once."""
        kind, owner = answer.get("kind", ""), labelled_owner(answer)
        if owner is not None:
            self._report(kind, object_key(answer)[0], owner, answer, False)

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
            component = labels_of(pod).get("component")
            if isinstance(component, str):
                found.setdefault(component, []).append(pod)
        return {component: tuple(pods) for component, pods in sorted(found.items())}

    def watched(self, *, missing: Container[str] = ()) -> list[Watched]:
        """What to watch for these caches; a kind that is not installed (``missing``: the
        LeaderWorkerSet or the KEDA ScaledObject API) holds nothing and is not watched."""
        selectors = {self.BUDGETS: None, self.PODS: self.POD_SELECTOR}
        return [
            Watched(resource_named(kind), cache, label_selector=selectors.get(kind, OWNER_LABEL))
            for kind, cache in self.caches.items()
            if kind not in missing
        ]
