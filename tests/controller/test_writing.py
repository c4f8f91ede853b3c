"""The plan writer's pieces: the echo tracker (which watch events only echo its own writes),
and the read of the owner before an adoption."""

from __future__ import annotations

import asyncio

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from ome_operator.cluster.api import KubeApi
from ome_operator.controller.owned import OwnedObjects
from ome_operator.controller.writing import Echoes, OwnerGoing, PlanWriter
from ome_operator.core.plans import Outcome, ReconcilePlan
from tests.builders import isvc_manifest
from tests.support.kube_access import apply_object


def deployment(version: str | None) -> dict:
    meta = {"name": "chat-engine", "namespace": "default", "resourceVersion": version}
    return {"kind": "Deployment", "metadata": meta}


IDENTITY = ("Deployment", "default", "chat-engine")


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(
            [("finished", "7"), ("event", "7", False)], [False, True], id="an echo is an echo"
        ),
        pytest.param(
            [("finished", "7"), ("event", "8", False)], [False, False], id="a later version is not"
        ),
        pytest.param(
            [("finished", "7"), ("event", "7", True)], [False, False], id="a deletion never is"
        ),
        pytest.param(
            [("finished", "7"), ("event", "7", True), ("event", "7", False)],
            [False, False, False],
            id="after a deletion nothing is remembered to echo",
        ),
        pytest.param(
            [("started",), ("event", "6", False), ("finished", "7")],
            [None, True, True],
            id="a change seen during a write is decided by the answer: someone else's",
        ),
        pytest.param(
            [("started",), ("event", "7", False), ("finished", "7")],
            [None, True, False],
            id="an echo seen before the answer is dropped",
        ),
        pytest.param(
            [("started",), ("event", "6", False), ("finished", None)],
            [None, True, True],
            id="a failed write re-queues for what was seen meanwhile",
        ),
    ],
)
def test_echoes_tell_own_writes_from_other_changes(steps, expected) -> None:
    echoes, told = Echoes(), []
    for step in steps:
        if step[0] == "started":
            told.append(echoes.started(IDENTITY))
        elif step[0] == "finished":
            told.append(echoes.finished(IDENTITY, step[1]))
        else:
            told.append(echoes.is_echo(deployment(step[1]), deleted=step[2]))

    assert told == expected


@pytest.fixture
def api(kubeconfig: str) -> KubeApi:
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config(kubeconfig, client_configuration=configuration)
    return KubeApi(k8s_client.ApiClient(configuration))


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
    writer = PlanWriter(lambda: api, OwnedObjects(), lambda *key: None)
    writer.loop = asyncio.get_running_loop()
    plan = ReconcilePlan(Outcome.SUCCESS, apply=(desired,))

    with pytest.raises(OwnerGoing):  # the cached body shows no deletion yet
        await asyncio.to_thread(
            writer.write, ("default", "chat"), stored, {("Deployment", "chat-engine"): orphan}, plan
        )
