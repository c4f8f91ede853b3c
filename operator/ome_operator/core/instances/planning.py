"""What the InferenceReplica controller does in one pass (docs/reference/workloads.md, The
InferenceReplica controller): pure, from the InferenceReplica and its pods as the watch shows
them.

It keeps ``spec.replicas`` Instances (nil or 0: one). A new Instance takes the lowest free
index (at most ``NEW_INSTANCES_PER_PASS`` new ones a pass); an Instance above the desired count
goes (non-ready first, then the highest index), and keeps its index, phase ``Deleting``, until
its pods are gone. An Instance whose pod failed,
whose pod of a complete Instance disappeared, or whose template changed is recreated
whole: its pods are deleted (phase ``Failed``), and once they are gone all are created again,
incarnation + 1; a leader without its workers serves nothing. Pods missing from an Instance that
is still being created (phase ``Creating``, or no row yet) are created, never others: a pod the
watch has not shown yet is one of these, so a stale cache, a retry or a restart never deletes
what it should have waited for, and a create of a pod that exists is refused by its name.

With gang placement (``pod_groups`` given: the PodGroups the InferenceReplica owns), the pods of a
multi-pod Instance join a PodGroup of their incarnation, created before them (``gangs``).

The status rows carry each Instance's phase and incarnation from pass to pass. A pod create the
API server refused (``refused``: its answer, which the controller keeps until a create succeeds)
is the first cause the status names (``PodsRefused``): no pod exists to show it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...models.object_metadata import metadata_of
from ..pod_health import Cause, pods_cause, refused_cause
from ..rendering.inference_replicas import revision_hash
from ..rendering.instance_pods import render_instance_pods
from .gangs import GangWrites, gang_cause, in_a_gang, plan_gangs
from .observed import ObservedPod, observed_pods
from .status import InstanceState, replica_status

__all__ = ["NEW_INSTANCES_PER_PASS", "InstancePlan", "PodRef", "plan_instances"]

#: Phases of an Instance every pod of which existed.
_COMPLETE = frozenset({"Ready", "Pending"})
#: New Instances a pass starts at most: a scale to thousands goes in steps (each pass is
#: followed by the watch events of the pods it made), so no pass grows with the desired count.
NEW_INSTANCES_PER_PASS = 50


@dataclass(frozen=True)
class PodRef:
    """A pod to delete: by name, and only while it is this very pod (its uid)."""

    name: str
    uid: str


@dataclass(frozen=True)
class InstancePlan:
    """The writes of one pass, in the order they are made: PodGroups created, pods created,
    pods deleted, PodGroups deleted, the ``ome.io/serving`` condition set on pods, then the
    InferenceReplica's status."""

    create: tuple[dict[str, Any], ...] = ()
    delete: tuple[PodRef, ...] = ()
    create_groups: tuple[dict[str, Any], ...] = ()
    delete_groups: tuple[PodRef, ...] = ()
    #: (pod name, status of its ``ome.io/serving`` condition).
    serving: tuple[tuple[str, bool], ...] = ()
    status: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Writes:
    create: list[dict[str, Any]] = field(default_factory=list)
    delete: list[PodRef] = field(default_factory=list)
    serving: list[tuple[str, bool]] = field(default_factory=list)

    def remove(self, pods: Sequence[ObservedPod]) -> None:
        self.delete.extend(PodRef(p.name, p.uid) for p in pods if not p.terminating)


def plan_instances(
    replica: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    *,
    now: str,
    refused: str | None = None,
    pod_groups: Sequence[Mapping[str, Any]] | None = None,
) -> InstancePlan:
    """The pass for ``replica`` given the pods it owns (as the watch shows them), when the
    API server refused a create, its answer, and with gang placement the PodGroups it owns
    (``pod_groups``; None: no gang placement)."""
    spec = replica.get("spec") or {}
    desired = spec.get("replicas") or 1  # nil or 0 means one Instance
    revision = revision_hash(spec.get("runners") or [])
    groups = observed_pods(pods)
    rows = _rows(replica)
    going, active = _scaled(sorted(set(groups) | set(rows)), rows, groups, desired)
    writes = _Writes()
    states = []
    for index in sorted(going, reverse=True):  # the highest index goes first
        state = _going(index, groups.get(index, []), rows.get(index, {}), writes)
        if state is not None:
            states.append(state)
    for index in sorted(active):
        found, row = groups.get(index, []), rows.get(index, {})
        instance = _Instance(replica, index, found, row, revision, gang=pod_groups is not None)
        states.append(instance.decide(writes))
    states.sort(key=lambda state: state.index)
    gangs = GangWrites()
    if pod_groups is not None:
        gangs = plan_gangs(replica, states, groups, writes.create, pod_groups)
    return InstancePlan(
        create=tuple(writes.create),
        delete=tuple(writes.delete),
        create_groups=gangs.create,
        delete_groups=tuple(PodRef(name, uid) for name, uid in gangs.delete),
        serving=tuple(writes.serving),
        status=replica_status(
            replica,
            states,
            desired=desired,
            revision=revision,
            now=now,
            cause=_cause(pods, groups, gangs, refused),
        ),
    )


