"""What re-queues an InferenceService (S9), and what a re-queue with nothing new costs: no write,
no list (reads come from the watch-fed indexes)."""

from __future__ import annotations

import logging
from typing import Any

import kmock
import pytest

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import (
    BM,
    CBM,
    CSR,
    DEPLOYMENT,
    ISVC,
    MODEL_STORAGE,
    PDB,
    RUNNER,
    SERVICE,
    SR,
    patch,
    record_passes,
    requests,
    seed,
    settle,
    status_of,
    status_writes,
    stored,
    touch,
    writes,
)
from tests.support.kube_access import apply_object, eventually

SHARED = runtime_manifest("shared", engineConfig={"runner": {**RUNNER, "image": "shared:1"}})
LOCAL = runtime_manifest(
    "local",
    cluster=False,
    namespace="team-a",
    engineConfig={"runner": {**RUNNER, "image": "local:1"}},
)
LLAMA = model_manifest("llama", storage=MODEL_STORAGE)
#: (namespace, name) of the InferenceServices, and the runtime each one runs.
FLEET = {
    ("team-a", "chat"): "local",  # auto-selected: a namespace runtime first
    ("team-a", "pinned"): "shared",  # named: a change of "local" does not concern it
    ("team-b", "chat"): "shared",
}


def image(kube, namespace: str, name: str) -> str:
    deployment = stored(kube, DEPLOYMENT, namespace, f"{name}-engine")
    return deployment["spec"]["template"]["spec"]["containers"][0]["image"]


def model_path(kube, namespace: str, name: str) -> str:
    deployment = stored(kube, DEPLOYMENT, namespace, f"{name}-engine")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    return next(e["value"] for e in env if e["name"] == "MODEL_PATH")


async def converge(kube, operator, *seeded: dict[str, Any]) -> None:
    """Seed the runtimes and model, create the fleet, and wait until it is reconciled."""
    await seed(kube, operator, *seeded)
    for (namespace, name), runtime in FLEET.items():
        named = {"runtime": {"name": runtime}} if name == "pinned" else {}
        await apply_object(kube, isvc_manifest(name, namespace=namespace, **named))
    for namespace, name in FLEET:
        await eventually(lambda n=name, ns=namespace: status_of(kube, n, ns).get("runtime"))
    await settle(kube, operator)
    for (namespace, name), runtime in FLEET.items():
        assert image(kube, namespace, name) == f"{runtime}:1"


@pytest.mark.parametrize(
    ("resource", "namespace", "runtime", "requeued", "images"),
    [
        pytest.param(
            SR,
            "team-a",
            "local",
            {("team-a", "chat")},
            {
                ("team-a", "chat"): "local:2",
                ("team-a", "pinned"): "shared:1",
                ("team-b", "chat"): "shared:1",
            },
            id="a ServingRuntime change re-queues the InferenceServices of its namespace it can "
            "be the runtime of",
        ),
        pytest.param(
            CSR,
            None,
            "shared",
            {("team-a", "chat"), ("team-a", "pinned"), ("team-b", "chat")},
            {
                ("team-a", "chat"): "local:1",
                ("team-a", "pinned"): "shared:2",
                ("team-b", "chat"): "shared:2",
            },
            id="a ClusterServingRuntime change re-queues every InferenceService it can be the "
            "runtime of, in every namespace",
        ),
    ],
)
async def test_a_runtime_change_requeues_and_rolls_out(
    kube, operator, monkeypatch, resource, namespace, runtime, requeued, images
):
    await converge(kube, operator, SHARED, LOCAL, LLAMA)
    passes = record_passes(operator, monkeypatch)

    runner = {**RUNNER, "image": f"{runtime}:2"}
    await patch(kube, resource, namespace, runtime, {"spec": {"engineConfig": {"runner": runner}}})
    await eventually(lambda: requeued <= set(passes))
    await settle(kube, operator)

    assert set(passes) == requeued
    assert {key: image(kube, *key) for key in FLEET} == images


async def test_a_model_change_alone_requeues_nothing(kube, operator, monkeypatch):
    await converge(kube, operator, SHARED, LOCAL, LLAMA)
    passes = record_passes(operator, monkeypatch)

    moved = {**MODEL_STORAGE, "path": "/models/llama-v2"}
    await seed(kube, operator, model_manifest("llama", storage=moved))
    await settle(kube, operator)

    assert passes == []
    assert model_path(kube, "team-b", "chat") == "/models/llama"

    await patch(kube, ISVC, "team-b", "chat", {"metadata": {"labels": {"tier": "gold"}}})
    await eventually(lambda: model_path(kube, "team-b", "chat") == "/models/llama-v2")
    assert model_path(kube, "team-a", "chat") == "/models/llama"  # still waits for a change


