"""The objects the operator writes are watched by its own informers (S9): a change or deletion
re-queues the owner, a broken watch loses nothing, a failed list is logged and retried, and a
restarted operator finds its workloads before it reconciles (no write, no conflict)."""

from __future__ import annotations

import logging

import kmock
import pytest

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import (
    DEPLOYMENT,
    HPA,
    MODEL_STORAGE,
    PDB,
    RUNNER,
    SERVICE,
    delete,
    requests,
    seed,
    settle,
    status_of,
    stored,
    writes,
)
from tests.support.kube_access import apply_object, eventually
from tests.support.operator_run import running_operator

GONE = {
    "type": "ERROR",
    "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410},
}


async def converged(kube, operator, name: str = "chat", namespace: str = "default") -> None:
    runtime = runtime_manifest("vllm", engineConfig={"runner": RUNNER})
    await seed(kube, operator, runtime, model_manifest("llama", storage=MODEL_STORAGE))
    await apply_object(kube, isvc_manifest(name, namespace=namespace))
    await eventually(lambda: status_of(kube, name, namespace).get("components"))
    await settle(kube, operator)


def lists(kube, plural: str) -> int:
    return sum(
        1
        for r in requests(kube)
        if r.action == kmock.action.LIST and r.resource is not None and r.resource.plural == plural
    )


@pytest.mark.parametrize(
    ("resource", "name"),
    [
        pytest.param(DEPLOYMENT, "chat-engine", id="a deleted Deployment is created again"),
        pytest.param(SERVICE, "chat-engine", id="a deleted component Service is created again"),
        pytest.param(SERVICE, "chat", id="a deleted entry Service is created again"),
        pytest.param(PDB, "chat-engine", id="a deleted PodDisruptionBudget is created again"),
        pytest.param(HPA, "chat-engine", id="a deleted HorizontalPodAutoscaler is created again"),
    ],
)
async def test_a_deleted_object_is_created_again(kube, operator, resource, name):
    await converged(kube, operator)
    before = stored(kube, resource, "default", name)

    await delete(kube, resource, "default", name)
    again = await eventually(lambda: stored(kube, resource, "default", name))

    assert again["metadata"]["uid"] != before["metadata"]["uid"]
    assert again["spec"] == before["spec"]


async def test_a_restarted_operator_finds_its_workloads_and_writes_nothing(kube, kubeconfig):
    async with running_operator() as first:
        await converged(kube, first)
    mark = len(requests(kube))
    # The Deployments are listed late: no reconcile may run before they are.
    kube.inject_fault(500, action="list", resource=DEPLOYMENT, times=4)

    async with running_operator() as second:
        reconciled = "ome_inferenceservice_reconcile_total"
        await eventually(lambda: second.metric(reconciled, result="success"), timeout=10)
        await settle(kube, second)

    assert lists(kube, "deployments") == 5 + 1  # the failures, the listing; the first run's
    assert writes(kube, mark) == []


@pytest.fixture(
    params=[
        pytest.param(((b"",), 1), id="the Deployment watch ends"),
        pytest.param(((b"", GONE), 2), id="the Deployment watch expires (410 Gone)"),
    ]
)
def broken_deployment_watch(kube, request) -> int:
    """The operator's first Deployment watch breaks at once; how many lists follow."""
    script, lists = request.param
    kube[kmock.action.WATCH, kmock.resource(DEPLOYMENT)][:1] << script
    return lists


@pytest.mark.kmock(strict=False)
async def test_a_broken_watch_still_sees_every_deletion(kube, broken_deployment_watch, operator):
    await converged(kube, operator)
    await delete(kube, DEPLOYMENT, "default", "chat-engine")
    await eventually(lambda: stored(kube, DEPLOYMENT, "default", "chat-engine"))

    assert lists(kube, "deployments") == broken_deployment_watch


@pytest.fixture
def failing_deployment_list(kube) -> None:
    kube.inject_fault(500, action="list", resource=DEPLOYMENT, times=2)


async def test_a_failed_list_is_logged_and_retried_before_any_reconcile(
    kube, failing_deployment_list, operator, caplog
):
    caplog.set_level(logging.WARNING, logger="ome_operator.watch")
    await converged(kube, operator)

    failures = [
        (r.levelname, r.message, r.path, r.error, r.status)
        for r in caplog.records
        if r.name == "ome_operator.watch"
    ]
    assert (
        failures
        == [
            (
                "WARNING",
                "Watch failed",
                "/apis/apps/v1/deployments",
                "injected fault: HTTP 500",
                500,
            )
        ]
        * 2
    )
    created = [w for w in writes(kube) if w.startswith("POST /apis/apps/v1/")]
    assert created == ["POST /apis/apps/v1/namespaces/default/deployments"]


async def test_a_namespaced_operator_lists_and_watches_only_its_namespaces(kube, kubeconfig):
    for namespace in ("team-a", "team-b"):  # the emulator has a namespace once it holds objects
        marker = {"apiVersion": "v1", "kind": "ConfigMap"}
        await apply_object(kube, {**marker, "metadata": {"name": "m", "namespace": namespace}})
    async with running_operator(namespaces=("team-a",)) as operator:
        await converged(kube, operator, namespace="team-a")
        await apply_object(kube, isvc_manifest("other", namespace="team-b"))
        await settle(kube, operator)

    written = {"deployments", "services", "poddisruptionbudgets", "inferencereplicas"}
    paths = {
        r.url.path
        for r in requests(kube)
        if r.action in (kmock.action.LIST, kmock.action.WATCH)
        and r.resource is not None
        and r.resource.plural in written
    }
    assert paths == {
        f"/{prefix}/namespaces/team-a/{plural}"
        for prefix, plural in (
            ("apis/apps/v1", "deployments"),
            ("api/v1", "services"),
            ("apis/policy/v1", "poddisruptionbudgets"),
            ("apis/ome.io/v1beta1", "inferencereplicas"),
        )
    }
    assert stored(kube, DEPLOYMENT, "team-a", "chat-engine")
    assert stored(kube, DEPLOYMENT, "team-b", "other-engine") is None
