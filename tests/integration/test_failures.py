"""Failures the real operator survives: component failures (S6), bad input, a runtime deleted
under a running InferenceService (S8.2), API errors and broken watches (S9)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import kmock
import pytest

from tests.builders import entry, isvc_manifest, model_manifest, nested, runtime_manifest
from tests.integration.observing import (
    CSR,
    DEPLOYMENT,
    ISVC,
    MODEL_STORAGE,
    RUNNER,
    condition_of,
    delete,
    event_summary,
    events_for,
    make_available,
    owned_objects,
    patch,
    requests,
    seed,
    settle,
    status_of,
    status_writes,
    stored,
    without_times,
    writes,
)
from tests.support.kube_access import apply_object, eventually

LLAMA = model_manifest("llama", storage=MODEL_STORAGE)
VLLM = runtime_manifest("vllm", engineConfig={"runner": RUNNER})
CONTROLLER = "ome_operator.controller"
FIELDS = ("component", "kind", "namespace", "resource", "inferenceService", "error", "status")


def records(caplog: pytest.LogCaptureFixture, logger: str, message: str) -> list[dict[str, Any]]:
    """The level and structured fields of every record of ``logger`` with this message."""
    return [
        {"level": r.levelname, **{k: getattr(r, k) for k in FIELDS if hasattr(r, k)}}
        for r in caplog.records
        if r.name == logger and r.getMessage() == message
    ]


def engine_objects(name: str) -> set[tuple[str, str]]:
    """The objects of an engine with the default bounds (1 to 3: a HorizontalPodAutoscaler)."""
    return {
        ("Deployment", f"{name}-engine"),
        ("Service", f"{name}-engine"),
        ("PodDisruptionBudget", f"{name}-engine"),
        ("HorizontalPodAutoscaler", f"{name}-engine"),
    }


def engine_image(kube) -> str:
    deployment = stored(kube, DEPLOYMENT, "default", "chat-engine")
    return deployment["spec"]["template"]["spec"]["containers"][0]["image"]


VIRTUAL = {"annotations": {"ome.io/deploymentMode": "VirtualDeployment"}}


@pytest.mark.parametrize(
    ("router_config", "spec", "component"),
    [
        pytest.param(
            {"annotations": {"ome.io/deploymentMode": "MultiNode"}},
            {"router": {}},
            "router",
            id="a runtime routerConfig MultiNode fails the router every pass",
        ),
        pytest.param(
            {},
            {"router": VIRTUAL},
            "router",
            id="a VirtualDeployment router annotation fails the router every pass",
        ),
        pytest.param(
            {},
            {"decoder": VIRTUAL, "router": {}},
            "decoder",
            id="a failing decoder stops the router after it too",
        ),
    ],
)
async def test_an_invalid_component_mode_fails_that_component_and_later_ones_only(
    kube, operator, caplog, router_config, spec, component
):
    caplog.set_level(logging.ERROR, logger=CONTROLLER)
    runtime = runtime_manifest(
        "vllm",
        engineConfig={"runner": RUNNER},
        decoderConfig={"runner": RUNNER},
        routerConfig={"runner": RUNNER, **router_config},
    )
    await seed(kube, operator, runtime, LLAMA)
    await apply_object(kube, isvc_manifest("chat", **spec))

    def failures() -> list[dict[str, Any]]:
        return records(caplog, CONTROLLER, "Failed to reconcile component")

    await eventually(lambda: len(failures()) >= 3)  # retried with backoff
    found = failures()
    # A pass counts its failure after logging it: the passes before the last are counted.
    errors = "ome_component_reconcile_errors_total"
    counted = operator.metric(errors, component=component, reason="invalid_deployment_mode")
    assert counted >= len(found) - 1

    assert found == [
        {
            "level": "ERROR",
            "component": component,
            "namespace": "default",
            "inferenceService": "chat",
            "error": f"invalid deployment mode for {component}",
        }
    ] * len(found)
    assert owned_objects(kube) == engine_objects("chat")  # nothing later, no entry Service
    # No silent stop: the component's condition and Ready say why, and one event, however
    # many passes fail the same way.
    told = f"{component} component: invalid deployment mode for {component}"
    failed = {"status": "False", "reason": "InvalidDeploymentMode", "message": told}
    kinds = sorted([f"{component.capitalize()}Ready", "Ready"])
    assert [event_summary(e) for e in events_for(kube, "chat")] == [
        {
            "type": "Warning",
            "reason": "InvalidDeploymentMode",
            "message": told,
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "namespace": "default",
                "name": "chat",
            },
            "source": {"component": "v1beta1Controllers"},
        }
    ]
    assert status_writes(kube, "chat") == 1
    status = status_of(kube, "chat")
    assert (list(status), without_times(status["conditions"])) == (
        ["conditions"],
        [{"type": kind, **failed} for kind in kinds],
    )

    runner = {**RUNNER, "image": "vllm:2"}
    await patch(kube, CSR, None, "vllm", {"spec": {"engineConfig": {"runner": runner}}})
    await eventually(lambda: engine_image(kube) == "vllm:2")  # the engine is still reconciled
    await settle(kube, operator)
    assert owned_objects(kube) == engine_objects("chat")
    assert status_writes(kube, "chat") == 1  # the same failure: nothing new to write
    assert len(events_for(kube, "chat")) == 1


@pytest.mark.parametrize(
    ("engine", "error"),
    [
        pytest.param(
            {"minReplicas": "two"},
            'InferenceService "default/bad" is invalid: spec.engine.minReplicas: '
            'must be an integer (got "two")',
            id="a string minReplicas is reported with its field",
        ),
        pytest.param(
            {"runner": "vllm:1"},
            'InferenceService "default/bad" is invalid: spec.engine.runner: must be an object '
            '(got "vllm:1")',
            id="a string runner is reported with its field",
        ),
        pytest.param(
            {"annotations": {"ome.io/deploymentMode": 1}},
            'InferenceService "default/bad" is invalid: '
            'spec.engine.annotations["ome.io/deploymentMode"]: '
            "must be a string (got 1)",
            id="a number annotation is reported with its key",
        ),
        pytest.param(
            {"runner": {**RUNNER, "x-config": nested(5_000)}},
            'InferenceService "default/bad" is invalid: spec.engine.runner["x-config"]'
            + ".a" * 96
            + ": nested more than 100 levels deep (the limit is 100)",
            id="an object nested beyond any parser is reported with the path where it goes over",
        ),
    ],
)
async def test_a_malformed_inference_service_is_told_and_others_still_reconcile(
    kube, operator, caplog, engine, error
):
    caplog.set_level(logging.ERROR, logger=CONTROLLER)
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, isvc_manifest("bad", engine=engine))
    await apply_object(kube, isvc_manifest("good"))
    await eventually(lambda: records(caplog, CONTROLLER, "Invalid InferenceService"))
    await eventually(lambda: status_of(kube, "good"))
    await settle(kube, operator)

    assert records(caplog, CONTROLLER, "Invalid InferenceService") == [
        {"level": "ERROR", "namespace": "default", "inferenceService": "bad", "error": error}
    ]
    assert owned_objects(kube) == {*engine_objects("good"), ("Service", "good")}
    assert without_times(status_of(kube, "bad")["conditions"]) == [
        {"type": "Ready", "status": "False", "reason": "ReconcileFailed", "message": error}
    ]
    assert [event_summary(e) for e in events_for(kube, "bad")] == [
        {
            "type": "Warning",
            "reason": "ReconcileFailed",
            "message": error,
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "namespace": "default",
                "name": "bad",
            },
            "source": {"component": "v1beta1Controllers"},
        }
    ]
    assert not any(task.done() for task in operator.controller.runtime.tasks)  # no worker died

    await patch(
        kube,
        ISVC,
        "default",
        "bad",
        {"spec": {"engine": {"minReplicas": 2, "runner": None, "annotations": None}}},
    )
    await eventually(lambda: stored(kube, DEPLOYMENT, "default", "bad-engine"))
    assert stored(kube, DEPLOYMENT, "default", "bad-engine")["spec"]["replicas"] == 2


async def test_a_malformed_runtime_is_ignored_until_it_is_fixed(kube, operator, caplog):
    caplog.set_level(logging.ERROR, logger=CONTROLLER)
    broken = runtime_manifest("broken", engineConfig={"runner": RUNNER})
    broken["spec"]["supportedModelFormats"] = "safetensors"
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, broken)
    await apply_object(kube, isvc_manifest("named", runtime={"name": "broken"}))
    await apply_object(kube, isvc_manifest("auto"))
    await eventually(lambda: status_of(kube, "named") and status_of(kube, "auto"))
    await settle(kube, operator)

    problem = (
        'ClusterServingRuntime "broken" is invalid: '
        'spec.supportedModelFormats: must be a list (got "safetensors")'
    )
    assert records(caplog, CONTROLLER, "Ignoring a malformed object until it changes") == [
        {
            "level": "ERROR",
            "kind": "ClusterServingRuntime",
            "namespace": None,
            "resource": "broken",
            "error": problem,
        }
    ]
    assert [event_summary(e) for e in events_for(kube, "broken")] == [
        {
            "type": "Warning",
            "reason": "MalformedResource",
            "message": f"{problem}; it is ignored until it changes",
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "ClusterServingRuntime",
                "name": "broken",
            },
            "source": {"component": "v1beta1Controllers"},
        }
    ]
    assert without_times([condition_of(kube, "named", "RuntimeReady")]) == [
        {
            "type": "RuntimeReady",
            "status": "False",
            "reason": "RuntimeNotFound",
            "message": "runtime broken not found in namespace default or at cluster scope",
            "severity": "Info",
        }
    ]
    assert status_of(kube, "auto")["runtime"] == {
        "kind": "ClusterServingRuntime",
        "name": "vllm",
        "selection": "Selected",
    }

    await patch(kube, CSR, None, "broken", {"spec": {"supportedModelFormats": [entry()]}})
    await eventually(
        lambda: condition_of(kube, "named", "RuntimeReady")["reason"] == "RuntimeResolved"
    )
    assert stored(kube, DEPLOYMENT, "default", "named-engine") is not None


@pytest.mark.parametrize(
    ("runtime", "message"),
    [
        pytest.param(
            {"name": "vllm"},
            "runtime vllm not found in namespace default or at cluster scope",
            id="a deleted named runtime",
        ),
        pytest.param(
            None,
            "no runtime found to support model safetensors with format safetensors in "
            "namespace default",
            id="a deleted auto-selected runtime",
        ),
    ],
)
async def test_a_runtime_deleted_under_a_running_service_keeps_its_workloads(
    kube, operator, runtime, message
):
    await seed(kube, operator, VLLM, LLAMA)
    created = await apply_object(kube, isvc_manifest("chat", runtime=runtime))
    await eventually(lambda: stored(kube, DEPLOYMENT, "default", "chat-engine"))
    await make_available(kube, "default", "chat-engine")
    await eventually(lambda: (condition_of(kube, "chat", "Ready") or {}).get("status") == "True")
    await settle(kube, operator)
    before = status_of(kube, "chat")
    objects = {key: stored(kube, *key) for key in [(DEPLOYMENT, "default", "chat-engine")]}
    mark = len(requests(kube))

    await delete(kube, CSR, None, "vllm")
    await eventually(lambda: condition_of(kube, "chat", "RuntimeReady"))
    await settle(kube, operator)

    after = status_of(kube, "chat")
    *kept, runtime_ready = after.pop("conditions")
    assert without_times([runtime_ready]) == [
        {
            "type": "RuntimeReady",
            "status": "False",
            "reason": "RuntimeNotFound",
            "message": message,
            "severity": "Info",
        }
    ]
    assert kept == before.pop("conditions")  # Ready and the others keep their values
    assert after == before
    assert [event_summary(e) for e in events_for(kube, "chat")] == [
        {
            "type": "Warning",
            "reason": "RuntimeNotFound",
            "message": message,
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "namespace": "default",
                "name": created["metadata"]["name"],
            },
            "source": {"component": "v1beta1Controllers"},
        }
    ]
    assert {key: stored(kube, *key) for key in objects} == objects
    assert owned_objects(kube) == {*engine_objects("chat"), ("Service", "chat")}
    assert [w for w in _writes_but_events(kube, mark)] == [
        "DELETE /apis/ome.io/v1beta1/clusterservingruntimes/vllm",
        "PATCH /apis/ome.io/v1beta1/namespaces/default/inferenceservices/chat/status",
    ]


def _writes_but_events(kube, mark: int) -> list[str]:
    return [
        f"{r.method.name} {r.url.path}"
        for r in requests(kube, mark)
        if r.method != kmock.method.GET and not r.url.path.endswith("/events")
    ]


@pytest.mark.kmock(strict=False)
@pytest.mark.parametrize(
    ("fault", "failed", "error"),
    [
        pytest.param(
            {"action": "create", "resource": DEPLOYMENT},
            "POST /apis/apps/v1/namespaces/default/deployments",
            "cannot write Deployment chat-engine: injected fault: HTTP 500",
            id="a 500 on the Deployment create",
        ),
        pytest.param(
            {"method": "PATCH", "resource": ISVC, "subresource": "status"},
            "PATCH /apis/ome.io/v1beta1/namespaces/default/inferenceservices/chat/status",
            "injected fault: HTTP 500",
            id="a 500 on the status write",
        ),
    ],
)
async def test_an_api_error_is_logged_and_retried_until_written_once(
    kube, operator, caplog, fault, failed, error
):
    caplog.set_level(logging.ERROR, logger=CONTROLLER)
    await seed(kube, operator, VLLM, LLAMA)
    injected = kube.inject_fault(500, **fault)
    mark = len(requests(kube))
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: status_of(kube, "chat"))
    await settle(kube, operator)

    assert injected.hits == 1
    assert records(caplog, CONTROLLER, "Failed to write InferenceService workloads") == [
        {
            "level": "ERROR",
            "namespace": "default",
            "inferenceService": "chat",
            "error": error,
            "status": 500,
        }
    ]
    assert operator.metric("ome_inferenceservice_reconcile_total", result="error") == 1
    sent = [f"{r.method.name} {r.url.path}" for r in requests(kube, mark)]
    assert sent.count(failed) == 2  # the failed request and its retry
    deployment = kube.objects[kmock.resource(DEPLOYMENT), "default", "chat-engine"]
    assert len(deployment.history) == 1  # created exactly once
    assert owned_objects(kube) == {*engine_objects("chat"), ("Service", "chat")}


@pytest.fixture(
    params=[
        pytest.param((b"",), id="the InferenceService watch ends"),
        pytest.param(
            (
                b"",
                {
                    "type": "ERROR",
                    "object": {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "code": 410,
                        "reason": "Expired",
                    },
                },
            ),
            id="the InferenceService watch expires (410 Gone)",
        ),
    ]
)
def broken_isvc_watch(kube, request) -> None:
    """The operator's first InferenceService watch breaks at once (set before it starts)."""
    kube[kmock.action.WATCH, kmock.resource(ISVC)][:1] << request.param


