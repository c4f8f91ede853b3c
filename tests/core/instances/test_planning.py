"""The InferenceReplica controller's pass (S5.4.2–S5.4.8, OPEN-20), one rule per row: which
pods it creates (and with which incarnation), which it deletes, which serving gates it sets,
the Instance rows and the Ready condition it leaves."""

from __future__ import annotations

import pytest

from ome_operator.core.instances.planning import NEW_INSTANCES_PER_PASS
from tests.core.instances.replicas import pass_of, pods_of, replica_of, row
from tests.core.pods import NODE_LOST, SERVES, cond

SINGLE = replica_of()
MULTI = replica_of(workers=2)
MISMATCH = ("False", "ReplicaCountMismatch", "0/1 Instances serving, need 1 (no rollout in flight)")
ALL_READY = ("True", "AllInstancesReady", "1/1 Instances Ready")
FAILED = ("False", "InstanceFailed", "At least one Instance has Phase=Failed")
WHOLE = ("leader-0", "worker-0", "worker-1")
#: What a kubelet writes of a pod whose containers are ready and whose serving gate is not.
GATED = (
    cond("Ready", "False", "ReadinessGatesNotReady"),
    cond("ContainersReady", "True"),
)


def expect(create=(), delete=(), serving=(), rows=(), ready=MISMATCH):
    return {
        "create": list(create),
        "delete": list(delete),
        "serving": list(serving),
        "rows": list(rows),
        "ready": ready,
    }


