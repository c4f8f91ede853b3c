"""InferenceService conditions (docs/reference/status-and-events.md): built from observed
workloads.

Pure: the caller passes the previous conditions and the time, so ``lastTransitionTime`` changes
only when a condition's status changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .pod_health import CAUSES, Cause, find_condition

__all__ = [
    "COMPONENT_CONDITION",
    "NAME_CONFLICT",
    "RECONCILE_FAILED",
    "component_condition",
    "condition",
    "failed_status",
    "find_condition",
    "merge_conditions",
    "omenative_counts",
    "ready_condition",
    "unavailable_allowed",
]

#: Reason of ``Ready=False`` when a pass cannot complete for a reason the InferenceService's
#: author can fix: it does not parse, or the API server refuses what it renders.
RECONCILE_FAILED = "ReconcileFailed"

#: Reason of ``Ready=False`` when a name the InferenceService renders is taken by an object it
#: does not control (``core.ownership``): that object is never written.
NAME_CONFLICT = "NameConflict"

#: The condition each component's readiness is reported under.
COMPONENT_CONDITION = {"engine": "EngineReady", "decoder": "DecoderReady", "router": "RouterReady"}


def condition(
    kind: str,
    status: str,
    reason: str = "",
    message: str = "",
    *,
    severity: str = "",
    previous: Mapping[str, Any] | None = None,
    now: str,
) -> dict[str, Any]:
    """A knative-shaped condition; empty message and severity are left out."""
    found: dict[str, Any] = {"type": kind, "status": status}
    if reason:
        found["reason"] = reason
    if message:
        found["message"] = message
    if severity:
        found["severity"] = severity
    same = previous is not None and previous.get("status") == status
    found["lastTransitionTime"] = previous.get("lastTransitionTime", now) if same else now
    return found


def _mirror(component: str, workload: Mapping[str, Any] | None) -> tuple[str, str, str]:
    """Copy the workload's ``Available`` condition, or ``Initializing``. A LeaderWorkerSet's
    reason is copied only with a True status: it keeps ``AllGroupsReady`` when it turns False
    during a roll, so a False one is told in the operator's words, from its counts."""
    status = (workload or {}).get("status") or {}
    found = find_condition(status.get("conditions") or [], "Available")
    if found is None:
        return "False", "Initializing", f"{component} component initializing"
    state = found.get("status", "Unknown")
    if state != "True" and (workload or {}).get("kind") == "LeaderWorkerSet":
        ready, total = _count(status, "readyReplicas"), _count(status, "replicas")
        return state, "GroupsNotReady", f"{ready}/{total} leader-worker groups ready"
    return state, found.get("reason", ""), found.get("message", "")


def omenative_counts(replica: Mapping[str, Any] | None) -> dict[str, Any]:
    """The InferenceReplica's status counts that ``status.components.<c>.lifecycle`` mirrors."""
    status = (replica or {}).get("status") or {}
    keys = (
        "replicas",
        "readyReplicas",
        "servingReplicas",
        "availableReplicas",
        "updatedReplicas",
        "updatedReadyReplicas",
        "currentRevision",
        "updateRevision",
    )
    return {key: status[key] for key in keys if key in status}


def _omenative(
    replica: Mapping[str, Any] | None, desired: int, max_unavailable: Any
) -> tuple[str, str, str]:
    """The ISVC component condition for an OMENative component."""
    status = (replica or {}).get("status") or {}
    total = desired
    ready, serving = _count(status, "readyReplicas"), _count(status, "servingReplicas")
    minimum = max(total - unavailable_allowed(max_unavailable, total), 0)
    if total == 0:
        return "False", "NoReplicas", "Component has no desired Instances"
    if ready >= total:
        return "True", "Ready", "All Instances are Ready"
    if serving >= minimum:
        return "True", "MinimumAvailable", f"{serving}/{total} Instances serving (min {minimum})"
    told = find_condition(status.get("conditions") or [], "Ready") or {}
    if told.get("status") == "False" and told.get("reason") in CAUSES:
        # The InferenceReplica controller reads the pods: why they do not serve.
        return "False", told["reason"], told.get("message", "")
    return (
        "False",
        "InsufficientAvailable",
        f"{serving}/{total} Instances serving, need {minimum}",
    )


def _count(status: Mapping[str, Any], key: str) -> int:
    """A replica count another controller reported; anything but an integer counts as 0."""
    value = status.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def unavailable_allowed(value: Any, total: int) -> int:
    """``maxUnavailable`` (an integer or a percentage, rounded down) against ``total``."""
    if value is None:
        return 0
    if isinstance(value, str) and value.endswith("%"):
        return int(value[:-1]) * total // 100
    return int(value)


def component_condition(
    component: str,
    mode: str,
    workload: Mapping[str, Any] | None,
    *,
    desired: int,
    max_unavailable: Any = None,
    cause: Cause | None = None,
    previous: Mapping[str, Any] | None,
    now: str,
) -> dict[str, Any]:
    """``<Component>Ready`` for the workload of the component's resolved mode; when it is not
    True, the ``cause`` its pods show (if any) is its reason and message."""
    if mode == "OMENative":
        status, reason, message = _omenative(workload, desired, max_unavailable)
    else:
        status, reason, message = _mirror(component, workload)
    if status != "True" and cause is not None:
        reason, message = cause.reason, cause.message
    return condition(
        COMPONENT_CONDITION[component], status, reason, message, previous=previous, now=now
    )


def ready_condition(
    conditions: Iterable[Mapping[str, Any]], *, previous: Mapping[str, Any] | None, now: str
) -> dict[str, Any]:
    """True iff EngineReady and IngressReady are True; else copy the first
    non-True one's reason and message."""
    listed = list(conditions)
    for kind in ("EngineReady", "IngressReady"):
        found = find_condition(listed, kind)
        if found is None or found.get("status") != "True":
            reason = (found or {}).get("reason", "")
            message = (found or {}).get("message", "")
            status = (found or {}).get("status", "Unknown")
            return condition(
                "Ready",
                "False" if status == "True" else status,
                reason,
                message,
                previous=previous,
                now=now,
            )
    return condition("Ready", "True", previous=previous, now=now)


def merge_conditions(
    previous: Iterable[Mapping[str, Any]], updates: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Replace conditions by type, keep the others, and sort by type for stable output."""
    merged = {c["type"]: dict(c) for c in previous if "type" in c}
    merged.update({c["type"]: dict(c) for c in updates})
    return [merged[kind] for kind in sorted(merged)]


def failed_status(
    status: Any, message: str, *, now: str, reason: str = RECONCILE_FAILED
) -> dict[str, Any]:
    """The status of an InferenceService whose pass failed with ``message``:
    ``Ready=False``, ``reason`` (by default ``ReconcileFailed``); every other condition and
    field as it was."""
    kept = dict(status) if isinstance(status, Mapping) else {}
    previous = [c for c in kept.get("conditions") or [] if isinstance(c, Mapping)]
    ready = condition(
        "Ready",
        "False",
        reason,
        message,
        previous=find_condition(previous, "Ready"),
        now=now,
    )
    return {**kept, "conditions": merge_conditions(previous, [ready])}
