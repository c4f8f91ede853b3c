"""The InferenceReplica's status (S5.4.8–S5.4.10): the whole object for a pass, each Ready row
produced by its rule (too few Instances serving: the cause the pods show, when they show one),
and lastTransitionTime kept while the status stays."""

from __future__ import annotations

import pytest

from ome_operator.core.instances import InstanceState, plan_instances, replica_ready
from ome_operator.core.pod_health import Cause
from tests.core.instances.replicas import EARLIER, NOW, pods_of, replica_of, row
from tests.core.pods import NO_GPU, SERVES, cond

STUCK = cond("PodScheduled", "False", "Unschedulable", NO_GPU)
SELECTOR = "component=engine,ome.io/inferenceservice=chat,ome.io/managed-by=OMENative"


def test_the_whole_status_of_a_pass():
    replica = replica_of(replicas=2, workers=1)
    pods = pods_of(replica, 0, ready=True, serving="True") + pods_of(replica, 1)
    status = plan_instances(replica, pods, now=NOW).status
    assert status == {
        "observedGeneration": 3,
        "replicas": 2,
        "readyReplicas": 1,
        "servingReplicas": 1,
        "availableReplicas": 1,
        "updatedReplicas": 2,
        "updatedReadyReplicas": 1,
        "currentRevision": status["updateRevision"],
        "updateRevision": pods[0]["metadata"]["labels"]["ome.io/revision-hash"],
        "labelSelector": SELECTOR,
        "instanceStatuses": [
            {"index": 0, "phase": "Ready", "incarnation": 1, "pods": 2, "readyPods": 2},
            {"index": 1, "phase": "Pending", "incarnation": 1, "pods": 2, "readyPods": 0},
        ],
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "ReplicaCountMismatch",
                "message": "1/2 Instances serving, need 2 (no rollout in flight)",
                "lastTransitionTime": NOW,
            }
        ],
    }


def test_an_instance_scaled_away_counts_in_replicas_only():
    replica = replica_of(replicas=1)
    pods = pods_of(replica, 0, ready=True, serving="True") + pods_of(replica, 1, ready=True)
    status = plan_instances(replica, pods, now=NOW).status
    counts = {k: status[k] for k in ("replicas", "readyReplicas", "updatedReplicas")}
    assert counts == {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 1}


@pytest.mark.parametrize(
    ("previous", "expected"),
    [
        pytest.param(
            {
                "type": "Ready",
                "status": "True",
                "reason": "AllInstancesReady",
                "lastTransitionTime": EARLIER,
            },
            EARLIER,
            id="the same status keeps its transition time",
        ),
        pytest.param(
            {
                "type": "Ready",
                "status": "False",
                "reason": "ReplicaCountMismatch",
                "lastTransitionTime": EARLIER,
            },
            NOW,
            id="a new status takes the pass's time",
        ),
    ],
)
def test_last_transition_time_moves_only_with_the_status(previous, expected):
    replica = replica_of(conditions=[previous])
    pods = pods_of(replica, ready=True, serving="True")
    (ready,) = plan_instances(replica, pods, now=NOW).status["conditions"]
    assert ready["lastTransitionTime"] == expected


def state(index: int, phase: str, active: bool = True) -> InstanceState:
    return InstanceState(index, phase, 1, 1, 1 if phase == "Ready" else 0, active=active)


@pytest.mark.parametrize(
    ("instances", "desired", "minimum", "expected"),
    [
        pytest.param(
            [state(0, "Ready"), state(1, "Failed")],
            2,
            1,
            ("False", "InstanceFailed", "At least one Instance has Phase=Failed"),
            id="InstanceFailed comes first",
        ),
        pytest.param(
            [],
            0,
            0,
            ("False", "NoReplicas", "InferenceReplica has no desired Instances"),
            id="NoReplicas when nothing is desired",
        ),
        pytest.param(
            [state(0, "Ready"), state(1, "Ready")],
            2,
            2,
            ("True", "AllInstancesReady", "2/2 Instances Ready"),
            id="AllInstancesReady",
        ),
        pytest.param(
            [state(0, "Ready"), state(1, "Pending")],
            2,
            1,
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="MinimumAvailable",
        ),
        pytest.param(
            [state(0, "Ready"), state(1, "Creating"), state(2, "Ready", active=False)],
            2,
            2,
            (
                "False",
                "ReplicaCountMismatch",
                "1/2 Instances serving, need 2 (no rollout in flight)",
            ),
            id="ReplicaCountMismatch; an Instance scaled away does not count",
        ),
    ],
)
def test_each_ready_row(instances, desired, minimum, expected):
    assert replica_ready(instances, desired, minimum) == expected


def test_rows_survive_between_passes():
    replica = replica_of(workers=1, rows=[row(0, "Ready", 7)])
    pods = pods_of(replica, incarnation=7, ready=True, serving="True")
    rows = plan_instances(replica, pods, now=NOW).status["instanceStatuses"]
    assert rows == [{"index": 0, "phase": "Ready", "incarnation": 7, "pods": 2, "readyPods": 2}]


CRASHING = Cause(
    "CrashLoopBackOff",
    "chat-engine-1-default-0: container ome-container is in CrashLoopBackOff (restarted 5 times, "
    "last exit code 1)",
)


@pytest.mark.parametrize(
    ("instances", "desired", "minimum", "expected"),
    [
        pytest.param(
            [state(0, "Ready"), state(1, "Pending")],
            2,
            2,
            ("False", CRASHING.reason, CRASHING.message),
            id="too few serving: the pods' cause instead of ReplicaCountMismatch",
        ),
        pytest.param(
            [state(0, "Ready"), state(1, "Failed")],
            2,
            1,
            ("False", "InstanceFailed", "At least one Instance has Phase=Failed"),
            id="InstanceFailed still comes before the pods' cause",
        ),
        pytest.param(
            [state(0, "Ready"), state(1, "Pending")],
            2,
            1,
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="enough serving: the pods' cause does not turn Ready False",
        ),
        pytest.param(
            [state(0, "Ready"), state(1, "Pending", active=False)],
            1,
            1,
            ("True", "AllInstancesReady", "1/1 Instances Ready"),
            id="every desired Instance ready: a cause in a scaled-away one is not told",
        ),
    ],
)
def test_each_ready_row_with_a_cause_the_pods_show(instances, desired, minimum, expected):
    assert replica_ready(instances, desired, minimum, CRASHING) == expected


def test_a_pass_tells_why_an_instance_placed_in_part_does_not_serve():
    replica = replica_of(workers=1)
    leader = pods_of(replica, conditions=SERVES, only=("leader-0",), node="gpu-1", gpus=8)
    worker = pods_of(replica, conditions=[STUCK], only=("worker-0",), phase="Pending", gpus=8)
    (ready,) = plan_instances(replica, leader + worker, now=NOW).status["conditions"]
    assert ready == {
        "type": "Ready",
        "status": "False",
        "reason": "PodsUnschedulable",
        "message": f"1 of 2 pods cannot be scheduled: {NO_GPU} Instance 0 placed in part, "
        "holding 8 accelerators idle",
        "lastTransitionTime": NOW,
    }
