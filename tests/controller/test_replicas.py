"""The InferenceReplica controller's writes against the emulator, on their own (no watch: the
test feeds its caches, as a stale watch would): a pod it created counts as there until the watch
shows it, a create of an existing pod and a delete of a pod replaced meanwhile are no failures,
an unchanged status is not written again, and only pods it controls are found."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from ome_operator.cluster.api import KubeApi
from ome_operator.controller.owned import OwnedObjects
from ome_operator.controller.replicas import ReplicaController, controlling_replica
from ome_operator.controller.runtime import DONE, Result
from ome_operator.controller.write_record import EXPECTATION_SECONDS
from ome_operator.core.ownership import orphaned_for
from ome_operator.core.rendering import render_instance_pods
from ome_operator.models.object_metadata import owner_reference, with_owner
from tests.core.instances.replicas import replica_of
from tests.integration.observing import requests
from tests.support.kube_access import apply_object

if TYPE_CHECKING:
    from _pytest.mark import ParameterSet

KEY = ("default", "chat-engine")
#: What a pass that created pods asks for: another once their expectations end.
CREATED = Result(after=EXPECTATION_SECONDS)
LEADER_WORKER = ["chat-engine-0-leader-0", "chat-engine-0-worker-0", "chat-engine-0-worker-1"]


async def controller_with(
    kube, api: KubeApi, replica: dict[str, Any], **options: Any
) -> ReplicaController:
    """A controller whose InferenceReplica cache holds ``replica`` as the server stored it (and
    whose InferenceService store holds none, unless ``inference_services`` says otherwise)."""
    stored = await apply_object(kube, replica)
    owned = OwnedObjects()
    options.setdefault("inference_services", lambda key: None)
    controller = ReplicaController(lambda: api, owned, **options)
    owned.caches["InferenceReplica"]._change(stored, deleted=False, report=False)
    return controller


def pod_writes(kube, since: int = 0) -> list[str]:
    return [
        f"{r.method.name} {r.url.path.rsplit('/', 1)[-1]}"
        for r in requests(kube, since)
        if "/pods" in r.url.path and r.method.name in ("POST", "DELETE", "PATCH")
    ]


async def test_a_pass_before_the_watch_shows_the_created_pods_creates_nothing(kube, api):
    controller = await controller_with(kube, api, replica_of(workers=2))
    assert await controller.process(KEY) == CREATED
    mark = len(list(kube))
    assert await controller.process(KEY) == DONE  # the pod cache is still empty
    assert (pod_writes(kube), pod_writes(kube, mark)) == (["POST pods"] * 3, [])


async def test_a_pod_that_exists_already_is_no_failure(kube, api):
    controller = await controller_with(kube, api, replica_of(workers=2))
    replica = controller.replicas.named(*KEY)
    await apply_object(kube, with_owner(render_instance_pods(replica, 0)[0], replica))
    assert await controller.process(KEY) == CREATED
    assert pod_writes(kube) == ["POST pods"] * 4  # the test's, then three (one refused)


async def test_the_same_status_is_not_written_twice(kube, api):
    controller = await controller_with(kube, api, replica_of())
    await controller.process(KEY)
    status_writes = [r for r in requests(kube) if r.url.path.endswith("chat-engine/status")]
    assert len(status_writes) == 1
    pod = next(iter(kube_pods(kube)))  # the watch shows the pod
    controller.pods._change(pod, deleted=False, report=False)
    await controller.process(KEY)
    await controller.process(KEY)
    writes = [r for r in requests(kube) if r.url.path.endswith("chat-engine/status")]
    assert len(writes) == 2  # Creating, then Pending once the pod is seen; then nothing


def kube_pods(kube) -> list[dict[str, Any]]:
    return [
        dict(versions.raw)
        for (resource, _, _), versions in kube.objects.items()
        if resource.plural == "pods" and not versions.deleted
    ]


async def test_a_pod_replaced_meanwhile_is_not_deleted(kube, api):
    controller = await controller_with(kube, api, replica_of(replicas=1))
    replica = controller.replicas.named(*KEY)
    for index in (0, 1):
        created = await apply_object(
            kube, with_owner(render_instance_pods(replica, index)[0], replica)
        )
        if index == 1:  # the cache holds an older pod of that name: the pass's victim
            created = {**created, "metadata": {**created["metadata"], "uid": "an-older-pod"}}
        controller.pods._change(created, deleted=False, report=False)
    mark = len(list(kube))
    assert await controller.process(KEY) == DONE
    assert pod_writes(kube, mark) == ["DELETE chat-engine-1-default-0"]  # answered 409
    assert sorted(p["metadata"]["name"] for p in kube_pods(kube)) == [
        "chat-engine-0-default-0",
        "chat-engine-1-default-0",
    ]


async def test_a_replica_edited_out_of_shape_is_logged_and_left(kube, api, caplog):
    replica = replica_of()
    replica["spec"]["runners"][0]["template"]["spec"]["containers"] = ["not a container"]
    controller = await controller_with(kube, api, replica)
    assert await controller.process(KEY) == DONE
    assert pod_writes(kube) == []
    assert [(r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("InferenceReplica cannot be planned; waiting for it to change", None)
    ]


@pytest.mark.parametrize(
    ("references", "expected"),
    [
        pytest.param(
            [{"kind": "InferenceReplica", "name": "chat-engine", "controller": True}],
            "chat-engine",
            id="its controller reference",
        ),
        pytest.param(
            [{"kind": "InferenceReplica", "name": "chat-engine"}],
            None,
            id="an owner that is not its controller",
        ),
        pytest.param(
            [{"kind": "ReplicaSet", "name": "x", "controller": True}], None, id="another kind"
        ),
        pytest.param([], None, id="no owner"),
    ],
)
def test_a_pod_belongs_to_the_replica_that_controls_it(references, expected):
    assert controlling_replica({"metadata": {"ownerReferences": references}}) == expected


UID = "ome.io/inferenceservice-uid"
CHAT_ENGINE = {"ome.io/inferenceservice": "chat", "component": "engine"}


def _orphan(
    labels: dict[str, str] = CHAT_ENGINE, uid: str | None = "isvc-1", **metadata: Any
) -> dict[str, Any]:
    """A pod with no controller, labelled ``labels``, recording the InferenceService ``uid``."""
    annotations = {} if uid is None else {"annotations": {UID: uid}}
    return {"metadata": {"labels": labels, **annotations, **metadata}}


def _replica(**metadata: Any) -> dict[str, Any]:
    """InferenceReplica ``chat-engine`` with the given metadata (by default: recording the
    uid of InferenceService ``isvc-1``, as the operator writes it)."""
    metadata.setdefault("annotations", {UID: "isvc-1"})
    return {"metadata": {"name": "chat-engine", "namespace": "default", **metadata}}


_CONTROLLED = {"kind": "InferenceService", "name": "chat", "uid": "isvc-1", "controller": True}


def _adoption(
    pod: dict[str, Any], expected: bool, id: str, replica: dict[str, Any] | None = None
) -> ParameterSet:
    """A row: ``pod`` is adopted (``expected``) by ``replica`` (by default ``_replica()``)."""
    return pytest.param(pod, _replica() if replica is None else replica, expected, id=id)


@pytest.mark.parametrize(
    ("pod", "replica", "expected"),
    [
        _adoption(
            _orphan(), True, id="no owner, labelled for it, its InferenceService's uid: adopted"
        ),
        _adoption(
            _orphan(ownerReferences=[{"kind": "Node", "name": "n"}]),
            True,
            id="an owner that is no controller is kept beside it",
        ),
        _adoption(
            _orphan(),
            True,
            id="a replica recording no uid goes by its InferenceService's controller reference",
            replica=_replica(annotations={}, ownerReferences=[_CONTROLLED]),
        ),
        _adoption(_orphan(uid=None), False, id="labels alone never make a pod ours"),
        _adoption(
            _orphan(uid="isvc-0"),
            False,
            id="the uid of another InferenceService of that name is not its own",
        ),
        _adoption(
            _orphan(),
            False,
            id="a replica that says nothing of its InferenceService adopts nothing",
            replica=_replica(annotations={}),
        ),
        _adoption(
            _orphan(ownerReferences=[{"kind": "ReplicaSet", "controller": True}]),
            False,
            id="another controller's pod is never taken",
        ),
        _adoption(
            _orphan(deletionTimestamp="2026-01-01T00:00:00Z"),
            False,
            id="a pod going away is not adopted",
        ),
        _adoption(
            _orphan({**CHAT_ENGINE, "component": "decoder"}),
            False,
            id="labelled for another InferenceReplica",
        ),
        _adoption(_orphan({}), False, id="no labels: nothing says whose it is"),
    ],
)
def test_an_orphan_is_adopted_only_when_it_records_the_replicas_inference_service(
    pod, replica, expected
):
    assert orphaned_for(pod, replica) is expected


def _stamped(replica: dict[str, Any], uid: str = "isvc-1") -> dict[str, Any]:
    """``replica`` recording the uid of its InferenceService, as the operator writes it."""
    return {**replica, "metadata": {**replica["metadata"], "annotations": {UID: uid}}}


async def _orphaned_pod(kube, controller: ReplicaController, uid: str = "isvc-1") -> dict[str, Any]:
    """The pod of Instance 0, made without an owner (as ``--cascade=orphan`` leaves it),
    recording InferenceService ``uid``, and shown by the watch."""
    replica = controller.replicas.named(*KEY)
    pod = await apply_object(kube, render_instance_pods(_stamped(replica, uid), 0)[0])
    controller.pods._change(pod, deleted=False, report=False)
    return pod


async def test_an_orphaned_pod_is_adopted_not_created_again(kube, api):
    controller = await controller_with(kube, api, _stamped(replica_of()))
    replica = controller.replicas.named(*KEY)
    pod = await _orphaned_pod(kube, controller)
    mark = len(list(kube))
    assert await controller.process(KEY) == DONE
    assert pod_writes(kube, mark) == ["PATCH chat-engine-0-default-0"]
    (stored,) = kube_pods(kube)
    assert (stored["metadata"]["uid"], stored["metadata"]["ownerReferences"]) == (
        pod["metadata"]["uid"],
        [owner_reference(replica)],
    )
    assert list(controller.pods.owned_by(*KEY)) == ["chat-engine-0-default-0"]


async def test_a_labelled_pod_of_another_inference_service_is_never_written(kube, api):
    controller = await controller_with(kube, api, _stamped(replica_of()))
    pod = await _orphaned_pod(kube, controller, uid="an-inference-service-deleted-since")
    mark = len(list(kube))
    assert await controller.process(KEY) == DONE
    assert pod_writes(kube, mark) == ["POST pods"]  # refused: AlreadyExists
    assert kube_pods(kube) == [pod]


async def test_no_pod_is_adopted_by_a_replica_the_server_no_longer_has(kube, api, caplog):
    caplog.set_level(logging.INFO, logger="ome_operator")
    controller = await controller_with(kube, api, _stamped(replica_of()))
    cached = controller.replicas.named(*KEY)
    gone = {**cached, "metadata": {**cached["metadata"], "uid": "a-replica-deleted-since"}}
    controller.replicas._change(gone, deleted=False, report=False)
    await _orphaned_pod(kube, controller)
    mark = len(list(kube))
    assert await controller.process(KEY) == DONE
    assert pod_writes(kube, mark) == []
    assert "ownerReferences" not in kube_pods(kube)[0]["metadata"]
    assert "InferenceReplica is being deleted; its pods are not adopted" in caplog.messages


_OWNER = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "name": "chat", "uid": "u1"}


def _held(**metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": "chat", "namespace": "default", **metadata}}


@pytest.mark.parametrize(
    ("held", "writes"),
    [
        pytest.param(_held(uid="u1"), ["POST pods"], id="its InferenceService is there: a pass"),
        pytest.param(None, [], id="its InferenceService is gone: the collector's now"),
        pytest.param(
            _held(uid="u1", deletionTimestamp="2026-01-01T00:00:00Z"),
            [],
            id="its InferenceService is being deleted",
        ),
        pytest.param(_held(uid="u2"), [], id="the InferenceService of that name is another"),
    ],
)
async def test_a_replica_whose_inference_service_goes_is_left_to_the_collector(
    kube, api, held, writes
):
    replica = replica_of()
    replica["metadata"]["ownerReferences"] = [{**_OWNER, "controller": True}]
    controller = await controller_with(kube, api, replica, inference_services=lambda key: held)
    assert await controller.process(KEY) == (CREATED if writes else DONE)
    assert pod_writes(kube) == writes
