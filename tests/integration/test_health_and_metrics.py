"""The running operator's liveness endpoint and its metrics (S10) after real reconciles."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import MODEL_STORAGE, RUNNER, seed, settle, status_of
from tests.support.kube_access import apply_object, eventually

LLAMA = model_manifest("llama", storage=MODEL_STORAGE)
RACE = "Object exists but is not in the watch cache yet; retrying"


async def test_liveness_answers_with_the_queue_probe(kube, operator):
    async with aiohttp.ClientSession() as session, session.get(operator.liveness_url) as answer:
        assert (answer.status, await answer.json()) == (200, {"queued": 0})


@pytest.mark.parametrize(
    ("runtime", "isvcs", "selections", "modes"),
    [
        pytest.param(
            runtime_manifest("vllm", engineConfig={"runner": RUNNER}),
            [
                isvc_manifest("a"),
                isvc_manifest("b"),
                isvc_manifest("c", deploymentMode="OMENative"),
            ],
            {"cluster": True, "namespaced": False},
            {("engine", "RawDeployment"): 2, ("engine", "OMENative"): 1},
            id="auto-selected cluster runtimes are counted by scope and mode",
        ),
        pytest.param(
            runtime_manifest("vllm", cluster=False, engineConfig={"runner": RUNNER}),
            [isvc_manifest("a", router={"runner": RUNNER})],
            {"cluster": False, "namespaced": True},
            {("engine", "RawDeployment"): 1, ("router", "RawDeployment"): 1},
            id="a namespace runtime is counted as namespaced and every component by mode",
        ),
    ],
)
async def test_reconciles_are_counted(kube, operator, caplog, runtime, isvcs, selections, modes):
    caplog.set_level(logging.INFO, logger="ome_operator")
    await seed(kube, operator, runtime, LLAMA)
    for isvc in isvcs:
        await apply_object(kube, isvc)
    for isvc in isvcs:
        name = isvc["metadata"]["name"]
        await eventually(lambda n=name: status_of(kube, n).get("runtime"))
    await settle(kube, operator)

    successes = operator.metric("ome_inferenceservice_reconcile_total", result="success")
    assert successes >= len(isvcs)
    # The only failed passes: a pass that ran before the watch delivered what the last one
    # created, and was refused it (409 AlreadyExists; retried). Rare, and only under load.
    races = sum(r.getMessage() == RACE for r in caplog.records)
    assert operator.metric("ome_inferenceservice_reconcile_total", result="error") == races
    assert operator.metric("ome_inferenceservice_reconcile_total", result="parked") == 0
    # Every pass auto-selected once, in the runtime's scope.
    successes += races
    selected = {
        scope: operator.metric(
            "ome_runtime_selection_total", source="controller", outcome="selected", scope=scope
        )
        for scope in ("cluster", "namespaced")
    }
    assert selected == {scope: successes if hit else 0 for scope, hit in selections.items()}
    gauges = {
        (component, mode): operator.metric("ome_components_by_mode", component=component, mode=mode)
        for component in ("engine", "decoder", "router")
        for mode in ("RawDeployment", "OMENative", "MultiNode")
    }
    assert {key: value for key, value in gauges.items() if value} == modes
    assert operator.metric("ome_runtime_unresolved_inferenceservices") == 0
