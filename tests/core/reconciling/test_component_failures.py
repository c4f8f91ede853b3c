"""Component reconcile failures (SPEC S6): the failing component and every later one are not
applied and the pass is retried with its log line. No silent stop: ``<Component>Ready`` and
``Ready`` turn False and one Warning event says why, with the failure's reason and the message
``<component> component: <error>``. A MultiNode component without the LeaderWorkerSet API parks
the InferenceService instead, since no retry can succeed before the operator restarts."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.conditions import COMPONENT_CONDITION
from ome_operator.core.reconciling import Decisions, Event, LogRecord, Outcome
from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.reconciling.plans import (
    EARLIER,
    NOW,
    RAW_SELECTOR,
    RT,
    annotated_isvc,
    condition_of,
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


def _told(component: str, reason: str, error: str) -> tuple[dict[str, Any], tuple[Event, ...]]:
    """The status and events of a failed component: its condition and Ready, False, and one
    Warning event, all saying ``<component> component: <error>``."""
    message = f"{component} component: {error}"
    kinds = sorted([COMPONENT_CONDITION[component], "Ready"])
    conditions = [condition_of(kind, "False", reason, message) for kind in kinds]
    return {"conditions": conditions}, (Event("Warning", reason, message),)


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
    component, error = dict(log.fields)["component"], dict(log.fields)["error"]
    status, events = _told(component, "InvalidDeploymentMode", error)
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
        status,
        events,
        (selected_record(), log),
        Decisions(selection=("selected", "cluster"), component_errors=errors),
    )


BOTH_BUDGET_FIELDS = (
    "failed to resolve engine PodDisruptionBudget: runtime rt engineConfig.minAvailable and "
    "spec.engine.maxUnavailable are both set; only one of minAvailable or maxUnavailable may be set"
)
MALFORMED = (
    'failed to render placeholders in spec.engine.runner.image: malformed template "vllm:{{.Name": '
    "unclosed action"
)
GPUS = (
    'spec.engine.runner.resources.limits["nvidia.com/gpu"] must be a whole number of GPUs '
    '(got "1.5")'
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


def test_a_component_failure_posts_its_own_event_and_not_the_advisory() -> None:
    runtime = make_runtime("rt", engineConfig=annotated_isvc("OMENative"))
    isvc = isvc_of(
        runtime={"name": "rt"}, deploymentMode="RawDeployment", router=annotated_isvc("MultiNode")
    )
    plan = plan_of(isvc, (runtime,))
    status, events = _told("router", "InvalidDeploymentMode", "invalid deployment mode for router")
    assert (plan.outcome, names_of(plan.apply), plan.events, plan.status, plan.decisions) == (
        Outcome.ERROR,
        objects_of("engine", "OMENative"),
        events,
        status,
        Decisions(named="advisory", component_errors=(("router", "invalid_deployment_mode"),)),
    )


def test_a_failure_that_stays_keeps_the_status_it_wrote() -> None:
    """The next pass of the same failure gives the same status (nothing to write), but the
    conditions of other components and the rest of the status are kept."""
    first = plan_of(isvc_of(router=annotated_isvc("VirtualDeployment")))
    kept = condition_of("EngineReady", "True", "MinimumReplicasAvailable", at=EARLIER)
    before = {**first.status, "conditions": [kept, *first.status["conditions"]], "url": "u"}
    again = plan_of(isvc_of(router=annotated_isvc("VirtualDeployment"), status=before))
    assert (again.outcome, again.status) == (Outcome.ERROR, before)


PREFLIGHT = (
    "failed to preflight {0} PodDisruptionBudget: PodDisruptionBudget svc-{0} exists and was not "
    "created by this InferenceService"
)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing", "applied", "component", "error", "told", "reason"),
    [
        pytest.param(
            isvc_of(),
            (RT,),
            [pdb_of(RAW_SELECTOR, owner=None)],
            [],
            "engine",
            PREFLIGHT.format("engine"),
            ("PodDisruptionBudgetError", PREFLIGHT.format("engine")),
            "pdb",
            id="a PodDisruptionBudget under the engine's name not created by OME fails the engine",
        ),
        pytest.param(
            isvc_of(),
            (RT,),
            [pdb_of(RAW_SELECTOR, owner="another")],
            [],
            "engine",
            PREFLIGHT.format("engine"),
            ("PodDisruptionBudgetError", PREFLIGHT.format("engine")),
            "pdb",
            id="a PodDisruptionBudget controlled by another InferenceService is not OME's",
        ),
        pytest.param(
            isvc_of(decoder={}),
            (RT,),
            [pdb_of({"matchLabels": {"app": "svc-decoder"}}, "decoder", owner=None)],
            objects_of("engine"),
            "decoder",
            PREFLIGHT.format("decoder"),
            ("PodDisruptionBudgetError", PREFLIGHT.format("decoder")),
            "pdb",
            id="a foreign PodDisruptionBudget under the decoder's name fails the decoder",
        ),
        pytest.param(
            isvc_of(engine={"maxUnavailable": 1}),
            (make_runtime("rt", engineConfig={"minAvailable": 1}),),
            [],
            [],
            "engine",
            BOTH_BUDGET_FIELDS,
            ("PodDisruptionBudgetError", BOTH_BUDGET_FIELDS),
            "pdb",
            id="a runtime budget field and the other ISVC field fail the component",
        ),
        pytest.param(
            isvc_of(engine={"runner": {"image": "vllm:{{.Name"}}),
            (RT,),
            [],
            [],
            "engine",
            MALFORMED,
            ("RuntimeTemplateError", f"container ome-container (runtime rt): {MALFORMED}"),
            "other",
            id="a malformed placeholder names the runtime and the container: RuntimeTemplateError",
        ),
        pytest.param(
            isvc_of(engine={"runner": {"resources": {"limits": {"nvidia.com/gpu": "1.5"}}}}),
            (RT,),
            [],
            [],
            "engine",
            GPUS,
            ("InvalidResourceQuantity", GPUS),
            "other",
            id="a GPU count that is not whole fails the component: InvalidResourceQuantity",
        ),
    ],
)
def test_a_component_failure_says_why_on_the_inference_service(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    existing: list[dict[str, Any]],
    applied: list[tuple[str, str]],
    component: str,
    error: str,
    told: tuple[str, str],
    reason: str,
) -> None:
    plan = plan_of(isvc, runtimes, existing=existing)
    status, events = _told(component, *told)
    assert (
        plan.outcome,
        names_of(plan.apply),
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions.component_errors,
    ) == (
        Outcome.ERROR,
        applied,
        status,
        events,
        (selected_record(), _failed(component, error)),
        ((component, reason),),
    )
