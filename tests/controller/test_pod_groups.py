"""The InferenceReplica controller's gang PodGroups against the emulator: created before the pods
that join them and owned by the InferenceReplica, one refused stops every pod create (and the
status names the answer), an old incarnation's group is deleted only while it is that very group,
and a PodGroup's change (the scheduler's verdict) brings a pass."""

from __future__ import annotations

from typing import Any

from ome_operator.controller.replicas import ReplicaController
from ome_operator.core.instances.gangs import render_pod_group
from ome_operator.models.object_metadata import owner_reference, with_owner
from tests.controller.test_refused_pods import status_writes
from tests.controller.test_replicas import CREATED, KEY, LEADER_WORKER, controller_with
from tests.core.instances.replicas import replica_of, row
from tests.integration.observing import requests
from tests.support.kube_access import apply_object
from tests.support.kube_semantics import POD_GROUPS

GROUP = "chat-engine-0-gang-1"
REFUSED = (
    'podgroups.scheduling.k8s.io "chat-engine-0-gang-1" is forbidden: exceeded quota: groups, '
    "requested: count/podgroups.scheduling.k8s.io=1, used: count/podgroups.scheduling.k8s.io=4, "
    "limited: count/podgroups.scheduling.k8s.io=4"
)


async def gang_controller(kube, api, replica: dict[str, Any]) -> ReplicaController:
    """The controller of ``replica``, placing gangs, on an emulator that serves PodGroups."""
    kube.declare(POD_GROUPS)
    controller = await controller_with(kube, api, replica)
    controller.gang_placement = True
    return controller


def writes(kube, since: int = 0) -> list[str]:
    """The pod and PodGroup writes, as ``<METHOD> <resource> <name>``."""
    found = []
    for r in requests(kube, since):
        if r.method.name not in ("POST", "DELETE") or not (
            "/pods" in r.url.path or "/podgroups" in r.url.path
        ):
            continue
        resource = "podgroups" if "/podgroups" in r.url.path else "pods"
        name = (
            r.data["metadata"]["name"] if r.method.name == "POST" else r.url.path.rsplit("/", 1)[-1]
        )
        found.append(f"{r.method.name} {resource} {name}")
    return found


def stored(kube, plural: str) -> list[dict[str, Any]]:
    return [
        dict(versions.raw)
        for (resource, _, _), versions in kube.objects.items()
        if resource.plural == plural and not versions.deleted
    ]


async def test_the_group_is_created_owned_by_the_replica_before_the_pods_that_join_it(kube, api):
    controller = await gang_controller(kube, api, replica_of(workers=2))
    assert await controller.process(KEY) == CREATED
    assert writes(kube) == [f"POST podgroups {GROUP}", *(f"POST pods {p}" for p in LEADER_WORKER)]
    (group,) = stored(kube, "podgroups")
    replica = controller.replicas.named(*KEY)
    assert (group["metadata"]["ownerReferences"], group["spec"]) == (
        [owner_reference(replica)],
        {"schedulingPolicy": {"gang": {"minCount": 3}}},
    )
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in stored(kube, "pods")} == {GROUP}


async def test_a_refused_group_creates_no_pod_and_the_status_names_the_answer(kube, api):
    kube.inject_fault(
        403, action="create", resource="scheduling.k8s.io/v1alpha2/podgroups", message=REFUSED
    )
    controller = await gang_controller(kube, api, replica_of(workers=2))
    await controller.process(KEY)
    assert writes(kube) == [f"POST podgroups {GROUP}"]
    (told,) = status_writes(kube)
    assert [(c["reason"], c["message"]) for c in told["conditions"]] == [
        ("PodsRefused", f"pods cannot be created: {REFUSED}")
    ]


async def test_the_group_of_an_old_incarnation_is_deleted_only_while_it_is_that_group(kube, api):
    replica = replica_of(workers=2, rows=[row(0, "Failed")])
    controller = await gang_controller(kube, api, replica)
    held = controller.replicas.named(*KEY)
    old = await apply_object(kube, with_owner(render_pod_group(held, 0, 1, 3), held))
    controller.pod_groups._change(old, deleted=False, report=False)
    mark = len(list(kube))
    assert await controller.process(KEY) == CREATED
    assert writes(kube, mark) == [
        "POST podgroups chat-engine-0-gang-2",
        *(f"POST pods {p}" for p in LEADER_WORKER),
        f"DELETE podgroups {GROUP}",
    ]
    (delete,) = [r for r in requests(kube) if r.method.name == "DELETE"]
    assert delete.data == {"preconditions": {"uid": old["metadata"]["uid"]}}


async def test_a_change_of_a_group_brings_a_pass_of_its_replica(kube, api):
    controller = await gang_controller(kube, api, replica_of(workers=2))
    held = controller.replicas.named(*KEY)
    group = with_owner(render_pod_group(held, 0, 1, 3), held)
    group["metadata"]["uid"] = "uid-group"
    controller.runtime.following = False  # as once started: changes queue passes
    assert controller.queue.idle()
    controller.pod_groups._change(group, deleted=False, report=True)
    assert not controller.queue.idle()