def _cause(
    pods: Sequence[Mapping[str, Any]],
    groups: Mapping[int, list[ObservedPod]],
    gangs: GangWrites,
    refused: str | None,
) -> Cause | None:
    """Why too few Instances serve: a refused create, else the most blocking cause the pods
    show. A pod waiting in a gang is told by its gang (``WaitingForGang``), never one by one."""
    if refused is not None:
        return refused_cause(refused)
    ganged = {p.name for listed in groups.values() for p in listed if in_a_gang(p)}
    alone = [pod for pod in pods if metadata_of(pod).get("name") not in ganged]
    found = [c for c in (pods_cause(alone), gang_cause(gangs.waiting)) if c is not None]
    return min(found, key=lambda c: c.rank, default=None)


def _rows(replica: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    """The status rows of the last pass, by Instance index."""
    rows = ((replica.get("status") or {}).get("instanceStatuses")) or []
    return {
        row["index"]: row
        for row in rows
        if isinstance(row, Mapping) and isinstance(row.get("index"), int) and row["index"] >= 0
    }


def _scaled(
    indexes: list[int],
    rows: Mapping[int, Mapping[str, Any]],
    groups: Mapping[int, list[ObservedPod]],
    desired: int,
) -> tuple[set[int], list[int]]:
    """The Instances going away, and the ``desired`` ones to keep (new ones at the lowest free
    indexes; an index stays taken until its pods are gone)."""
    going = {index for index in indexes if rows.get(index, {}).get("phase") == "Deleting"}
    active = [index for index in indexes if index not in going]
    if len(active) > desired:
        # Non-ready Instances go first, then the highest index.
        order = sorted(active, key=lambda i: (_looks_ready(groups.get(i, [])), -i))
        going |= set(order[: len(active) - desired])
        active = [index for index in active if index not in going]
    taken, index = set(indexes), 0
    wanted = min(desired, len(active) + NEW_INSTANCES_PER_PASS)
    while len(active) < wanted:
        if index not in taken:
            active.append(index)
        index += 1
    return going, active


def _looks_ready(pods: Sequence[ObservedPod]) -> bool:
    return bool(pods) and all(p.ready and not p.terminating and not p.finished for p in pods)


def _going(
    index: int, pods: list[ObservedPod], row: Mapping[str, Any], writes: _Writes
) -> InstanceState | None:
    """An Instance being scaled away: its pods are deleted; its row goes with the last one."""
    writes.remove(pods)
    if not pods:
        return None
    incarnation = max([_incarnation(row), *(p.incarnation for p in pods)])
    return InstanceState(index, "Deleting", incarnation, len(pods), 0, active=False)


def _incarnation(row: Mapping[str, Any]) -> int:
    value = row.get("incarnation")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


@dataclass(frozen=True)
class _Instance:
    """One Instance to keep: its pods as found, and its row of the last pass."""

    replica: Mapping[str, Any]
    index: int
    pods: list[ObservedPod]
    row: Mapping[str, Any]
    revision: str
    #: Its pods join a PodGroup of their incarnation (gang placement).
    gang: bool = False

    def decide(self, writes: _Writes) -> InstanceState:
        recorded = _incarnation(self.row) if self.row else 1
        incarnation = max([recorded, *(p.incarnation for p in self.pods)])
        # The row speaks of the pods found only when no newer incarnation was made since.
        row_phase = self.row.get("phase") if recorded == incarnation else None
        expected = render_instance_pods(
            self.replica, self.index, incarnation=incarnation, gang=self.gang
        )
        names = {pod["metadata"]["name"] for pod in expected}
        alive = [p for p in self.pods if not p.terminating]
        current = {
            p.name: p
            for p in alive
            if p.name in names and p.incarnation == incarnation and p.revision == self.revision
        }
        broken = (
            row_phase == "Failed"
            or any(p.finished for p in alive)
            or len(current) < len(alive)  # another template, incarnation or size
            or (row_phase in _COMPLETE and len(current) < len(names))
        )
        if broken:
            return self._recreate(incarnation, len(names), writes)
        held = {p.name for p in self.pods}
        missing = [pod for pod in expected if pod["metadata"]["name"] not in current]
        writes.create.extend(pod for pod in missing if pod["metadata"]["name"] not in held)
        ready_pods = sum(p.ready for p in current.values())
        ready = not missing and ready_pods == len(names)
        for pod in current.values():
            if (pod.serving == "True") != ready and (ready or pod.serving == "True"):
                writes.serving.append((pod.name, ready))
        phase = "Creating" if missing else "Ready" if ready else "Pending"
        return InstanceState(
            self.index, phase, incarnation, len(names), ready_pods, updated=not missing
        )

    def _recreate(self, incarnation: int, size: int, writes: _Writes) -> InstanceState:
        """Delete every pod of the Instance; once none is left, create them all anew."""
        if self.pods:
            writes.remove(self.pods)
            return InstanceState(self.index, "Failed", incarnation, size, 0)
        fresh = render_instance_pods(
            self.replica, self.index, incarnation=incarnation + 1, gang=self.gang
        )
        writes.create.extend(fresh)
        return InstanceState(self.index, "Creating", incarnation + 1, size, 0)
