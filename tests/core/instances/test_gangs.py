"""Gang placement (docs/reference/workloads.md, Gang placement), one rule per row: the PodGroups a
pass of the InferenceReplica controller creates and deletes, the group its pods join, and what
its Ready condition says of an Instance the scheduler cannot place whole."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ome_operator.core.admission import review_inference_service
from ome_operator.core.instances import plan_instances
from ome_operator.core.instances.gangs import render_pod_group, topology_problem
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.selection import RuntimeCatalog
from tests.core.instances.replicas import EARLIER, NOW, pods_of, replica_of, row, short
from tests.core.pods import MODEL_LABEL, NO_GPU, NO_NODE_MATCHES, SERVES, cond
from tests.core.reconciling.plans import LLAMA, MODE, RT, isvc_of, plan_of

MULTI = replica_of(workers=2)
TWO = replica_of(replicas=2, workers=1)
SINGLE = replica_of()
WHOLE = ("leader-0", "worker-0", "worker-1")
#: What the scheduler says of a gang it cannot place (the PodGroup's condition message).
NO_ROOM = "0/1 placements are available, first placement status: pod group is unschedulable"
MISMATCH = ("False", "ReplicaCountMismatch", "0/1 Instances serving, need 1 (no rollout in flight)")


def group(
    replica: dict[str, Any],
    index: int = 0,
    incarnation: int = 1,
    *,
    said: tuple[str, str, str] | None = None,
    terminating: bool = False,
) -> dict[str, Any]:
    """The PodGroup of an Instance as the watch shows it; ``said``: its PodGroupScheduled
    condition (status, reason, message)."""
    pods = sum(r["size"] for r in replica["spec"]["runners"])
    found = copy.deepcopy(render_pod_group(replica, index, incarnation, pods))
    found["metadata"]["uid"] = f"uid-{found['metadata']['name']}"
    if terminating:
        found["metadata"]["deletionTimestamp"] = EARLIER
    if said is not None:
        status, reason, message = said
        found["status"] = {
            "conditions": [
                {
                    "type": "PodGroupScheduled",
                    "status": status,
                    "reason": reason,
                    "message": message,
                }
            ]
        }
    return found


def gang_pass(
    replica: dict[str, Any], pods: list[dict[str, Any]], groups: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """A pass as a gang rule reads: groups created (name, minCount, topology), pods created
    (with the group they join), pods and groups deleted, the Ready condition."""
    plan = plan_instances(replica, pods, now=NOW, pod_groups=groups)
    ready = plan.status["conditions"][0]
    return {
        "create_groups": [
            (
                short(g["metadata"]["name"]),
                g["spec"]["schedulingPolicy"]["gang"]["minCount"],
                g["spec"].get("schedulingConstraints"),
            )
            for g in plan.create_groups
        ],
        "create": [(short(p["metadata"]["name"]), _joins(p)) for p in plan.create],
        "delete": [short(ref.name) for ref in plan.delete],
        "delete_groups": [short(ref.name) for ref in plan.delete_groups],
        "ready": (ready["status"], ready["reason"], ready["message"]),
    }


def _joins(pod: dict[str, Any]) -> str | None:
    found = pod["spec"].get("schedulingGroup")
    return short(found["podGroupName"]) if found else None


def expect(create_groups=(), create=(), delete=(), delete_groups=(), ready=MISMATCH):
    return {
        "create_groups": list(create_groups),
        "create": list(create),
        "delete": list(delete),
        "delete_groups": list(delete_groups),
        "ready": ready,
    }


NEW_MULTI = [("0-leader-0", "0-gang-1"), ("0-worker-0", "0-gang-1"), ("0-worker-1", "0-gang-1")]
RACK = {"topology": [{"key": "example.com/rack"}]}
ON_RACKS = copy.deepcopy(MULTI)
ON_RACKS["metadata"]["annotations"] = {"ome.io/gang-topology-key": "example.com/rack"}
CREATING = replica_of(workers=2, rows=[row(0, "Creating")])
FAILED = replica_of(workers=2, rows=[row(0, "Failed")])
PENDING = replica_of(workers=2, rows=[row(0, "Pending")])
SCALED_DOWN = replica_of(replicas=1, workers=1, rows=[row(0, "Ready"), row(1, "Ready")])


@pytest.mark.parametrize(
    ("replica", "pods", "groups", "expected"),
    [
        pytest.param(
            MULTI,
            [],
            [],
            expect(create_groups=[("0-gang-1", 3, None)], create=NEW_MULTI),
            id="a new multi-pod Instance gets a PodGroup of its pod count and its pods join it",
        ),
        pytest.param(
            ON_RACKS,
            [],
            [],
            expect(create_groups=[("0-gang-1", 3, RACK)], create=NEW_MULTI),
            id="the InferenceService's topology key asks that every pod share that node label",
        ),
        pytest.param(
            SINGLE,
            [],
            [],
            expect(create=[("0-default-0", None)]),
            id="a single-pod Instance gets no PodGroup",
        ),
        pytest.param(
            MULTI,
            [],
            None,
            expect(create=[(name, None) for name, _ in NEW_MULTI]),
            id="without gang placement no pod joins a group",
        ),
        pytest.param(
            CREATING,
            pods_of(CREATING, only=("leader-0",), gang=True),
            [group(CREATING)],
            expect(create=NEW_MULTI[1:]),
            id="a group that exists is not created again",
        ),
        pytest.param(
            PENDING,
            pods_of(PENDING, phase="Pending", gang=True),
            [],
            expect(create_groups=[("0-gang-1", 3, None)]),
            id="a group its pods joined is created again when it is gone",
        ),
        pytest.param(
            PENDING,
            pods_of(PENDING, phase="Pending"),
            [],
            expect(),
            id="pods made before gang placement get no group",
        ),
        pytest.param(
            FAILED,
            pods_of(FAILED, phase="Failed", only=("worker-0",), gang=True),
            [group(FAILED)],
            expect(
                delete=["0-worker-0"],
                ready=("False", "InstanceFailed", "At least one Instance has Phase=Failed"),
            ),
            id="a failed Instance keeps its group while its pods go",
        ),
        pytest.param(
            FAILED,
            [],
            [group(FAILED)],
            expect(
                create_groups=[("0-gang-2", 3, None)],
                create=[(name, "0-gang-2") for name, _ in NEW_MULTI],
                delete_groups=["0-gang-1"],
            ),
            id="an Instance recreated as a unit joins a new group and the old one is deleted",
        ),
        pytest.param(
            SCALED_DOWN,
            [
                *pods_of(SCALED_DOWN, 0, conditions=SERVES, serving="True", gang=True),
                *pods_of(SCALED_DOWN, 1, conditions=SERVES, serving="True", gang=True),
            ],
            [group(SCALED_DOWN, 0), group(SCALED_DOWN, 1)],
            expect(
                delete=["1-leader-0", "1-worker-0"],
                delete_groups=["1-gang-1"],
                ready=("True", "AllInstancesReady", "1/1 Instances Ready"),
            ),
            id="the group of an Instance scaled away goes with its pods",
        ),
        pytest.param(
            SCALED_DOWN,
            [*pods_of(SCALED_DOWN, 0, conditions=SERVES, serving="True", gang=True)],
            [group(SCALED_DOWN, 0), group(SCALED_DOWN, 1, terminating=True)],
            expect(ready=("True", "AllInstancesReady", "1/1 Instances Ready")),
            id="a group being deleted is not deleted again",
        ),
    ],
)
def test_gang_writes(replica, pods, groups, expected):
    assert gang_pass(replica, pods, groups) == expected


UNSCHEDULABLE = ("False", "Unschedulable", NO_ROOM)


def waiting(condition: dict[str, Any], only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The Pending pods of Instance 0 of ``PENDING``, in their group, with the scheduler's
    ``PodScheduled`` ``condition``."""
    return pods_of(PENDING, phase="Pending", gang=True, conditions=[condition], only=only)


