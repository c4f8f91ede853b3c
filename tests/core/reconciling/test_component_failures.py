"""Component reconcile failures (SPEC S6): the failing component and every later one are not
applied, the pass is retried, and only a log line records it (no event, no status). Beyond S6:
a MultiNode component without the LeaderWorkerSet API parks the InferenceService with a
condition and an event, since no retry can succeed before the operator restarts."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.reconciling import Decisions, Event, LogRecord, Outcome
from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.reconciling.plans import (
    NOW,
    RAW_SELECTOR,
    RT,
    annotated_isvc,
    isvc_of,
    names_of,
    objects_of,
    pdb_of,
    plan_of,
    selected_record,
)


def _failed(component: str, error: str) -> LogRecord:
    fields = (
        ("component", component),
        ("namespace", "default"),
        ("inferenceService", "svc"),
        ("error", error),
    )
    return LogRecord("error", "Failed to reconcile component", fields)


ROUTER_MULTINODE = make_runtime("rt", routerConfig=annotated_isvc("MultiNode"))


@pytest.mark.parametrize(
    ("isvc", "runtimes", "lws", "applied", "log", "errors"),
    [
        pytest.param(
            isvc_of(decoder={}, router={}),
            (ROUTER_MULTINODE,),
            True,
            objects_of("engine") + objects_of("decoder"),
            _failed("router", "invalid deployment mode for router"),
            (("router", "invalid_deployment_mode"),),
            id="a runtime's MultiNode router fails the router; engine and decoder are applied",
        ),
        pytest.param(
            isvc_of(router=annotated_isvc("VirtualDeployment")),
            (RT,),
            True,
            objects_of("engine"),
            _failed("router", "invalid deployment mode for router"),
            (("router", "invalid_deployment_mode"),),
            id="a router annotated VirtualDeployment fails with the router text",
        ),
        pytest.param(
            isvc_of(engine=annotated_isvc("VirtualDeployment"), decoder={}),
            (RT,),
            True,
            [],
            _failed("engine", "invalid deployment mode for engine"),
            (("engine", "invalid_deployment_mode"),),
            id="an engine annotated VirtualDeployment fails and nothing is applied",
        ),
        pytest.param(
            isvc_of(decoder=annotated_isvc("VirtualDeployment"), router={}),
            (RT,),
            True,
            objects_of("engine"),
            _failed("decoder", "invalid deployment mode for decoder"),
            (("decoder", "invalid_deployment_mode"),),
            id="a decoder failure keeps the router from being applied too",
        ),
    ],
)
def test_a_component_failure(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    lws: bool,
    applied: list[tuple[str, str]],
    log: LogRecord,
    errors: tuple[tuple[str, str], ...],
) -> None:
    plan = plan_of(isvc, runtimes, lws=lws)
    assert (
        plan.outcome,
        names_of(plan.apply),
        plan.delete,
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions,
    ) == (
        Outcome.ERROR,
        applied,
        (),
        None,
        (),
        (selected_record(), log),
        Decisions(selection=("selected", "cluster"), component_errors=errors),
    )


LWS_MISSING = "the LeaderWorkerSet CRD (leaderworkerset.x-k8s.io/v1) is not installed"


def _advice(component: str) -> str:
    return (
        f"{component} component runs as MultiNode, which needs the LeaderWorkerSet CRD "
        "(leaderworkerset.x-k8s.io/v1); it is not installed: install it and restart the "
        "operator, or move the component to OMENative"
    )


def _not_installed(kind: str, component: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "False",
        "reason": "LeaderWorkerSetNotInstalled",
        "message": _advice(component),
        "lastTransitionTime": NOW,
    }


@pytest.mark.parametrize(
    ("isvc", "component", "condition", "applied"),
    [
        pytest.param(
            isvc_of(engine=annotated_isvc("MultiNode")),
            "engine",
            "EngineReady",
            [],
            id="MultiNode without the LeaderWorkerSet CRD parks the InferenceService",
        ),
        pytest.param(
            isvc_of(decoder=annotated_isvc("MultiNode")),
            "decoder",
            "DecoderReady",
            objects_of("engine"),
            id="a missing LeaderWorkerSet CRD stops only the MultiNode component and later ones",
        ),
    ],
)
def test_a_missing_leader_worker_set_says_so_instead_of_retrying(
    isvc: InferenceService, component: str, condition: str, applied: list[tuple[str, str]]
) -> None:
    plan = plan_of(isvc, (RT,), lws=False)
    conditions = [_not_installed(condition, component), _not_installed("Ready", component)]
    assert (
        plan.outcome,
        names_of(plan.apply),
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions,
    ) == (
        Outcome.PARKED,  # the API is looked up at start: no retry can succeed before a restart
        applied,
        {"conditions": sorted(conditions, key=lambda c: c["type"])},
        (Event("Warning", "LeaderWorkerSetNotInstalled", _advice(component)),),
        (selected_record(), _failed(component, LWS_MISSING)),
        Decisions(selection=("selected", "cluster"), component_errors=((component, "other"),)),
    )


def test_a_component_failure_records_no_event_not_even_the_advisory() -> None:
    runtime = make_runtime("rt", engineConfig=annotated_isvc("OMENative"))
    isvc = isvc_of(
        runtime={"name": "rt"}, deploymentMode="RawDeployment", router=annotated_isvc("MultiNode")
    )
    plan = plan_of(isvc, (runtime,))
    assert (plan.outcome, names_of(plan.apply), plan.events, plan.status, plan.decisions) == (
        Outcome.ERROR,
        objects_of("engine", "OMENative"),
        (),
        None,
        Decisions(named="advisory", component_errors=(("router", "invalid_deployment_mode"),)),
    )


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing", "applied", "component", "prefix", "reason"),
    [
        pytest.param(
            isvc_of(),
            (RT,),
            [pdb_of(RAW_SELECTOR, owner=None)],
            [],
            "engine",
            "failed to preflight engine PodDisruptionBudget",
            "pdb",
            id="a PodDisruptionBudget under the engine's name not created by OME fails the engine",
        ),
        pytest.param(
            isvc_of(),
            (RT,),
            [pdb_of(RAW_SELECTOR, owner="another")],
            [],
            "engine",
            "failed to preflight engine PodDisruptionBudget",
            "pdb",
            id="a PodDisruptionBudget controlled by another InferenceService is not OME's",
        ),
        pytest.param(
            isvc_of(decoder={}),
            (RT,),
            [pdb_of({"matchLabels": {"app": "svc-decoder"}}, "decoder", owner=None)],
            objects_of("engine"),
            "decoder",
            "failed to preflight decoder PodDisruptionBudget",
            "pdb",
            id="a foreign PodDisruptionBudget under the decoder's name fails the decoder",
        ),
        pytest.param(
            isvc_of(engine={"maxUnavailable": 1}),
            (make_runtime("rt", engineConfig={"minAvailable": 1}),),
            [],
            [],
            "engine",
            "failed to resolve engine PodDisruptionBudget",
            "pdb",
            id="a runtime budget field and the other ISVC field fail the component",
        ),
        pytest.param(
            isvc_of(engine={"runner": {"image": "vllm:{{.Name"}}),
            (RT,),
            [],
            [],
            "engine",
            "failed to render placeholders in spec.engine.runner.image",
            "other",
            id="a malformed placeholder fails the component",
        ),
    ],
)
def test_a_component_failure_with_an_error_prefix(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    existing: list[dict[str, Any]],
    applied: list[tuple[str, str]],
    component: str,
    prefix: str,
    reason: str,
) -> None:
    plan = plan_of(isvc, runtimes, existing=existing)
    *logs, failure = plan.logs
    *fields, (error_key, error) = failure.fields
    assert (
        plan.outcome,
        names_of(plan.apply),
        plan.status,
        plan.events,
        logs,
        failure.message,
        fields,
        error_key,
        error.startswith(prefix + ":"),
        plan.decisions.component_errors,
    ) == (
        Outcome.ERROR,
        applied,
        None,
        (),
        [selected_record()],
        "Failed to reconcile component",
        [("component", component), ("namespace", "default"), ("inferenceService", "svc")],
        "error",
        True,
        ((component, reason),),
    ), error
