"""The InferenceReplica's status (docs/reference/workloads.md, Counting and InferenceReplica
conditions): its counts, one row per Instance, and its ``Ready`` condition with the exact
reasons and messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...models.object_metadata import labels_of, metadata_of
from ..conditions import condition, find_condition, unavailable_allowed
from ..pod_health import Cause
from ..rendering.metadata import MANAGED_BY, OWNER_LABEL

__all__ = [
    "InstanceState",
    "inference_service_of",
    "label_selector",
    "replica_ready",
    "replica_status",
]


@dataclass(frozen=True)
class InstanceState:
    """One Instance as this pass leaves it (its status row and what it counts as)."""

    index: int
    phase: str
    incarnation: int
    #: Pods it should have, and those of them whose containers are ready.
    pods: int
    ready_pods: int
    #: Counted in the replica counts: not being scaled away.
    active: bool = True
    #: Every pod is there, of the current template and incarnation.
    updated: bool = False

    @property
    def ready(self) -> bool:
        return self.active and self.phase == "Ready"

    def row(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "phase": self.phase,
            "incarnation": self.incarnation,
            "pods": self.pods,
            "readyPods": self.ready_pods,
        }


def replica_ready(
    instances: Sequence[InstanceState], desired: int, minimum: int, cause: Cause | None = None
) -> tuple[str, str, str]:
    """The ``Ready`` condition's status, reason and message (first matching row; the table of
    docs/troubleshooting.md, "OMENative pods and InferenceReplicas");
    too few Instances serving name the ``cause`` their pods show, when there is one."""
    ready = sum(instance.ready for instance in instances)
    # The controller sets the serving gate on every pod of a ready Instance in the same pass,
    # so a ready Instance serves (and, with no minReadySeconds, is available).
    serving = ready
    if any(instance.phase == "Failed" for instance in instances):
        return "False", "InstanceFailed", "At least one Instance has Phase=Failed"
    if desired == 0:
        return "False", "NoReplicas", "InferenceReplica has no desired Instances"
    if ready >= desired:
        return "True", "AllInstancesReady", f"{ready}/{desired} Instances Ready"
    if serving >= minimum:
        return "True", "MinimumAvailable", f"{serving}/{desired} Instances serving (min {minimum})"
    if cause is not None:
        return "False", cause.reason, cause.message
    return (
        "False",
        "ReplicaCountMismatch",
        f"{serving}/{desired} Instances serving, need {minimum} (no rollout in flight)",
    )


def replica_status(
    replica: Mapping[str, Any],
    instances: Sequence[InstanceState],
    *,
    desired: int,
    revision: str,
    now: str,
    cause: Cause | None = None,
) -> dict[str, Any]:
    """The whole status the InferenceReplica controller writes; ``cause``: why its pods do not
    serve, if they show it."""
    meta = metadata_of(replica)
    spec = replica.get("spec") or {}
    previous = (replica.get("status") or {}).get("conditions") or []
    rolling = (
        ((spec.get("lifecycle") or {}).get("updateStrategy") or {}).get("rollingUpdate")
    ) or {}
    minimum = max(desired - unavailable_allowed(rolling.get("maxUnavailable"), desired), 0)
    status, reason, message = replica_ready(instances, desired, minimum, cause)
    counted = [instance for instance in instances if instance.active]
    ready = sum(instance.ready for instance in counted)
    updated = [instance for instance in counted if instance.updated]
    return {
        "observedGeneration": meta.get("generation") or 0,
        "replicas": len(instances),
        "readyReplicas": ready,
        "servingReplicas": ready,
        "availableReplicas": ready,
        "updatedReplicas": len(updated),
        "updatedReadyReplicas": sum(instance.ready for instance in updated),
        "currentRevision": revision,
        "updateRevision": revision,
        "labelSelector": label_selector(replica),
        "instanceStatuses": [instance.row() for instance in instances],
        "conditions": [
            condition(
                "Ready",
                status,
                reason,
                message,
                previous=find_condition(previous, "Ready"),
                now=now,
            )
        ],
    }


def label_selector(replica: Mapping[str, Any]) -> str:
    """The selector of the InferenceReplica's pods, as the scale subresource reports it."""
    spec = replica.get("spec") or {}
    isvc = inference_service_of(replica)
    selector = {"component": spec.get("component", ""), OWNER_LABEL: isvc, **MANAGED_BY}
    return ",".join(f"{key}={value}" for key, value in sorted(selector.items()))


def inference_service_of(replica: Mapping[str, Any]) -> str:
    """The name of the InferenceService whose Instances ``replica`` keeps: its ``parentRef``,
    else its owner label."""
    spec = replica.get("spec") or {}
    return (spec.get("parentRef") or {}).get("name") or labels_of(replica).get(OWNER_LABEL, "")
