"""No API answer and no object ends the operator (issue 8): every watch is the operator's own,
so a 410 answered to a watch request relists that kind, and an object nested deeper than
anything can parse is set aside while every other object is reconciled."""

from __future__ import annotations

import logging
from typing import Any

import kmock
import pytest

from tests.builders import isvc_manifest, model_manifest, nested, runtime_manifest
from tests.integration.observing import (
    BM,
    CBM,
    CSR,
    DEPLOYMENT,
    ISVC,
    MODEL_STORAGE,
    RUNNER,
    SR,
    event_summary,
    events_for,
    requests,
    seed,
    settle,
    status_of,
    stored,
)
from tests.support.kube_access import apply_object, eventually

LLAMA = model_manifest("llama", storage=MODEL_STORAGE)
VLLM = runtime_manifest("vllm", engineConfig={"runner": RUNNER})
ACCELERATORS = "ome.io/v1beta1/acceleratorclasses"


def lists(kube, resource: str) -> int:
    wanted = kmock.resource(resource)
    return sum(
        1 for r in requests(kube) if r.action == kmock.action.LIST and wanted.check(r.resource)
    )


@pytest.fixture(
    params=[
        pytest.param(ISVC, id="InferenceServices"),
        pytest.param(SR, id="ServingRuntimes"),
        pytest.param(CSR, id="ClusterServingRuntimes"),
        pytest.param(BM, id="BaseModels"),
        pytest.param(CBM, id="ClusterBaseModels"),
        pytest.param(ACCELERATORS, id="AcceleratorClasses"),
    ]
)
def gone_watches(kube, request) -> str:
    """The first three watch requests of one kind are answered 410 Gone (not in a stream)."""
    kube.inject_fault(410, action="watch", resource=request.param, times=3)
    return request.param


async def test_a_watch_request_answered_410_relists_and_the_operator_carries_on(
    kube, gone_watches, operator
):
    await eventually(lambda: lists(kube, gone_watches) == 4)
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, isvc_manifest("chat"))

    runtime = await eventually(lambda: status_of(kube, "chat").get("runtime"))
    assert runtime["name"] == "vllm"
    assert stored(kube, DEPLOYMENT, "default", "chat-engine") is not None
    assert not any(task.done() for task in operator.controller.runtime.tasks)


def deep_runtime(levels: int) -> dict[str, Any]:
    runner = {**RUNNER, "x-config": nested(levels)}
    return runtime_manifest("deep", engineConfig={"runner": runner})


def deep_model(levels: int) -> dict[str, Any]:
    return model_manifest("deep", storage=MODEL_STORAGE, x=nested(levels))


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        pytest.param(
            deep_runtime(5_000),
            'ClusterServingRuntime "deep" is invalid: spec.engineConfig.runner["x-config"]'
            + ".a" * 96,
            id="a ClusterServingRuntime",
        ),
        pytest.param(
            deep_model(5_000),
            'ClusterBaseModel "deep" is invalid: spec.x' + ".a" * 98,
            id="a ClusterBaseModel",
        ),
    ],
)
async def test_an_object_nested_beyond_any_parser_is_set_aside_and_the_rest_goes_on(
    kube, operator, caplog, manifest, problem
):
    caplog.set_level(logging.ERROR, logger="ome_operator.controller")
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, manifest)
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: status_of(kube, "chat").get("runtime"))
    await eventually(lambda: events_for(kube, "deep"))
    await settle(kube, operator)

    assert [event_summary(e) for e in events_for(kube, "deep")] == [
        {
            "type": "Warning",
            "reason": "MalformedResource",
            "message": f"{problem}: nested more than 100 levels deep (the limit is 100); "
            "it is ignored until it changes",
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": manifest["kind"],
                "name": "deep",
            },
            "source": {"component": "v1beta1Controllers"},
        }
    ]
    assert status_of(kube, "chat")["runtime"]["name"] == "vllm"
    assert [r.getMessage() for r in caplog.records] == [
        "Ignoring a malformed object until it changes"
    ]