@pytest.mark.parametrize(
    ("trigger", "requeued", "own_writes"),
    [
        pytest.param(
            "requeue", set(FLEET), [], id="a re-queue of every InferenceService writes nothing"
        ),
        pytest.param(
            "runtime label",
            set(),
            ["PATCH /apis/ome.io/v1beta1/clusterservingruntimes/shared"],
            id="a runtime label change re-queues nothing and writes nothing",
        ),
        pytest.param(
            "status only",
            set(),
            ["PATCH /apis/ome.io/v1beta1/namespaces/team-b/inferenceservices/chat/status"],
            id="a status-only change of an InferenceService re-queues and writes nothing",
        ),
    ],
)
async def test_a_converged_fleet_is_not_written_again(
    kube, operator, monkeypatch, trigger, requeued, own_writes
):
    await converge(kube, operator, SHARED, LOCAL, LLAMA)
    passes = record_passes(operator, monkeypatch)
    mark = len(requests(kube))

    if trigger == "requeue":
        operator.controller.requeue()
    elif trigger == "runtime label":
        await touch(kube, CSR, None, "shared")
    else:
        await patch(kube, ISVC, "team-b", "chat", {"status": {"note": "x"}}, subresource="status")
        await eventually(lambda: operator.controller.isvcs["team-b", "chat"]["status"].get("note"))
    await eventually(lambda: set(passes) == requeued)
    await settle(kube, operator)

    assert set(passes) == requeued
    assert writes(kube, mark) == own_writes  # the test's own write, and nothing else


async def test_reconciles_read_runtimes_and_models_from_the_indexes_not_the_api(kube, operator):
    await converge(kube, operator, SHARED, LOCAL, LLAMA)
    read = {kmock.resource(r).plural for r in (SR, CSR, BM, CBM)}
    mark = len(requests(kube))

    for index in range(3):
        await apply_object(kube, isvc_manifest(f"more-{index}", namespace="team-b"))
    for index in range(3):
        await eventually(lambda i=index: status_of(kube, f"more-{i}", "team-b").get("runtime"))
    operator.controller.requeue()
    await settle(kube, operator)

    lookups = [
        f"{r.method} {r.url.path}"
        for r in requests(kube, mark)
        if r.resource is not None and r.resource.plural in read and r.action != kmock.action.WATCH
    ]
    assert lookups == []


async def test_a_new_service_gets_each_object_and_its_status_written_once(kube, operator):
    await seed(kube, operator, SHARED, LLAMA)
    await apply_object(kube, isvc_manifest("chat", namespace="team-b"))
    await eventually(lambda: status_of(kube, "chat", "team-b"))
    await settle(kube, operator)

    versions = {
        (resource, name): len(kube.objects[kmock.resource(resource), "team-b", name].history)
        for resource, name in [
            (DEPLOYMENT, "chat-engine"),
            (SERVICE, "chat-engine"),
            (PDB, "chat-engine"),
            (SERVICE, "chat"),
            (ISVC, "chat"),
        ]
    }
    assert versions == {
        (DEPLOYMENT, "chat-engine"): 1,  # created, never patched
        (SERVICE, "chat-engine"): 1,
        (PDB, "chat-engine"): 1,
        (SERVICE, "chat"): 1,
        (ISVC, "chat"): 2,  # created by the test, its status written once
    }
    assert status_writes(kube, "chat") == 1  # not even a repeated write of the same status


async def test_a_pass_that_decides_as_the_one_before_logs_no_selection(
    kube, operator, monkeypatch, caplog
):
    await converge(kube, operator, SHARED, LOCAL, LLAMA)
    caplog.set_level(logging.INFO, logger="ome_operator.controller")
    caplog.clear()
    passes = record_passes(operator, monkeypatch)

    operator.controller.requeue()
    await eventually(lambda: set(passes) == set(FLEET))
    await settle(kube, operator)
    repeated = _selections(caplog)
    await patch(kube, SR, "team-a", "local", {"spec": {"disabled": True}})
    await eventually(lambda: image(kube, "team-a", "chat") == "shared:1")
    await settle(kube, operator)

    assert repeated == []
    assert _selections(caplog) == [("team-a", "chat", "shared")]  # a new decision, logged once


def _selections(caplog) -> list[tuple[str, str, str]]:
    return [
        (r.namespace, r.inferenceService, r.runtime)
        for r in caplog.records
        if r.name == "ome_operator.controller" and r.getMessage() == "Selected runtime"
    ]
