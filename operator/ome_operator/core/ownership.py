"""Whose an object is: the rule by which the operator writes over an object that exists under a
name it renders, and what it says when the name is someone else's (docs/workloads.md, "Whose
objects are written").

An object is the operator's for an InferenceService when it is controlled by it (a controller
owner reference with its uid), or when it has no controller and records that very
InferenceService's uid in the annotation ``ome.io/inferenceservice-uid``, which every object the
operator writes carries (``stamped``). A deletion with ``--cascade=orphan`` leaves the annotation:
what an InferenceService orphaned is adopted again by the same InferenceService only, never by
one made again under the same name, and never on a label alone. An OMENative pod records the uid
of its InferenceReplica's InferenceService, so the InferenceReplica made again for the same
InferenceService adopts the pods an orphaning deletion of the old one left.

The uid is a record, not a secret: whoever may write an object in the namespace can also write
the annotation, and gains nothing by it that writing the object did not already give.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..models import InferenceService
from ..models.object_metadata import (
    annotations_of,
    controller_reference,
    labels_of,
    metadata_of,
)
from .conditions import NAME_CONFLICT, failed_status, find_condition
from .plans import Event, LogRecord, Outcome, ReconcilePlan
from .rendering.metadata import OWNER_LABEL, UID_ANNOTATION
from .rendering.naming import component_name

__all__ = [
    "UID_ANNOTATION",
    "NameConflict",
    "controller_reference",
    "inference_service_uid",
    "is_controlled_by_it",
    "is_ours",
    "name_conflict_told",
    "orphaned_for",
    "own_writes",
    "pod_is_ours",
    "recorded_uid",
    "split_existing",
    "stamped",
]

Existing = Mapping[tuple[str, str], Mapping[str, Any]]


class NameConflict(Exception):
    """An object exists under a name the InferenceService renders, and it is not its own."""

    def __init__(self, kind: str, name: str, inference_service: str) -> None:
        self.kind = kind
        self.name = name
        self.inference_service = inference_service
        super().__init__(
            f"{kind} {name} exists and is not controlled by InferenceService {inference_service}"
        )

    def log_record(self, namespace: str) -> LogRecord:
        """The line a pass that met it logs."""
        return LogRecord(
            "error",
            "Name taken by an object the InferenceService does not control; it is not written",
            (
                ("namespace", namespace),
                ("inferenceService", self.inference_service),
                ("kind", self.kind),
                ("resource", self.name),
            ),
        )


def recorded_uid(obj: Mapping[str, Any]) -> str | None:
    """The InferenceService uid ``obj`` records (``UID_ANNOTATION``), None when none."""
    value = annotations_of(obj).get(UID_ANNOTATION)
    return value if isinstance(value, str) and value else None


def is_ours(obj: Mapping[str, Any], isvc: InferenceService) -> bool:
    """Whether the operator may write over ``obj`` for ``isvc``: controlled by it, or with no
    controller and recording its uid. Without a uid (an InferenceService read from a file, by
    ``ome-operator render``), a controller reference of its kind and name is taken as its."""
    uid = isvc.metadata.uid or None
    ref = controller_reference(obj)
    if ref is not None:
        return (
            ref.get("kind") == isvc.kind
            and ref.get("name") == isvc.name
            and (uid is None or ref.get("uid") == uid)
        )
    return uid is not None and recorded_uid(obj) == uid


def is_controlled_by_it(obj: Mapping[str, Any], isvc: InferenceService) -> bool:
    """Whether ``isvc`` is ``obj``'s controller: a controller reference, and ``obj`` is its own
    (``is_ours``). An orphan recording its uid is its own, but not controlled by it."""
    return controller_reference(obj) is not None and is_ours(obj, isvc)


def stamped(obj: Mapping[str, Any], uid: str | None) -> dict[str, Any]:
    """``obj`` recording ``uid`` (the only value its annotation may have: one copied from the
    InferenceService's own annotations is replaced, or, without a uid, removed)."""
    metadata = dict(metadata_of(obj))
    annotations = {k: v for k, v in annotations_of(obj).items() if k != UID_ANNOTATION}
    if uid:
        annotations[UID_ANNOTATION] = uid
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    else:
        metadata.pop("annotations", None)
    return {**obj, "metadata": metadata}


def inference_service_uid(replica: Mapping[str, Any]) -> str | None:
    """The uid of the InferenceService an InferenceReplica was written for: the one it records,
    else the one its controller reference names."""
    ref = controller_reference(replica)
    fallback = ref.get("uid") if ref is not None and ref.get("kind") == "InferenceService" else None
    return recorded_uid(replica) or (fallback if isinstance(fallback, str) and fallback else None)


def pod_is_ours(pod: Mapping[str, Any], replica: Mapping[str, Any]) -> bool:
    """Whether an InferenceReplica may adopt ``pod``, which has no controller: it records the
    uid of the InferenceReplica's own InferenceService (the labels naming the replica are the
    caller's check)."""
    uid = inference_service_uid(replica)
    return controller_reference(pod) is None and uid is not None and recorded_uid(pod) == uid


def orphaned_for(pod: Mapping[str, Any], replica: Mapping[str, Any]) -> bool:
    """Whether ``pod`` is one for ``replica`` to adopt rather than create again: it has no
    controller, is not going, records the uid of the replica's own InferenceService
    (``pod_is_ours``: never on labels alone), and its labels name the InferenceReplica
    (``<isvc>-<component>``)."""
    meta = metadata_of(pod)
    labels = labels_of(pod)
    isvc, component = labels.get(OWNER_LABEL), labels.get("component")
    return (
        pod_is_ours(pod, replica)
        and not meta.get("deletionTimestamp")
        and isinstance(isvc, str)
        and isinstance(component, str)
        and component_name(isvc, component) == metadata_of(replica).get("name")
    )


def name_conflict_told(
    status: Any, conflict: NameConflict, *, now: str
) -> tuple[dict[str, Any], tuple[Event, ...]]:
    """The status that says ``conflict`` (``Ready=False``, reason ``NameConflict``, every other
    condition kept), and its Warning event, posted once per transition: none when ``Ready``
    already says it."""
    previous = status.get("conditions") if isinstance(status, Mapping) else None
    ready = find_condition([c for c in previous or [] if isinstance(c, Mapping)], "Ready") or {}
    message = str(conflict)
    told = failed_status(status, message, now=now, reason=NAME_CONFLICT)
    said = (
        ready.get("status") == "False"
        and ready.get("reason") == NAME_CONFLICT
        and ready.get("message") == message
    )
    return told, (() if said else (Event("Warning", NAME_CONFLICT, message),))


def split_existing(
    isvc: InferenceService, existing: Existing
) -> tuple[dict[tuple[str, str], Mapping[str, Any]], dict[tuple[str, str], Mapping[str, Any]]]:
    """The existing objects (by kind and name) that are the InferenceService's own, and the
    others. Budgets stay with the first: a pass reads them all, and one of a component's name
    that is not its own fails preflight with its own reason (docs/workloads.md,
    "PodDisruptionBudgets")."""
    ours: dict[tuple[str, str], Mapping[str, Any]] = {}
    foreign: dict[tuple[str, str], Mapping[str, Any]] = {}
    for key, obj in existing.items():
        mine = key[0] == "PodDisruptionBudget" or is_ours(obj, isvc)
        (ours if mine else foreign)[key] = obj
    return ours, foreign


def own_writes(
    isvc: InferenceService, plan: ReconcilePlan, foreign: Existing, *, now: str
) -> ReconcilePlan:
    """``plan`` writing only what is the InferenceService's own: every object records its uid;
    when a name it renders is taken by another object (``foreign``), the first in plan order,
    nothing is written but ``Ready=False`` (``NameConflict``) and its event, and the pass waits
    for a change of the InferenceService or of that object."""
    for obj in plan.apply:
        kind, name = obj["kind"], obj["metadata"]["name"]
        if (kind, name) in foreign:
            conflict = NameConflict(kind, name, isvc.name)
            status, events = name_conflict_told(isvc.status, conflict, now=now)
            return ReconcilePlan(
                Outcome.PARKED,
                status=status,
                events=events,
                logs=(*plan.logs, conflict.log_record(isvc.namespace)),
                decisions=plan.decisions,
            )
    uid = isvc.metadata.uid
    return replace(plan, apply=tuple(stamped(obj, uid) for obj in plan.apply))
