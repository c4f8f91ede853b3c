"""The plan writer's pieces: the read of the owner before an adoption, and names found taken
by objects the watches do not show (a race within the grace, someone else's after it: never
written, told once)."""

from __future__ import annotations

import asyncio

import pytest

from ome_operator.cluster.errors import ApiError
from ome_operator.controller.name_conflicts import GRACE_SECONDS, TakenNames
from ome_operator.controller.runtime import OwnerGoing
from ome_operator.controller.write_record import WriteRecord
from ome_operator.controller.writing import PlanWriter
from ome_operator.core.ownership import NameConflict
from ome_operator.core.plans import Outcome, ReconcilePlan
from tests.builders import isvc_manifest
from tests.integration.observing import stored
from tests.support.kube_access import apply_object


def kube_objects(kube, plural: str) -> list[dict]:
    """The emulator's stored objects of ``plural``, as stored."""
    return [
        dict(versions.raw)
        for (resource, _, _), versions in kube.objects.items()
        if resource.plural == plural and not versions.deleted
    ]


async def test_an_adoption_reads_the_owner_first_and_stops_when_it_is_being_deleted(kube, api):
    manifest = isvc_manifest("chat")
    manifest["metadata"]["finalizers"] = ["example.com/hold"]
    stored = await apply_object(kube, manifest)
    async with kube.delete("/apis/ome.io/v1beta1/namespaces/default/inferenceservices/chat"):
        pass
    orphan = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "chat-engine", "namespace": "default", "resourceVersion": "1"},
    }
    desired = {**orphan, "spec": {"replicas": 1}}
    writer = PlanWriter(lambda: api, WriteRecord())
    plan = ReconcilePlan(Outcome.SUCCESS, apply=(desired,))

    with pytest.raises(OwnerGoing):  # the cached body shows no deletion yet
        await asyncio.to_thread(
            writer.write, ("default", "chat"), stored, {("Deployment", "chat-engine"): orphan}, plan
        )


async def test_what_the_watch_showed_deleted_is_created_again_only_for_a_living_owner(kube, api):
    """The garbage collector removes an InferenceService's objects once it is gone; their
    deletions may be heard before its own: a create of one reads the owner first."""
    isvc = await apply_object(kube, isvc_manifest("chat"))
    desired = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "chat", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]},
    }
    writer = PlanWriter(lambda: api, WriteRecord())
    plan = ReconcilePlan(Outcome.SUCCESS, apply=(desired,))
    key = ("default", "chat")
    await asyncio.to_thread(writer.write, key, isvc, {}, plan)  # written once
    async with kube.delete("/apis/ome.io/v1beta1/namespaces/default/inferenceservices/chat"):
        pass
    async with kube.delete("/api/v1/namespaces/default/services/chat"):
        pass
    writer.record.saw(desired, deleted=True)  # the watch shows it deleted

    with pytest.raises(OwnerGoing):  # the cached body shows no deletion yet
        await asyncio.to_thread(writer.write, key, isvc, {}, plan)
    assert stored(kube, "v1/services", "default", "chat") is None


class _Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(
            [("refused", 0.0), ("refused", 9.9)],
            [False, False],
            id="within the grace a taken name may be our own create the watch has not shown",
        ),
        pytest.param(
            [("refused", 0.0), ("refused", 10.0)],
            [False, True],
            id="a name still taken after the grace is someone else's",
        ),
        pytest.param(
            [("refused", 0.0), ("written", 20.0), ("refused", 25.0)],
            [False, None, False],
            id="a pass that wrote everything starts the grace again",
        ),
        pytest.param(
            [("recheck", 0.0)] * 6,
            [30.0, 60.0, 120.0, 240.0, 300.0, 300.0],
            id="a pass ending on a taken name is looked at again slowly, at most every 5 minutes",
        ),
        pytest.param(
            [("recheck", 0.0), ("recheck", 0.0), ("written", 0.0), ("recheck", 0.0)],
            [30.0, 60.0, None, 30.0],
            id="the recheck backoff starts again once the name is free",
        ),
    ],
)
def test_taken_names_tell_a_race_from_someone_elses_object(steps, expected) -> None:
    clock, key, told = _Clock(), ("default", "chat"), []
    taken = TakenNames(clock=clock)
    for step, at in steps:
        clock.now = 100.0 + at
        if step == "refused":
            told.append(taken.refused(key, "Deployment", "chat-engine"))
        elif step == "recheck":
            told.append(taken.recheck_in(key))
        else:
            told.append(taken.written(key))

    assert told == expected


FOREIGN = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "chat-engine", "namespace": "default"},
    "spec": {"replicas": 3},
}


async def _writer_over_a_foreign_object(kube, api) -> tuple[PlanWriter, dict, dict, _Clock]:
    """A writer, the stored InferenceService, and someone else's unlabelled Deployment under
    the name it renders (not in the owned cache: the watch never shows it)."""
    stored = await apply_object(kube, isvc_manifest("chat"))
    foreign = await apply_object(kube, FOREIGN)
    writer = PlanWriter(lambda: api, WriteRecord())
    clock = _Clock()
    writer.taken = TakenNames(clock=clock)
    return writer, stored, foreign, clock


async def test_a_name_taken_past_the_grace_is_a_name_conflict_and_is_never_written(kube, api):
    writer, stored, foreign, clock = await _writer_over_a_foreign_object(kube, api)
    desired = {**FOREIGN, "spec": {"replicas": 1}}
    plan = ReconcilePlan(Outcome.SUCCESS, apply=(desired,))
    key = ("default", "chat")

    with pytest.raises(ApiError) as first:  # may be a race: retried with backoff
        await asyncio.to_thread(writer.write, key, stored, {}, plan)
    clock.now += GRACE_SECONDS
    with pytest.raises(NameConflict) as later:
        await asyncio.to_thread(writer.write, key, stored, {}, plan)

    assert first.value.reason == "AlreadyExists"
    assert str(later.value) == (
        "Deployment chat-engine exists and is not controlled by InferenceService chat"
    )
    (deployment,) = kube_objects(kube, "deployments")
    assert deployment == foreign


async def test_a_name_conflict_is_told_once_per_transition(kube, api):
    writer, stored, _, _ = await _writer_over_a_foreign_object(kube, api)
    conflict = NameConflict("Deployment", "chat-engine", "chat")
    key = ("default", "chat")

    written = await asyncio.to_thread(writer.report_conflict, key, stored, conflict)
    again = await asyncio.to_thread(writer.report_conflict, key, written, conflict)

    ready = next(c for c in written["status"]["conditions"] if c["type"] == "Ready")
    assert {k: ready[k] for k in ("status", "reason", "message")} == {
        "status": "False",
        "reason": "NameConflict",
        "message": "Deployment chat-engine exists and is not controlled by InferenceService chat",
    }
    assert again is None  # the status already says it
    events = kube_objects(kube, "events")
    assert [(e["type"], e["reason"], e["message"]) for e in events] == [
        (
            "Warning",
            "NameConflict",
            "Deployment chat-engine exists and is not controlled by InferenceService chat",
        )
    ]