@pytest.mark.kmock(strict=False)
async def test_changes_after_a_broken_watch_are_still_reconciled(kube, broken_isvc_watch, operator):
    def watches() -> int:
        return sum(
            1
            for r in requests(kube)
            if r.action == kmock.action.WATCH
            and r.resource is not None
            and r.resource.plural == "inferenceservices"
        )

    await eventually(lambda: watches() >= 2)
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: stored(kube, DEPLOYMENT, "default", "chat-engine"))

    await patch(kube, ISVC, "default", "chat", {"spec": {"engine": {"minReplicas": 3}}})
    await eventually(
        lambda: stored(kube, DEPLOYMENT, "default", "chat-engine")["spec"]["replicas"] == 3
    )


TOO_LONG = (
    'Deployment.apps "chat-engine" is invalid: metadata.annotations: '
    "Too long: must have at most 262144 bytes"
)


async def test_a_refused_write_is_told_on_the_inference_service_once_and_retried(
    kube, operator, caplog
):
    caplog.set_level(logging.ERROR, logger=CONTROLLER)
    await seed(kube, operator, VLLM, LLAMA)
    refused = kube.inject_fault(
        422, action="create", resource=DEPLOYMENT, times=3, message=TOO_LONG
    )
    await apply_object(kube, isvc_manifest("chat"))
    failed = await eventually(lambda: refused.hits == 3 and condition_of(kube, "chat", "Ready"))
    message = f"cannot write Deployment chat-engine: {TOO_LONG}"
    await eventually(lambda: status_of(kube, "chat").get("runtime"))  # the retry went through
    await settle(kube, operator)

    assert without_times([failed]) == [
        {"type": "Ready", "status": "False", "reason": "ReconcileFailed", "message": message}
    ]
    assert [(e["type"], e["reason"], e["message"]) for e in events_for(kube, "chat")] == [
        ("Warning", "ReconcileFailed", message)  # once, for three refusals
    ]
    assert [
        r["error"]
        for r in records(caplog, CONTROLLER, "Failed to write InferenceService workloads")
    ] == [message] * 3
    assert condition_of(kube, "chat", "Ready")["reason"] != "ReconcileFailed"


