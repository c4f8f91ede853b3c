"""Pods the API server refuses to create (docs/troubleshooting.md, ``PodsRefused``): told by a
Deployment's ``ReplicaFailure`` or by the InferenceReplica controller that was refused, ranked
before every cause pods show, and posted as one event per transition."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.conditions import component_condition
from ome_operator.core.instances import plan_instances
from ome_operator.core.isvc_status import cause_events
from ome_operator.core.plans import Event
from ome_operator.core.pod_health import CAUSES, Cause, pods_cause, workload_cause
from tests.core.instances.replicas import NOW, replica_of
from tests.core.pods import NO_GPU, unschedulable

#: The API server's answer to a pod create Pod Security admission refuses.
FORBIDDEN = (
    'pods "chat-engine-0-default-0" is forbidden: violates PodSecurity "baseline:latest": '
    'hostPath volumes (volume "llama")'
)
REFUSED = Cause("PodsRefused", f"pods cannot be created: {FORBIDDEN}")
STUCK = unschedulable("chat-engine-7d9f-abcde")


def deployment(*conditions: dict[str, Any], kind: str = "Deployment") -> dict[str, Any]:
    return {"kind": kind, "status": {"conditions": list(conditions)}}


def failure(status: str = "True", reason: str = "FailedCreate") -> dict[str, Any]:
    """The condition the Deployment controller copies from its ReplicaSet."""
    return {"type": "ReplicaFailure", "status": status, "reason": reason, "message": FORBIDDEN}


AVAILABLE_FALSE = {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}


def test_a_refused_create_is_the_most_blocking_cause() -> None:
    assert CAUSES[0] == "PodsRefused"


@pytest.mark.parametrize(
    ("workload", "pods", "expected"),
    [
        pytest.param(
            deployment(AVAILABLE_FALSE, failure()),
            [],
            REFUSED,
            id="a Deployment whose ReplicaSet cannot create pods names the server's answer",
        ),
        pytest.param(
            deployment(failure()),
            [STUCK],
            REFUSED,
            id="a refused create ranks before pods the scheduler cannot place",
        ),
        pytest.param(
            deployment(failure(status="False")),
            [STUCK],
            pods_cause([STUCK]),
            id="a ReplicaFailure that is over leaves the pods' cause",
        ),
        pytest.param(
            deployment(failure(reason="FailedDelete")),
            [],
            None,
            id="a failed delete is not a refused create",
        ),
        pytest.param(
            deployment(failure(), kind="LeaderWorkerSet"),
            [STUCK],
            pods_cause([STUCK]),
            id="only a Deployment's ReplicaFailure is read",
        ),
        pytest.param(None, [STUCK], pods_cause([STUCK]), id="no workload yet: the pods' cause"),
        pytest.param(
            {"kind": "Deployment", "status": {"conditions": "broken"}},
            [],
            None,
            id="conditions that are not a list read as none",
        ),
    ],
)
def test_the_cause_of_a_workload(
    workload: dict[str, Any] | None, pods: list[dict[str, Any]], expected: Cause | None
) -> None:
    assert workload_cause(workload, pods) == expected


def test_the_unschedulable_pod_of_the_table_has_its_own_cause() -> None:
    assert pods_cause([STUCK]) == Cause(
        "PodsUnschedulable", f"1 of 1 pods cannot be scheduled: {NO_GPU}"
    )


@pytest.mark.parametrize(
    ("refused", "pods", "expected"),
    [
        pytest.param(
            FORBIDDEN,
            [],
            {
                "type": "Ready",
                "status": "False",
                "reason": "PodsRefused",
                "message": REFUSED.message,
                "lastTransitionTime": NOW,
            },
            id="an InferenceReplica whose pod create was refused says so with the answer",
        ),
        pytest.param(
            FORBIDDEN,
            [unschedulable("chat-engine-1-default-0")],
            {
                "type": "Ready",
                "status": "False",
                "reason": "PodsRefused",
                "message": REFUSED.message,
                "lastTransitionTime": NOW,
            },
            id="the refusal ranks before another Instance's pod the scheduler cannot place",
        ),
        pytest.param(
            None,
            [],
            {
                "type": "Ready",
                "status": "False",
                "reason": "ReplicaCountMismatch",
                "message": "0/1 Instances serving, need 1 (no rollout in flight)",
                "lastTransitionTime": NOW,
            },
            id="without a refusal the status is as before",
        ),
    ],
)
def test_the_inference_replica_names_a_refused_create(
    refused: str | None, pods: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    plan = plan_instances(replica_of(), pods, now=NOW, refused=refused)
    assert plan.status["conditions"] == [expected]


def test_an_omenative_component_copies_the_refusal_of_its_replica() -> None:
    replica = {
        "kind": "InferenceReplica",
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "PodsRefused", "message": "m"}
            ]
        },
    }
    found = component_condition("engine", "OMENative", replica, desired=1, previous=None, now=NOW)
    assert found == {
        "type": "EngineReady",
        "status": "False",
        "reason": "PodsRefused",
        "message": "m",
        "lastTransitionTime": NOW,
    }


def engine(reason: str) -> dict[str, Any]:
    return {"type": "EngineReady", "status": "False", "reason": reason, "message": "m"}


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        pytest.param(
            [engine("Initializing")],
            (Event("Warning", "PodsRefused", "engine component: m"),),
            id="one Warning event when the refusal first shows",
        ),
        pytest.param(
            [engine("PodsUnschedulable")],
            (Event("Warning", "PodsRefused", "engine component: m"),),
            id="and when it follows another cause",
        ),
        pytest.param([engine("PodsRefused")], (), id="none while it stays"),
    ],
)
def test_a_refusal_is_posted_once_per_transition(
    before: list[dict[str, Any]], expected: tuple[Event, ...]
) -> None:
    assert cause_events({"engine": engine("PodsRefused")}, before) == expected