#: What the scheduler writes on a pod of a gang it could not place that fits no node.
STUCK = cond("PodScheduled", "False", "Unschedulable", NO_GPU)
#: ... and on one that fit a node but waited for the others.
GANG_WAIT = cond(
    "PodScheduled",
    "False",
    "Unschedulable",
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or "
    "more plugins asked to wait and no plugin rejected pod",
)
NO_MODEL = cond("PodScheduled", "False", "Unschedulable", NO_NODE_MATCHES)
WAITING = f"Instance 0 needs 3 pods placed together: {NO_GPU}"


@pytest.mark.parametrize(
    ("replica", "pods", "groups", "refused", "expected"),
    [
        pytest.param(
            PENDING,
            waiting(STUCK),
            [group(PENDING, said=UNSCHEDULABLE)],
            None,
            ("False", "WaitingForGang", WAITING),
            id="an Instance the scheduler cannot place whole waits for its gang, saying why",
        ),
        pytest.param(
            PENDING,
            [
                *waiting(GANG_WAIT, only=WHOLE[:1]),
                *waiting(STUCK, only=WHOLE[1:]),
            ],
            [group(PENDING, said=UNSCHEDULABLE)],
            None,
            ("False", "WaitingForGang", WAITING),
            id="the reason is what the scheduler says of the first pod that fits no node",
        ),
        pytest.param(
            PENDING,
            waiting(STUCK),
            [group(PENDING)],
            None,
            ("False", "WaitingForGang", WAITING),
            id="a gang waits as soon as the scheduler says so on a pod, before the group",
        ),
        pytest.param(
            PENDING,
            waiting(GANG_WAIT),
            [group(PENDING)],
            None,
            MISMATCH,
            id="pods that only wait for each other say nothing, one by one or as a gang",
        ),
        pytest.param(
            PENDING,
            pods_of(PENDING, phase="Pending", gang=True),
            [group(PENDING)],
            None,
            MISMATCH,
            id="a gang the scheduler has not judged yet does not wait",
        ),
        pytest.param(
            PENDING,
            waiting(GANG_WAIT),
            [group(PENDING, said=UNSCHEDULABLE)],
            None,
            ("False", "WaitingForGang", f"Instance 0 needs 3 pods placed together: {NO_ROOM}"),
            id="when each pod only waits for the others the group's own message is told",
        ),
        pytest.param(
            PENDING,
            [
                {**pod, "spec": {**pod["spec"], "nodeSelector": {MODEL_LABEL: "Ready"}}}
                for pod in waiting(NO_MODEL)
            ],
            [group(PENDING, said=UNSCHEDULABLE)],
            None,
            (
                "False",
                "WaitingForGang",
                "Instance 0 needs 3 pods placed together: no node has model llama ready (node "
                f"label {MODEL_LABEL}=Ready); OME's model agent sets it",
            ),
            id="a gang no node has the model for is told in words",
        ),
        pytest.param(
            replica_of(replicas=3, workers=1, rows=[row(i, "Pending") for i in range(3)]),
            [
                *pods_of(TWO, 0, phase="Pending", gang=True, conditions=[STUCK]),
                *pods_of(TWO, 1, phase="Pending", gang=True, conditions=[STUCK]),
                *pods_of(TWO, 2, phase="Pending", gang=True, conditions=[STUCK]),
            ],
            [group(TWO, i, said=UNSCHEDULABLE) for i in range(3)],
            None,
            (
                "False",
                "WaitingForGang",
                f"Instance 0 needs 2 pods placed together: {NO_GPU} (Instances 1, 2 wait too)",
            ),
            id="the lowest Instance waiting is told and the others named",
        ),
        pytest.param(
            PENDING,
            pods_of(PENDING, phase="Pending", gang=True, node="gpu-node-1"),
            [group(PENDING, said=UNSCHEDULABLE)],
            None,
            MISMATCH,
            id="a gang bound whole waits no more whatever the group last said",
        ),
        pytest.param(
            PENDING,
            pods_of(PENDING, phase="Pending", gang=True),
            [group(PENDING, said=("True", "Scheduled", ""))],
            None,
            MISMATCH,
            id="a gang the scheduler placed does not wait",
        ),
        pytest.param(
            PENDING,
            waiting(STUCK),
            [group(PENDING, said=UNSCHEDULABLE)],
            'pods "chat-engine-0-leader-0" is forbidden: violates PodSecurity',
            (
                "False",
                "PodsRefused",
                'pods cannot be created: pods "chat-engine-0-leader-0" is forbidden: violates '
                "PodSecurity",
            ),
            id="pods the API server refuses outrank a gang that waits",
        ),
    ],
)
def test_an_instance_waiting_for_its_gang(replica, pods, groups, refused, expected):
    plan = plan_instances(replica, pods, now=NOW, refused=refused, pod_groups=groups)
    ready = plan.status["conditions"][0]
    assert (ready["status"], ready["reason"], ready["message"]) == expected