@pytest.fixture
async def late_deployment_watch(kube) -> asyncio.Future[None]:
    """The operator's first Deployment watch (set before it starts) shows nothing and ends only
    once the test sets the result of the future returned; the next one resumes from the listing
    and shows every change since."""
    ends = asyncio.get_running_loop().create_future()
    kube[kmock.action.WATCH, kmock.resource(DEPLOYMENT)][:1] << (ends, b"")
    return ends


async def test_an_object_created_before_the_watch_shows_it_is_a_quiet_retry(
    kube, late_deployment_watch, operator, caplog
):
    """Another pass (or a restart) created it; the cache learns of it from the watch. (It
    records the InferenceService's uid, as the operator's writes do: docs/workloads.md, "Whose
    objects are written". The InferenceService waits for its runtime meanwhile. Its bounds are
    equal, so no autoscaler takes ``replicas`` over: the operator's apply sets it back.)"""
    caplog.set_level(logging.INFO, logger=CONTROLLER)
    retrying = "Object exists but is not in the watch cache yet; retrying"
    await seed(kube, operator, LLAMA)
    fixed = {"minReplicas": 1, "maxReplicas": 1}
    created = await apply_object(kube, isvc_manifest("chat", engine=fixed))
    early = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "chat-engine",
            "namespace": "default",
            "labels": {"ome.io/inferenceservice": "chat"},
            "annotations": {"ome.io/inferenceservice-uid": created["metadata"]["uid"]},
        },
        "spec": {"replicas": 7},
    }
    await apply_object(kube, early)
    await seed(kube, operator, VLLM)
    await eventually(lambda: records(caplog, CONTROLLER, retrying))  # the create found it
    late_deployment_watch.set_result(None)  # the watch shows it now
    await eventually(
        lambda: stored(kube, DEPLOYMENT, "default", "chat-engine")["spec"]["replicas"] == 1
    )
    await settle(kube, operator)

    assert records(caplog, CONTROLLER, "Failed to write InferenceService workloads") == []
    assert condition_of(kube, "chat", "Ready")["reason"] != "ReconcileFailed"