@pytest.mark.parametrize(
    ("replica", "pods", "expected"),
    [
        pytest.param(
            SINGLE,
            [],
            expect(create=[("0-default-0", "1")], rows=[(0, "Creating", 1)]),
            id="a new Instance of one pod is created, incarnation 1",
        ),
        pytest.param(
            MULTI,
            [],
            expect(
                create=[("0-leader-0", "1"), ("0-worker-0", "1"), ("0-worker-1", "1")],
                rows=[(0, "Creating", 1)],
            ),
            id="a leader and its workers are created together",
        ),
        pytest.param(
            replica_of(replicas=0),
            [],
            expect(create=[("0-default-0", "1")], rows=[(0, "Creating", 1)]),
            id="0 replicas means one Instance",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI),
            expect(rows=[(0, "Pending", 1)]),
            id="every pod there but not ready: Pending, nothing written",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, ready=True),
            expect(
                serving=[("0-leader-0", True), ("0-worker-0", True), ("0-worker-1", True)],
                rows=[(0, "Ready", 1)],
                ready=ALL_READY,
            ),
            id="once every pod is ready, every pod gets ome.io/serving=True",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, ready=True, serving="True"),
            expect(rows=[(0, "Ready", 1)], ready=ALL_READY),
            id="a serving Instance is left as it is",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, ready=True, serving="True", only=("leader-0", "worker-1"))
            + pods_of(MULTI, serving="True", only=("worker-0",)),
            expect(
                serving=[("0-leader-0", False), ("0-worker-0", False), ("0-worker-1", False)],
                rows=[(0, "Pending", 1)],
            ),
            id="one pod stops being ready: every pod is taken out of rotation",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, serving="False", conditions=GATED),
            expect(
                serving=[("0-leader-0", True), ("0-worker-0", True), ("0-worker-1", True)],
                rows=[(0, "Ready", 1)],
                ready=ALL_READY,
            ),
            id="Ready False only for the ome.io/serving gate: the pods are ready, put in rotation",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, serving="True", conditions=SERVES, only=("leader-0", "worker-1"))
            + pods_of(MULTI, serving="True", conditions=NODE_LOST, only=("worker-0",), node="n3"),
            expect(
                serving=[("0-leader-0", False), ("0-worker-0", False), ("0-worker-1", False)],
                rows=[(0, "Pending", 1)],
                ready=(
                    "False",
                    "NodeLost",
                    "chat-engine-0-worker-0: node n3 does not answer (its pods are not ready)",
                ),
            ),
            id="a pod whose node stops answering takes its Instance out of rotation: NodeLost",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, ready=True, serving="False"),
            expect(
                serving=[("0-leader-0", True), ("0-worker-0", True), ("0-worker-1", True)],
                rows=[(0, "Ready", 1)],
                ready=ALL_READY,
            ),
            id="ready again: back in rotation",
        ),
        pytest.param(
            replica_of(workers=2, rows=[row(0, "Creating")]),
            pods_of(MULTI, only=("leader-0",)),
            expect(create=[("0-worker-0", "1"), ("0-worker-1", "1")], rows=[(0, "Creating", 1)]),
            id="a restart between the leader's create and the workers': the workers are created",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, only=("leader-0", "worker-1")),
            expect(create=[("0-worker-0", "1")], rows=[(0, "Creating", 1)]),
            id="no row yet: the missing pods of the Instance being created are created",
        ),
        pytest.param(
            replica_of(workers=2, rows=[row(0, "Creating")]),
            [],
            expect(
                create=[("0-leader-0", "1"), ("0-worker-0", "1"), ("0-worker-1", "1")],
                rows=[(0, "Creating", 1)],
            ),
            id="pods created but not shown yet: created again by name (refused as existing)",
        ),
        pytest.param(
            replica_of(workers=2, rows=[row(0, "Ready")]),
            pods_of(MULTI, ready=True, serving="True", only=("leader-0", "worker-1")),
            expect(delete=["0-leader-0", "0-worker-1"], rows=[(0, "Failed", 1)], ready=FAILED),
            id="a worker of a complete Instance disappears: its other pods are deleted",
        ),
        pytest.param(
            replica_of(workers=2, rows=[row(0, "Failed")]),
            [],
            expect(
                create=[("0-leader-0", "2"), ("0-worker-0", "2"), ("0-worker-1", "2")],
                rows=[(0, "Creating", 2)],
            ),
            id="once its pods are gone, the Instance is created again, incarnation + 1",
        ),
        pytest.param(
            replica_of(workers=2, rows=[row(0, "Failed")]),
            pods_of(MULTI, terminating=True, only=("leader-0",)),
            expect(rows=[(0, "Failed", 1)], ready=FAILED),
            id="a pod still terminating is waited for",
        ),
        pytest.param(
            replica_of(rows=[row(0, "Ready", 4)]),
            [],
            expect(create=[("0-default-0", "5")], rows=[(0, "Creating", 5)]),
            id="the one pod of a complete Instance disappears: created again, incarnation + 1",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, ready=True, only=("leader-0", "worker-0"))
            + pods_of(MULTI, phase="Failed", only=("worker-1",)),
            expect(
                delete=["0-leader-0", "0-worker-0", "0-worker-1"],
                rows=[(0, "Failed", 1)],
                ready=FAILED,
            ),
            id="a failed pod: the whole Instance is recreated",
        ),
        pytest.param(
            MULTI,
            pods_of(MULTI, ready=True, serving="True", image="vllm:0"),
            expect(
                delete=["0-leader-0", "0-worker-0", "0-worker-1"],
                rows=[(0, "Failed", 1)],
                ready=FAILED,
            ),
            id="a template change recreates the Instance's pods (OPEN-20)",
        ),
        pytest.param(
            replica_of(workers=1, rows=[row(0, "Ready")]),
            pods_of(MULTI, ready=True, serving="True"),
            expect(
                delete=["0-leader-0", "0-worker-0", "0-worker-1"],
                rows=[(0, "Failed", 1)],
                ready=FAILED,
            ),
            id="a new worker size recreates the Instance",
        ),
        pytest.param(
            replica_of(workers=2, rows=[row(0, "Failed")]),
            pods_of(MULTI, incarnation=2),
            expect(rows=[(0, "Pending", 2)]),
            id="pods of a newer incarnation than the row: their status was not written yet",
        ),
        pytest.param(
            SINGLE,
            [
                {
                    "metadata": {"name": "stray", "uid": "u", "labels": {"ome.io/runner": "x"}},
                    "status": {"phase": "Running"},
                }
            ],
            expect(create=[("0-default-0", "1")], rows=[(0, "Creating", 1)]),
            id="a pod whose labels name no Instance is left alone",
        ),
    ],
)
def test_one_instance(replica, pods, expected):
    assert pass_of(replica, pods) == expected


