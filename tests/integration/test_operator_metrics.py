"""The running operator counts what the API edge and the queues do, through the callbacks its
start-up wires (the API edge itself imports no metrics)."""

from __future__ import annotations

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import MODEL_STORAGE, RUNNER, seed, status_of
from tests.support.kube_access import apply_object, eventually


async def test_requests_watches_and_queue_waits_are_counted(kube, operator):
    runtime = runtime_manifest("vllm", engineConfig={"runner": RUNNER})
    await seed(kube, operator, runtime, model_manifest("llama", storage=MODEL_STORAGE))
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: status_of(kube, "chat").get("components"))
    await operator.settled()
    counted = {
        "status patches": operator.metric("ome_api_requests_total", verb="PATCH", code="200"),
        "lists": operator.metric("ome_api_requests_total", verb="GET", code="200"),
        "queued": operator.metric(
            "ome_workqueue_queue_duration_seconds_count", queue="inferenceservice"
        ),
    }
    assert {k: v > 0 for k, v in counted.items()} == dict.fromkeys(counted, True)
    assert operator.metric("ome_workqueue_depth", queue="inferenceservice") == 0