def test_the_whole_pod_group():
    assert render_pod_group(ON_RACKS, 2, 5, 3) == {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {
            "name": "chat-engine-2-gang-5",
            "namespace": "default",
            "labels": {
                "component": "engine",
                "ome.io/inferenceservice": "chat",
                "ome.io/instance-incarnation": "5",
                "ome.io/instance-index": "2",
                "ome.io/managed-by": "OMENative",
            },
        },
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 3}},
            "schedulingConstraints": {"topology": [{"key": "example.com/rack"}]},
        },
    }


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        pytest.param(None, "", id="no key asks nothing"),
        pytest.param("topology.kubernetes.io/zone", "", id="a prefixed label key is one"),
        pytest.param("rack", "", id="so is a bare name"),
        *[
            pytest.param(
                key,
                "metadata.annotations[ome.io/gang-topology-key] must be a node label key, such "
                f'as topology.kubernetes.io/zone (got "{key}")',
                id=why,
            )
            for key, why in [
                ("", "an empty key is refused"),
                ("rack name", "a space is refused"),
                ("Example.COM/rack", "an upper-case prefix is refused"),
                ("example.com/", "a prefix without a name is refused"),
                ("x" * 64, "a name over 63 characters is refused"),
            ]
        ],
    ],
)
def test_the_topology_key_must_be_a_label_key(key, problem):
    annotations = {} if key is None else {"ome.io/gang-topology-key": key}
    assert topology_problem(annotations) == problem


def test_the_webhook_refuses_a_topology_key_that_is_no_label_key():
    isvc = isvc_of(annotations={"ome.io/gang-topology-key": "rack name"})
    verdict = review_inference_service(isvc, ModelCatalog.of([LLAMA]), RuntimeCatalog.of([RT]))
    assert (verdict.allowed, verdict.message) == (
        False,
        "metadata.annotations[ome.io/gang-topology-key] must be a node label key, such as "
        'topology.kubernetes.io/zone (got "rack name")',
    )


def test_the_topology_key_reaches_the_inference_replica():
    isvc = isvc_of(
        annotations={"ome.io/gang-topology-key": "example.com/rack", MODE: "OMENative"},
        engine={"leader": {}, "worker": {"size": 1}},
    )
    (replica,) = [o for o in plan_of(isvc).apply if o["kind"] == "InferenceReplica"]
    assert replica["metadata"]["annotations"]["ome.io/gang-topology-key"] == "example.com/rack"
