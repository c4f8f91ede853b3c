"""OMENative pods as the InferenceReplica controller reads them (docs/reference/workloads.md,
Instances and pods, Counting): the identity its labels carry and the state its status shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...models.object_metadata import labels_of, metadata_of
from ..conditions import find_condition
from ..pod_health import pod_serves, scheduler_reason
from ..rendering.instance_pods import SERVING_GATE

__all__ = ["FINISHED_PHASES", "ObservedPod", "observed_pods"]

#: Pod phases after which a pod serves no more: its Instance is recreated (a serving pod
#: never exits on purpose).
FINISHED_PHASES = frozenset({"Failed", "Succeeded"})

_IDENTITY = {
    "index": "ome.io/instance-index",
    "incarnation": "ome.io/instance-incarnation",
    "ordinal": "ome.io/pod-ordinal",
}


@dataclass(frozen=True)
class ObservedPod:
    """One pod of an Instance: who it is (from its labels) and how it is doing."""

    name: str
    uid: str
    index: int
    incarnation: int
    runner: str
    ordinal: int
    revision: str
    #: It serves, as its own ``Ready`` condition says, this operator's gate aside
    #: (``pod_health.pod_serves``).
    ready: bool
    #: The ``ome.io/serving`` condition's status ("True", "False"), None when it is not set.
    serving: str | None
    #: Its phase is one after which it serves no more.
    finished: bool
    #: It has a ``deletionTimestamp``: it is going, whatever its state.
    terminating: bool
    #: The scheduler bound it to a node (``spec.nodeName``).
    bound: bool = False
    #: The PodGroup it joined (``spec.schedulingGroup.podGroupName``), None for none.
    group: str | None = None
    #: Why the scheduler cannot place it (``pod_health.scheduler_reason``), None when it has
    #: not said so.
    unschedulable: str | None = None

    @classmethod
    def of(cls, pod: Mapping[str, Any]) -> ObservedPod | None:
        """The pod, or None when its labels do not say which Instance it belongs to (it is
        then left alone: nothing here can tell what replacing it would mean)."""
        meta = metadata_of(pod)
        labels = labels_of(pod)
        numbers = {field: _number(labels.get(label)) for field, label in _IDENTITY.items()}
        runner = labels.get("ome.io/runner")
        if None in numbers.values() or runner not in ("default", "leader", "worker"):
            return None
        status = pod.get("status") or {}
        spec = pod.get("spec") or {}
        conditions = status.get("conditions") or []
        serving = find_condition(conditions, SERVING_GATE)
        return cls(
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            runner=str(runner),
            revision=str(labels.get("ome.io/revision-hash") or ""),
            ready=pod_serves(pod),
            serving=None if serving is None else str(serving.get("status")),
            finished=status.get("phase") in FINISHED_PHASES,
            terminating=bool(meta.get("deletionTimestamp")),
            bound=bool(spec.get("nodeName")),
            group=(spec.get("schedulingGroup") or {}).get("podGroupName"),
            unschedulable=scheduler_reason(pod),
            **numbers,  # type: ignore[arg-type]
        )


def observed_pods(pods: Sequence[Mapping[str, Any]]) -> dict[int, list[ObservedPod]]:
    """Instance index -> its pods, by name."""
    found: dict[int, list[ObservedPod]] = {}
    for pod in pods:
        observed = ObservedPod.of(pod)
        if observed is not None:
            found.setdefault(observed.index, []).append(observed)
    return {index: sorted(group, key=lambda p: p.name) for index, group in sorted(found.items())}


def _number(value: Any) -> int | None:
    """A label's non-negative integer value; None for anything else."""
    return int(value) if isinstance(value, str) and value.isdigit() else None