def ready_instances(replica, *indexes, ready=True):
    return [
        pod
        for index in indexes
        for pod in pods_of(replica, index, ready=ready, serving="True" if ready else None)
    ]


THREE = replica_of(replicas=3)
TWO = replica_of(replicas=2)
ONE = replica_of(replicas=1)


@pytest.mark.parametrize(
    ("replica", "pods", "expected"),
    [
        pytest.param(
            THREE,
            ready_instances(THREE, 0, 2),
            expect(
                create=[("1-default-0", "1")],
                rows=[(0, "Ready", 1), (1, "Creating", 1), (2, "Ready", 1)],
                ready=(
                    "False",
                    "ReplicaCountMismatch",
                    "2/3 Instances serving, need 3 (no rollout in flight)",
                ),
            ),
            id="scaling up takes the lowest free index",
        ),
        pytest.param(
            ONE,
            ready_instances(THREE, 0, 1, 2),
            expect(
                delete=["2-default-0", "1-default-0"],
                rows=[(0, "Ready", 1), (1, "Deleting", 1), (2, "Deleting", 1)],
                ready=ALL_READY,
            ),
            id="scaling down deletes the highest index first",
        ),
        pytest.param(
            TWO,
            ready_instances(THREE, 1, 2) + ready_instances(THREE, 0, ready=False),
            expect(
                delete=["0-default-0"],
                rows=[(0, "Deleting", 1), (1, "Ready", 1), (2, "Ready", 1)],
                ready=("True", "AllInstancesReady", "2/2 Instances Ready"),
            ),
            id="scaling down deletes a non-ready Instance first",
        ),
        pytest.param(
            replica_of(replicas=1, rows=[row(0, "Ready"), row(1, "Deleting")]),
            ready_instances(THREE, 0),
            expect(rows=[(0, "Ready", 1)], ready=ALL_READY),
            id="an Instance scaled away loses its row with its last pod",
        ),
        pytest.param(
            replica_of(replicas=2, rows=[row(0, "Ready"), row(1, "Deleting")]),
            ready_instances(THREE, 0) + pods_of(THREE, 1, terminating=True),
            expect(
                create=[("2-default-0", "1")],
                rows=[(0, "Ready", 1), (1, "Deleting", 1), (2, "Creating", 1)],
                ready=(
                    "False",
                    "ReplicaCountMismatch",
                    "1/2 Instances serving, need 2 (no rollout in flight)",
                ),
            ),
            id="an index stays taken until the pods scaled away are gone",
        ),
        pytest.param(
            replica_of(replicas=2, max_unavailable=1),
            ready_instances(TWO, 0) + pods_of(TWO, 1),
            expect(
                rows=[(0, "Ready", 1), (1, "Pending", 1)],
                ready=("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            ),
            id="with maxUnavailable 1, one of two serving is the minimum",
        ),
        pytest.param(
            replica_of(replicas=4, max_unavailable="50%"),
            ready_instances(replica_of(replicas=4), 0)
            + pods_of(replica_of(replicas=4), 1)
            + pods_of(replica_of(replicas=4), 2)
            + pods_of(replica_of(replicas=4), 3),
            expect(
                rows=[(0, "Ready", 1), (1, "Pending", 1), (2, "Pending", 1), (3, "Pending", 1)],
                ready=(
                    "False",
                    "ReplicaCountMismatch",
                    "1/4 Instances serving, need 2 (no rollout in flight)",
                ),
            ),
            id="a percentage maxUnavailable is resolved against the desired count",
        ),
    ],
)
def test_scaling(replica, pods, expected):
    assert pass_of(replica, pods) == expected


def test_a_large_scale_up_goes_in_steps():
    plan = pass_of(replica_of(replicas=500), [])
    rows = plan["rows"]
    assert (len(plan["create"]), rows[0], rows[-1]) == (
        NEW_INSTANCES_PER_PASS,
        (0, "Creating", 1),
        (NEW_INSTANCES_PER_PASS - 1, "Creating", 1),
    )