async def test_a_malformed_inference_service_being_deleted_is_left_to_the_garbage_collector(
    kube, operator
):
    bad = isvc_manifest("bad", engine={"minReplicas": "two"})
    bad["metadata"]["finalizers"] = ["example.com/hold"]  # someone else's: it stays a while
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, bad)
    await eventually(lambda: events_for(kube, "bad"))
    await delete(kube, ISVC, "default", "bad")
    await settle(kube, operator)
    mark = len(requests(kube))

    await patch(kube, ISVC, "default", "bad", {"spec": {"engine": {"minReplicas": "three"}}})
    await settle(kube, operator)

    assert writes(kube, mark) == [  # the test's own: no status, no event about the new value
        "PATCH /apis/ome.io/v1beta1/namespaces/default/inferenceservices/bad"
    ]


async def test_an_inference_service_deleted_before_its_status_write_is_left_alone(
    kube, operator, caplog
):
    """The status write answers 404: it was deleted after the pass read it, and its deletion
    event ends its work. An info line, not a failed pass retried with backoff."""
    caplog.set_level(logging.INFO, logger=CONTROLLER)
    await seed(kube, operator, VLLM, LLAMA)
    gone = kube.inject_fault(
        404,
        method="PATCH",
        resource=ISVC,
        subresource="status",
        message='inferenceservices.ome.io "chat" not found',
    )
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: gone.hits == 1)
    await settle(kube, operator)

    assert records(caplog, CONTROLLER, "Failed to write InferenceService workloads") == []
    assert records(
        caplog, CONTROLLER, "InferenceService was deleted; its status is not written"
    ) == [{"level": "INFO", "namespace": "default", "inferenceService": "chat"}]
    assert operator.metric("ome_inferenceservice_reconcile_total", result="error") == 0
    assert status_writes(kube, "chat") == 1  # the one refused: no retry
