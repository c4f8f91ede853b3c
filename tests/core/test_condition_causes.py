"""Why a component is not ready, in its ``<Component>Ready`` condition (``core/conditions``): the
cause its pods show wins over the mirrored workload only while the component is not True; a
LeaderWorkerSet that is not Available is told from its group counts, not its stale reason; an
OMENative component copies the cause its InferenceReplica found."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.conditions import component_condition
from ome_operator.core.pod_health import Cause

NOW = "2024-06-01T12:00:00Z"
UNSCHEDULABLE = Cause(
    "PodsUnschedulable",
    "1 of 2 pods cannot be scheduled: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
)
CRASHING = Cause(
    "CrashLoopBackOff",
    "chat-engine-0: container ome-container is in CrashLoopBackOff (restarted 5 times, last "
    "exit code 1)",
)


def _workload(kind: str, status: str, reason: str, **counts: int) -> dict[str, Any]:
    """A Deployment or LeaderWorkerSet with an ``Available`` condition and replica counts."""
    available = {"type": "Available", "status": status, "reason": reason, "message": "m"}
    return {"kind": kind, "status": {"conditions": [available], **counts}}


def _replica(ready: tuple[str, str, str] | None = None, **counts: int) -> dict[str, Any]:
    """An InferenceReplica with its counts and its own ``Ready`` (status, reason, message)."""
    status: dict[str, Any] = dict(counts)
    if ready is not None:
        state, reason, message = ready
        status["conditions"] = [
            {"type": "Ready", "status": state, "reason": reason, "message": message}
        ]
    return {"kind": "InferenceReplica", "status": status}


UNAVAILABLE = _workload("Deployment", "False", "MinimumReplicasUnavailable")
STALE_GROUPS = _workload("LeaderWorkerSet", "False", "AllGroupsReady", replicas=2, readyReplicas=1)


@pytest.mark.parametrize(
    ("mode", "workload", "cause", "expected"),
    [
        pytest.param(
            "RawDeployment",
            UNAVAILABLE,
            UNSCHEDULABLE,
            ("False", UNSCHEDULABLE.reason, UNSCHEDULABLE.message),
            id="an unavailable Deployment takes the cause its pods show",
        ),
        pytest.param(
            "RawDeployment",
            UNAVAILABLE,
            None,
            ("False", "MinimumReplicasUnavailable", "m"),
            id="without a cause the Deployment's Available is mirrored as before",
        ),
        pytest.param(
            "RawDeployment",
            _workload("Deployment", "True", "MinimumReplicasAvailable"),
            CRASHING,
            ("True", "MinimumReplicasAvailable", "m"),
            id="an available Deployment keeps its reason whatever one pod shows",
        ),
        pytest.param(
            "RawDeployment",
            None,
            UNSCHEDULABLE,
            ("False", UNSCHEDULABLE.reason, UNSCHEDULABLE.message),
            id="a cause wins over Initializing too",
        ),
        pytest.param(
            "MultiNode",
            STALE_GROUPS,
            None,
            ("False", "GroupsNotReady", "1/2 leader-worker groups ready"),
            id="a LeaderWorkerSet not Available is told from its counts, not its stale reason",
        ),
        pytest.param(
            "MultiNode",
            _workload("LeaderWorkerSet", "Unknown", "AllGroupsReady", replicas=3),
            None,
            ("Unknown", "GroupsNotReady", "0/3 leader-worker groups ready"),
            id="a LeaderWorkerSet's Unknown is told from its counts too, a missing count as 0",
        ),
        pytest.param(
            "MultiNode",
            _workload("LeaderWorkerSet", "True", "AllGroupsReady", replicas=2, readyReplicas=2),
            CRASHING,
            ("True", "AllGroupsReady", "m"),
            id="an Available LeaderWorkerSet's reason is copied, whatever its pods show",
        ),
        pytest.param(
            "MultiNode",
            STALE_GROUPS,
            UNSCHEDULABLE,
            ("False", UNSCHEDULABLE.reason, UNSCHEDULABLE.message),
            id="a LeaderWorkerSet not Available takes the cause its pods show",
        ),
    ],
)
def test_a_workload_condition_with_the_cause_its_pods_show(
    mode: str,
    workload: dict[str, Any] | None,
    cause: Cause | None,
    expected: tuple[str, str, str],
) -> None:
    found = component_condition(
        "engine", mode, workload, desired=1, cause=cause, previous=None, now=NOW
    )
    status, reason, message = expected
    assert found == {
        "type": "EngineReady",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": NOW,
    }


TOLD = ("False", CRASHING.reason, CRASHING.message)


@pytest.mark.parametrize(
    ("replica", "max_unavailable", "expected"),
    [
        pytest.param(
            _replica(TOLD, readyReplicas=1, servingReplicas=1),
            None,
            TOLD,
            id="OMENative copies the cause its InferenceReplica's Ready names",
        ),
        pytest.param(
            _replica(("False", "ReplicaCountMismatch", "1/2 Instances serving"), servingReplicas=1),
            None,
            ("False", "InsufficientAvailable", "1/2 Instances serving, need 2"),
            id="OMENative does not copy a replica reason that is not a pods' cause",
        ),
        pytest.param(
            _replica(("True", CRASHING.reason, CRASHING.message), servingReplicas=1),
            None,
            ("False", "InsufficientAvailable", "1/2 Instances serving, need 2"),
            id="OMENative copies a cause only from a replica Ready that is False",
        ),
        pytest.param(
            _replica(TOLD, readyReplicas=1, servingReplicas=1),
            1,
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="OMENative serving its minimum is True whatever cause the replica names",
        ),
    ],
)
def test_an_omenative_condition_with_the_cause_its_replica_names(
    replica: dict[str, Any], max_unavailable: int | None, expected: tuple[str, str, str]
) -> None:
    found = component_condition(
        "decoder",
        "OMENative",
        replica,
        desired=2,
        max_unavailable=max_unavailable,
        previous=None,
        now=NOW,
    )
    status, reason, message = expected
    assert found == {
        "type": "DecoderReady",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": NOW,
    }
