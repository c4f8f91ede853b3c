"""Rules of SPEC S0.3 (condition shape), S8.1 (``Ready``, OPEN-31), S5.2 / S5.3 (a component
mirrors its workload's ``Available``, OPEN-16) and S5.4.10 (OMENative component conditions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ome_operator.core import conditions
from ome_operator.core.conditions import (
    COMPONENT_CONDITION,
    component_condition,
    condition,
    failed_status,
    find_condition,
    merge_conditions,
    omenative_counts,
    ready_condition,
)

NOW = "2024-06-01T12:00:00Z"
EARLIER = "2024-01-01T00:00:00Z"


def _available(status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    """A Deployment or LeaderWorkerSet whose status has an ``Available`` condition."""
    found = {"type": "Available", "status": status, "reason": reason, "message": message}
    progressing = {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
    return {"status": {"conditions": [progressing, {k: v for k, v in found.items() if v}]}}


def _replica(**status: Any) -> dict[str, Any]:
    """An InferenceReplica with the given status counts."""
    return {"kind": "InferenceReplica", "status": status}


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(conditions.__all__) == [
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


def test_each_component_reports_under_its_own_condition_type() -> None:
    assert COMPONENT_CONDITION == {
        "engine": "EngineReady",
        "decoder": "DecoderReady",
        "router": "RouterReady",
    }


# --- S0.3: the shape --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        pytest.param(
            ("RuntimeReady", "False", "RuntimeNotFound", "runtime x not found"),
            {"severity": "Info", "previous": None},
            {
                "type": "RuntimeReady",
                "status": "False",
                "reason": "RuntimeNotFound",
                "message": "runtime x not found",
                "severity": "Info",
                "lastTransitionTime": NOW,
            },
            id="every field is written when set",
        ),
        pytest.param(
            ("IngressReady", "True", "IngressDisabled"),
            {"previous": None},
            {
                "type": "IngressReady",
                "status": "True",
                "reason": "IngressDisabled",
                "lastTransitionTime": NOW,
            },
            id="an empty message and an empty severity are left out",
        ),
        pytest.param(
            ("Ready", "True"),
            {"previous": None},
            {"type": "Ready", "status": "True", "lastTransitionTime": NOW},
            id="an empty reason is left out",
        ),
        pytest.param(
            ("Ready", "False", "Initializing", "engine component initializing"),
            {"previous": {"type": "Ready", "status": "False", "lastTransitionTime": EARLIER}},
            {
                "type": "Ready",
                "status": "False",
                "reason": "Initializing",
                "message": "engine component initializing",
                "lastTransitionTime": EARLIER,
            },
            id="the transition time is kept while the status stays the same",
        ),
        pytest.param(
            ("Ready", "False", "Other", "another message"),
            {
                "previous": {
                    "type": "Ready",
                    "status": "False",
                    "reason": "Initializing",
                    "message": "engine component initializing",
                    "lastTransitionTime": EARLIER,
                }
            },
            {
                "type": "Ready",
                "status": "False",
                "reason": "Other",
                "message": "another message",
                "lastTransitionTime": EARLIER,
            },
            id="a new reason or message alone does not move the transition time",
        ),
        pytest.param(
            ("Ready", "True"),
            {"previous": {"type": "Ready", "status": "False", "lastTransitionTime": EARLIER}},
            {"type": "Ready", "status": "True", "lastTransitionTime": NOW},
            id="the transition time moves to now when the status changes",
        ),
        pytest.param(
            ("Ready", "Unknown"),
            {"previous": {"type": "Ready", "status": "True", "lastTransitionTime": EARLIER}},
            {"type": "Ready", "status": "Unknown", "lastTransitionTime": NOW},
            id="a change to Unknown is a status change",
        ),
        pytest.param(
            ("Ready", "True"),
            {"previous": {"type": "Ready", "status": "True"}},
            {"type": "Ready", "status": "True", "lastTransitionTime": NOW},
            id="a previous condition without a transition time gets now",
        ),
    ],
)
def test_a_condition_has_the_knative_shape(
    args: tuple[str, ...], kwargs: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert condition(*args, now=NOW, **kwargs) == expected


@pytest.mark.parametrize(
    ("listed", "kind", "expected"),
    [
        pytest.param(
            [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}],
            "B",
            {"type": "B", "status": "False"},
            id="a condition is found by its type",
        ),
        pytest.param(
            [{"type": "A", "status": "True"}, {"type": "A", "status": "False"}],
            "A",
            {"type": "A", "status": "True"},
            id="the first condition of a type is found",
        ),
        pytest.param([{"type": "A", "status": "True"}], "B", None, id="a missing type is None"),
        pytest.param([{"status": "True"}], "A", None, id="a condition without a type is skipped"),
    ],
)
def test_find_condition(
    listed: list[dict[str, Any]], kind: str, expected: Mapping[str, Any] | None
) -> None:
    assert find_condition(listed, kind) == expected


@pytest.mark.parametrize(
    ("previous", "updates", "expected"),
    [
        pytest.param(
            [{"type": "Ready", "status": "False"}, {"type": "EngineReady", "status": "False"}],
            [{"type": "Ready", "status": "True"}],
            [{"type": "EngineReady", "status": "False"}, {"type": "Ready", "status": "True"}],
            id="an update replaces the condition of its type and the others are kept",
        ),
        pytest.param(
            [],
            [{"type": "Ready", "status": "True"}, {"type": "IngressReady", "status": "True"}],
            [{"type": "IngressReady", "status": "True"}, {"type": "Ready", "status": "True"}],
            id="conditions are sorted by type for a stable status",
        ),
        pytest.param(
            [{"status": "True"}],
            [{"type": "Ready", "status": "True"}],
            [{"type": "Ready", "status": "True"}],
            id="a previous entry without a type is dropped",
        ),
    ],
)
def test_merge_conditions(
    previous: list[dict[str, Any]], updates: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> None:
    assert merge_conditions(previous, updates) == expected


# --- S5.2 / S5.3 (OPEN-16): RawDeployment and MultiNode mirror Available ----------------------


@pytest.mark.parametrize(
    ("component", "mode", "workload", "expected"),
    [
        pytest.param(
            "engine",
            "RawDeployment",
            _available("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
            {
                "type": "EngineReady",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastTransitionTime": NOW,
            },
            id="EngineReady copies status, reason and message of the Deployment's Available",
        ),
        pytest.param(
            "decoder",
            "RawDeployment",
            _available("False", "MinimumReplicasUnavailable", "Deployment does not have minimum"),
            {
                "type": "DecoderReady",
                "status": "False",
                "reason": "MinimumReplicasUnavailable",
                "message": "Deployment does not have minimum",
                "lastTransitionTime": NOW,
            },
            id="DecoderReady copies an Available that is False",
        ),
        pytest.param(
            "engine",
            "MultiNode",
            _available("True", "AllGroupsReady", "All replicas are ready"),
            {
                "type": "EngineReady",
                "status": "True",
                "reason": "AllGroupsReady",
                "message": "All replicas are ready",
                "lastTransitionTime": NOW,
            },
            id="a MultiNode component copies the LeaderWorkerSet's Available",
        ),
        pytest.param(
            "router",
            "RawDeployment",
            _available("Unknown"),
            {"type": "RouterReady", "status": "Unknown", "lastTransitionTime": NOW},
            id="an Available without reason or message gives none",
        ),
        pytest.param(
            "engine",
            "RawDeployment",
            None,
            {
                "type": "EngineReady",
                "status": "False",
                "reason": "Initializing",
                "message": "engine component initializing",
                "lastTransitionTime": NOW,
            },
            id="before the Deployment exists the engine is Initializing",
        ),
        pytest.param(
            "router",
            "RawDeployment",
            {"status": {"conditions": [{"type": "Progressing", "status": "True"}]}},
            {
                "type": "RouterReady",
                "status": "False",
                "reason": "Initializing",
                "message": "router component initializing",
                "lastTransitionTime": NOW,
            },
            id="before the Deployment reports Available the component is Initializing",
        ),
        pytest.param(
            "decoder",
            "MultiNode",
            {"status": {}},
            {
                "type": "DecoderReady",
                "status": "False",
                "reason": "Initializing",
                "message": "decoder component initializing",
                "lastTransitionTime": NOW,
            },
            id="a LeaderWorkerSet without conditions is Initializing",
        ),
    ],
)
def test_a_workload_component_mirrors_available(
    component: str, mode: str, workload: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    found = component_condition(component, mode, workload, desired=1, previous=None, now=NOW)
    assert found == expected


def test_a_mirrored_condition_keeps_its_transition_time_while_its_status_stays() -> None:
    previous = {"type": "EngineReady", "status": "False", "lastTransitionTime": EARLIER}
    found = component_condition(
        "engine",
        "RawDeployment",
        _available("False", "X", "y"),
        desired=1,
        previous=previous,
        now=NOW,
    )
    assert found == {
        "type": "EngineReady",
        "status": "False",
        "reason": "X",
        "message": "y",
        "lastTransitionTime": EARLIER,
    }


# --- S5.4.10: OMENative component conditions --------------------------------------------------


@pytest.mark.parametrize(
    ("replica", "desired", "max_unavailable", "expected"),
    [
        pytest.param(
            _replica(readyReplicas=0, servingReplicas=0),
            0,
            None,
            ("False", "NoReplicas", "Component has no desired Instances"),
            id="NoReplicas when no Instance is desired",
        ),
        pytest.param(
            _replica(readyReplicas=3, servingReplicas=3),
            3,
            None,
            ("True", "Ready", "All Instances are Ready"),
            id="Ready when every desired Instance is ready",
        ),
        pytest.param(
            _replica(readyReplicas=3, servingReplicas=1),
            3,
            None,
            ("True", "Ready", "All Instances are Ready"),
            id="Ready counts ready Instances, not serving ones",
        ),
        pytest.param(
            _replica(readyReplicas=2, servingReplicas=2),
            3,
            1,
            ("True", "MinimumAvailable", "2/3 Instances serving (min 2)"),
            id="MinimumAvailable when serving reaches desired minus maxUnavailable",
        ),
        pytest.param(
            _replica(readyReplicas=2, servingReplicas=2),
            3,
            "1",
            ("True", "MinimumAvailable", "2/3 Instances serving (min 2)"),
            id="a maxUnavailable written as a string number counts as that number",
        ),
        pytest.param(
            _replica(readyReplicas=2, servingReplicas=2),
            4,
            "50%",
            ("True", "MinimumAvailable", "2/4 Instances serving (min 2)"),
            id="a percentage maxUnavailable is resolved against the desired count",
        ),
        pytest.param(
            _replica(readyReplicas=1, servingReplicas=1),
            3,
            "50%",
            ("False", "InsufficientAvailable", "1/3 Instances serving, need 2"),
            id="a percentage maxUnavailable rounds down as Kubernetes does",
        ),
        pytest.param(
            _replica(readyReplicas=0, servingReplicas=0),
            1,
            2,
            ("True", "MinimumAvailable", "0/1 Instances serving (min 0)"),
            id="a maxUnavailable above the desired count gives a minimum of 0, never below",
        ),
        pytest.param(
            _replica(readyReplicas=2, servingReplicas=1),
            3,
            1,
            ("False", "InsufficientAvailable", "1/3 Instances serving, need 2"),
            id="InsufficientAvailable when serving is below the minimum",
        ),
        pytest.param(
            _replica(readyReplicas=2, servingReplicas=2),
            3,
            None,
            ("False", "InsufficientAvailable", "2/3 Instances serving, need 3"),
            id="without maxUnavailable the minimum is the desired count",
        ),
        pytest.param(
            None,
            1,
            None,
            ("False", "InsufficientAvailable", "0/1 Instances serving, need 1"),
            id="an InferenceReplica that does not exist yet serves nothing",
        ),
        pytest.param(
            _replica(),
            2,
            None,
            ("False", "InsufficientAvailable", "0/2 Instances serving, need 2"),
            id="missing counts are zero",
        ),
        pytest.param(
            _replica(readyReplicas="2", servingReplicas=True),
            2,
            None,
            ("False", "InsufficientAvailable", "0/2 Instances serving, need 2"),
            id="counts that are not integers are zero, not a crash",
        ),
    ],
)
def test_an_omenative_component_condition(
    replica: dict[str, Any] | None,
    desired: int,
    max_unavailable: Any,
    expected: tuple[str, str, str],
) -> None:
    status, reason, message = expected
    found = component_condition(
        "decoder",
        "OMENative",
        replica,
        desired=desired,
        max_unavailable=max_unavailable,
        previous=None,
        now=NOW,
    )
    assert found == {
        "type": "DecoderReady",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": NOW,
    }


@pytest.mark.parametrize(
    ("replica", "expected"),
    [
        pytest.param(
            _replica(
                observedGeneration=4,
                replicas=2,
                readyReplicas=2,
                servingReplicas=1,
                availableReplicas=1,
                updatedReplicas=2,
                updatedReadyReplicas=1,
                currentRevision="a1b2c3d4",
                updateRevision="e5f6a7b8",
                labelSelector="component=engine",
                conditions=[{"type": "Ready", "status": "True"}],
            ),
            {
                "replicas": 2,
                "readyReplicas": 2,
                "servingReplicas": 1,
                "availableReplicas": 1,
                "updatedReplicas": 2,
                "updatedReadyReplicas": 1,
                "currentRevision": "a1b2c3d4",
                "updateRevision": "e5f6a7b8",
            },
            id="lifecycle mirrors the InferenceReplica's counts and revisions, nothing else",
        ),
        pytest.param(
            _replica(replicas=0, readyReplicas=0),
            {"replicas": 0, "readyReplicas": 0},
            id="zero counts are kept and absent ones are left out",
        ),
        pytest.param(None, {}, id="no InferenceReplica gives no counts"),
    ],
)
def test_omenative_counts(replica: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    assert omenative_counts(replica) == expected


# --- S8.1 / OPEN-31: Ready ----------------------------------------------------------------------


def _c(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    found = {"type": kind, "status": status, "reason": reason, "message": message}
    return {k: v for k, v in found.items() if v}


ENGINE_OK = _c("EngineReady", "True", "MinimumReplicasAvailable", "Deployment is available")
INGRESS_OK = _c("IngressReady", "True", "IngressDisabled")


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        pytest.param(
            [ENGINE_OK, INGRESS_OK],
            _c("Ready", "True"),
            id="Ready is True when EngineReady and IngressReady are True, with no reason",
        ),
        pytest.param(
            [
                ENGINE_OK,
                INGRESS_OK,
                _c("DecoderReady", "False", "Initializing", "decoder component initializing"),
                _c("RouterReady", "False", "Initializing", "router component initializing"),
            ],
            _c("Ready", "True"),
            id="DecoderReady and RouterReady do not count for Ready",
        ),
        pytest.param(
            [
                ENGINE_OK,
                INGRESS_OK,
                _c("RuntimeReady", "False", "RuntimeNotFound", "runtime x not found"),
            ],
            _c("Ready", "True"),
            id="RuntimeReady does not count for Ready",
        ),
        pytest.param(
            [
                _c("EngineReady", "False", "Initializing", "engine component initializing"),
                INGRESS_OK,
            ],
            _c("Ready", "False", "Initializing", "engine component initializing"),
            id="a False EngineReady gives its reason and message to Ready",
        ),
        pytest.param(
            [_c("EngineReady", "Unknown", "Waiting", "no news"), INGRESS_OK],
            _c("Ready", "Unknown", "Waiting", "no news"),
            id="an Unknown EngineReady makes Ready Unknown with its reason and message",
        ),
        pytest.param(
            [ENGINE_OK, _c("IngressReady", "False", "IngressFailed", "no ingress")],
            _c("Ready", "False", "IngressFailed", "no ingress"),
            id="a False IngressReady gives its reason and message to Ready",
        ),
        pytest.param(
            [
                _c("IngressReady", "False", "IngressFailed", "no ingress"),
                _c("EngineReady", "False", "Initializing", "engine component initializing"),
            ],
            _c("Ready", "False", "Initializing", "engine component initializing"),
            id="EngineReady is looked at before IngressReady",
        ),
        pytest.param(
            [INGRESS_OK],
            _c("Ready", "Unknown"),
            id="without EngineReady Ready is Unknown",
        ),
    ],
)
def test_ready_depends_on_engine_and_ingress(
    listed: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    assert ready_condition(listed, previous=None, now=NOW) == {
        **expected,
        "lastTransitionTime": NOW,
    }


@pytest.mark.parametrize(
    ("previous", "expected_time"),
    [
        pytest.param(
            {"type": "Ready", "status": "True", "lastTransitionTime": EARLIER},
            EARLIER,
            id="Ready keeps its transition time while it stays True",
        ),
        pytest.param(
            {"type": "Ready", "status": "False", "lastTransitionTime": EARLIER},
            NOW,
            id="Ready's transition time moves when it becomes True",
        ),
    ],
)
def test_ready_transition_time(previous: dict[str, Any], expected_time: str) -> None:
    found = ready_condition([ENGINE_OK, INGRESS_OK], previous=previous, now=NOW)
    assert found == {"type": "Ready", "status": "True", "lastTransitionTime": expected_time}


def _failed(message: str = "bad", since: str = NOW) -> dict[str, Any]:
    return {
        "type": "Ready",
        "status": "False",
        "reason": "ReconcileFailed",
        "message": message,
        "lastTransitionTime": since,
    }


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        pytest.param({}, {"conditions": [_failed()]}, id="a first failure adds Ready=False"),
        pytest.param(
            {
                "url": "http://chat",
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": EARLIER},
                    {"type": "EngineReady", "status": "True", "lastTransitionTime": EARLIER},
                ],
            },
            {
                "url": "http://chat",
                "conditions": [
                    {"type": "EngineReady", "status": "True", "lastTransitionTime": EARLIER},
                    _failed(),
                ],
            },
            id="Ready turns False; every other condition and field stays",
        ),
        pytest.param(
            {"conditions": [_failed("older", EARLIER)]},
            {"conditions": [_failed("bad", EARLIER)]},
            id="a new message keeps the transition time",
        ),
        pytest.param(
            "not a status",
            {"conditions": [_failed()]},
            id="a status that is not an object is replaced",
        ),
    ],
)
def test_a_failed_pass_sets_ready_false_reconcile_failed(status: Any, expected: Any) -> None:
    assert failed_status(status, "bad", now=NOW) == expected
