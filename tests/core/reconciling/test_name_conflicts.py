"""Whose objects are written (docs/workloads.md, "Whose objects are written"): an existing object
under a name the InferenceService renders is written over only when it is its own (controlled
by it, or orphaned and recording its uid); any other turns the pass into ``Ready=False``,
reason ``NameConflict``, with one event per transition and nothing written. Every object the
operator writes records the InferenceService's uid."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.ownership import (
    NameConflict,
    inference_service_uid,
    is_ours,
    pod_is_ours,
    stamped,
)
from ome_operator.core.plans import Event, LogRecord, Outcome, ReconcilePlan
from ome_operator.models import InferenceService, from_manifest
from tests.builders import isvc_manifest
from tests.core.reconciling.plans import (
    NOW,
    condition_of,
    deployment_of,
    isvc_of,
    names_of,
    objects_of,
    owned_object,
    plan_of,
)

UID = "ome.io/inferenceservice-uid"
OURS = "uid-svc"  # the uid ``owned_object`` gives the controller reference of "svc"
MESSAGE = "Deployment svc-engine exists and is not controlled by InferenceService svc"


def isvc_with(uid: str | None = OURS, **fields: Any) -> InferenceService:
    """InferenceService ``svc`` as the API server stores it (with its uid)."""
    manifest = isvc_manifest(**fields)
    if uid is not None:
        manifest["metadata"]["uid"] = uid
    return from_manifest(manifest)


def orphan(kind: str = "Deployment", name: str = "svc-engine", **annotations: str) -> dict:
    """An object labelled for ``svc`` with no owner (``--cascade=orphan`` leaves one so)."""
    obj = owned_object(kind, name, owner=None)
    if annotations:
        obj["metadata"]["annotations"] = annotations
    return obj


def controlled(uid: str, kind: str = "InferenceService", name: str = "svc") -> dict:
    """The engine Deployment controlled by the ``kind`` of that name and uid."""
    obj = deployment_of()
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid, "controller": True}
    ]
    return obj


RAW = [*objects_of("engine"), ("Service", "svc")]


@pytest.mark.parametrize(
    ("existing", "written"),
    [
        pytest.param(deployment_of(), RAW, id="controlled by this InferenceService: written"),
        pytest.param(
            orphan(**{UID: OURS}),
            RAW,
            id="orphaned and recording its uid: adopted (an orphaning deletion of its owner)",
        ),
        pytest.param(orphan(), None, id="a label alone never makes an object its own"),
        pytest.param(
            orphan(**{UID: "uid-of-an-earlier-svc"}),
            None,
            id="orphaned by another InferenceService of the same name: not its own",
        ),
        pytest.param(
            controlled("uid-of-an-earlier-svc"),
            None,
            id="controlled by another InferenceService of the same name: not its own",
        ),
        pytest.param(
            controlled("rs-1", kind="ReplicaSet", name="svc"),
            None,
            id="controlled by something else: not its own",
        ),
        pytest.param(
            controlled("u2", kind="InferenceService", name="other"),
            None,
            id="controlled by another InferenceService: not its own",
        ),
    ],
)
def test_an_existing_object_is_written_over_only_when_it_is_the_inference_services_own(
    existing: dict[str, Any], written: list[tuple[str, str]] | None
) -> None:
    plan = plan_of(isvc_with(), existing=[existing])

    if written is not None:
        assert (plan.outcome, names_of(plan.apply)) == (Outcome.SUCCESS, written)
    else:
        assert plan == ReconcilePlan(
            Outcome.PARKED,
            status={
                "conditions": [condition_of("Ready", "False", "NameConflict", MESSAGE)],
            },
            events=(Event("Warning", "NameConflict", MESSAGE),),
            logs=(*plan_of(isvc_with()).logs, _conflict_record("Deployment", "svc-engine")),
            decisions=plan.decisions,
        )


def _conflict_record(kind: str, name: str) -> LogRecord:
    return LogRecord(
        "error",
        "Name taken by an object the InferenceService does not control; it is not written",
        (
            ("namespace", "default"),
            ("inferenceService", "svc"),
            ("kind", kind),
            ("resource", name),
        ),
    )


@pytest.mark.parametrize(
    ("isvc", "existing", "message"),
    [
        pytest.param(
            isvc_with(),
            [deployment_of(), orphan("Service", "svc")],
            "Service svc exists and is not controlled by InferenceService svc",
            id="the entry Service's name taken",
        ),
        pytest.param(
            isvc_with(deploymentMode="OMENative"),
            [orphan("InferenceReplica", "svc-engine")],
            "InferenceReplica svc-engine exists and is not controlled by InferenceService svc",
            id="an InferenceReplica's name taken",
        ),
        pytest.param(
            isvc_with(),
            [orphan("Service", "svc"), orphan("Deployment", "svc-engine")],
            MESSAGE,
            id="of two taken names the first in write order is told",
        ),
    ],
)
def test_the_conflict_names_the_kind_the_object_and_the_inference_service(
    isvc: InferenceService, existing: list[dict[str, Any]], message: str
) -> None:
    plan = plan_of(isvc, existing=existing)

    assert (plan.outcome, plan.apply, plan.delete, plan.events) == (
        Outcome.PARKED,
        (),
        (),
        (Event("Warning", "NameConflict", message),),
    )


def test_a_conflict_already_told_posts_no_event_and_keeps_the_other_conditions() -> None:
    engine = condition_of("EngineReady", "True", "MinimumReplicasAvailable", at="2024-01-01")
    told = condition_of("Ready", "False", "NameConflict", MESSAGE, at="2024-01-01")
    isvc = isvc_with()
    isvc = isvc.model_copy(update={"status": {"conditions": [engine, told], "url": "u"}})

    plan = plan_of(isvc, existing=[orphan()])

    assert (plan.status, plan.events) == ({"conditions": [engine, told], "url": "u"}, ())


def test_a_foreign_object_the_pass_does_not_render_is_neither_written_nor_deleted() -> None:
    # A Deployment of the engine's name, while the engine runs as OMENative (and the decoder,
    # no longer declared, had one): neither is the InferenceService's.
    decoder = orphan("Deployment", "svc-decoder")
    decoder["metadata"]["labels"]["component"] = "decoder"

    plan = plan_of(isvc_with(deploymentMode="OMENative"), existing=[orphan(), decoder])

    assert (plan.outcome, plan.delete) == (Outcome.SUCCESS, ())
    assert ("Deployment", "svc-engine") not in names_of(plan.apply)


def test_every_object_written_records_the_inference_services_uid_and_no_other() -> None:
    forged = isvc_with(annotations={UID: "someone-elses"})

    plan = plan_of(forged)

    assert {o["metadata"]["annotations"][UID] for o in plan.apply} == {OURS}


def test_without_a_uid_nothing_is_recorded_and_a_controller_reference_by_name_is_its_own() -> None:
    plan = plan_of(isvc_of(annotations={UID: "forged"}), existing=[deployment_of()])

    assert plan.outcome is Outcome.SUCCESS
    assert [UID in (o["metadata"].get("annotations") or {}) for o in plan.apply] == [False] * 5


@pytest.mark.parametrize(
    ("obj", "uid", "expected"),
    [
        pytest.param({"metadata": {}}, "u1", False, id="nothing says whose it is"),
        pytest.param({"metadata": {"annotations": {UID: "u1"}}}, "u1", True, id="it records it"),
        pytest.param({"metadata": {"annotations": {UID: ""}}}, "", False, id="empty is no uid"),
        pytest.param(
            {"metadata": {"ownerReferences": [{"kind": "X", "controller": False}]}},
            "u1",
            False,
            id="an owner that is no controller proves nothing",
        ),
    ],
)
def test_is_ours(obj: dict[str, Any], uid: str, expected: bool) -> None:
    assert is_ours(obj, isvc_with(uid or None)) is expected


def _replica(**metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": "svc-engine", **metadata}}


@pytest.mark.parametrize(
    ("replica", "pod", "expected"),
    [
        pytest.param(
            _replica(annotations={UID: "u1"}),
            {"metadata": {"annotations": {UID: "u1"}}},
            True,
            id="a pod recording its replica's InferenceService is the replica's to adopt",
        ),
        pytest.param(
            _replica(annotations={UID: "u1"}),
            {"metadata": {"annotations": {UID: "u1"}, "ownerReferences": [{"controller": True}]}},
            False,
            id="a pod with a controller is not adopted",
        ),
        pytest.param(
            _replica(annotations={UID: "u1"}),
            {"metadata": {}},
            False,
            id="a pod recording nothing is not",
        ),
    ],
)
def test_a_pod_is_an_inference_replicas_to_adopt(
    replica: dict[str, Any], pod: dict[str, Any], expected: bool
) -> None:
    assert pod_is_ours(pod, replica) is expected


@pytest.mark.parametrize(
    ("replica", "expected"),
    [
        pytest.param(_replica(annotations={UID: "u1"}), "u1", id="the uid it records"),
        pytest.param(
            _replica(
                ownerReferences=[{"kind": "InferenceService", "uid": "u2", "controller": True}]
            ),
            "u2",
            id="else its controlling InferenceService's",
        ),
        pytest.param(_replica(), None, id="else none"),
    ],
)
def test_the_inference_service_of_a_replica(replica: dict[str, Any], expected: str | None) -> None:
    assert inference_service_uid(replica) == expected


@pytest.mark.parametrize(
    ("obj", "uid", "expected"),
    [
        pytest.param(
            {"metadata": {"name": "a"}},
            "u1",
            {"metadata": {"name": "a", "annotations": {UID: "u1"}}},
            id="recorded",
        ),
        pytest.param(
            {"metadata": {"name": "a", "annotations": {UID: "forged", "z": "1"}}},
            "u1",
            {"metadata": {"name": "a", "annotations": {UID: "u1", "z": "1"}}},
            id="a copied value is replaced",
        ),
        pytest.param(
            {"metadata": {"name": "a", "annotations": {UID: "forged"}}},
            None,
            {"metadata": {"name": "a"}},
            id="without a uid a copied value is removed",
        ),
    ],
)
def test_stamped(obj: dict[str, Any], uid: str | None, expected: dict[str, Any]) -> None:
    assert stamped(obj, uid) == expected


def test_the_conflict_sentence() -> None:
    assert str(NameConflict("Deployment", "victim3-engine", "victim3")) == (
        "Deployment victim3-engine exists and is not controlled by InferenceService victim3"
    )


def test_now_is_the_transition_time() -> None:
    plan = plan_of(isvc_with(), existing=[orphan()])
    assert plan.status is not None
    assert plan.status["conditions"][0]["lastTransitionTime"] == NOW
