"""RuntimeReady (SPEC S8.2, S8.3, OPEN-32): False with the S2.12 or S2.13.2 text and a
RuntimeNotFound event when no runtime resolves, True again once one does."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.conditions import find_condition
from ome_operator.core.reconciling import Decisions, Event, Outcome, ReconcilePlan
from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.reconciling.plans import EARLIER, NOW, RT, condition_of, isvc_of, plan_of

NO_RUNTIME = "no runtime found to support model safetensors with format safetensors in namespace "

NOT_FOUND = "runtime nope not found in namespace default or at cluster scope"
NO_RUNTIME_DISABLED = (
    NO_RUNTIME + "default. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). "
    "Excluded runtimes: rt (runtime is disabled)"
)
SERVING = {
    "conditions": [
        condition_of("EngineReady", "True", at=EARLIER),
        condition_of("IngressReady", "True", "IngressDisabled", at=EARLIER),
        condition_of("Ready", "True", at=EARLIER),
    ],
    "url": "http://svc.default.svc.cluster.local:8080",
    "observedGeneration": 2,
}


def _runtime_ready(message: str, *, at: str = NOW, status: str = "False") -> dict[str, Any]:
    reason = "RuntimeNotFound" if status == "False" else "RuntimeResolved"
    return condition_of("RuntimeReady", status, reason, message, at=at, severity="Info")


def _not_found_event(message: str) -> tuple[Event, ...]:
    return (Event("Warning", "RuntimeNotFound", message),)


NAMED_NOT_FOUND = Decisions(named="not_found", runtime_unresolved=True)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "expected"),
    [
        pytest.param(
            isvc_of(),
            (make_runtime("rt", disabled=True),),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NO_RUNTIME_DISABLED)]},
                events=_not_found_event(NO_RUNTIME_DISABLED),
                decisions=Decisions(
                    selection=("no_runtime", "none"),
                    exclusions=("disabled",),
                    runtime_unresolved=True,
                ),
            ),
            id="auto-selection finding nothing: RuntimeReady False with the S2.12 text, an event",
        ),
        pytest.param(
            isvc_of(),
            (),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NO_RUNTIME + "default")]},
                events=_not_found_event(NO_RUNTIME + "default"),
                decisions=Decisions(selection=("no_runtime", "none"), runtime_unresolved=True),
            ),
            id="with no runtime at all the S2.12 text ends after the namespace",
        ),
        pytest.param(
            isvc_of(runtime={"name": "nope"}),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a missing named runtime: RuntimeReady False with the S2.13.2 text and an event",
        ),
        pytest.param(
            isvc_of(model=None, runtime={"name": "nope"}),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a missing named runtime is RuntimeNotFound without spec.model too",
        ),
        pytest.param(
            isvc_of(runtime={"name": "rt", "kind": "ServingRuntime"}),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={
                    "conditions": [
                        _runtime_ready("ServingRuntime rt not found in namespace default")
                    ]
                },
                events=_not_found_event("ServingRuntime rt not found in namespace default"),
                decisions=NAMED_NOT_FOUND,
            ),
            id="kind ServingRuntime looks only in the namespace and says so",
        ),
        pytest.param(
            isvc_of(runtime={"name": "nope"}, status=SERVING),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={
                    **SERVING,
                    "conditions": [*SERVING["conditions"], _runtime_ready(NOT_FOUND)],
                },
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="only RuntimeReady is written: Ready and the rest of the status keep their values",
        ),
        pytest.param(
            isvc_of(
                runtime={"name": "nope"},
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
            ),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="the event is decided again while RuntimeReady stays False: the controller posts "
            "it once per message",
        ),
        pytest.param(
            isvc_of(
                runtime={"name": "nope"},
                status={"conditions": [_runtime_ready("an older text", at=EARLIER)]},
            ),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a new message is not a transition",
        ),
        pytest.param(
            isvc_of(
                runtime={"name": "nope"},
                status={"conditions": [_runtime_ready("", status="True", at=EARLIER)]},
            ),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a transition from True is an event and a new transition time",
        ),
    ],
)
def test_runtime_not_found(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], expected: ReconcilePlan
) -> None:
    assert plan_of(isvc, runtimes) == expected


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(
            isvc_of(status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]}),
            _runtime_ready("", status="True"),
            id="a resolved runtime turns RuntimeReady True, RuntimeResolved, with no message",
        ),
        pytest.param(
            isvc_of(
                runtime={"name": "rt"},
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
            ),
            _runtime_ready("", status="True"),
            id="a named runtime that now exists resolves RuntimeReady too",
        ),
        pytest.param(
            isvc_of(status={"conditions": [_runtime_ready("", status="True", at=EARLIER)]}),
            _runtime_ready("", status="True", at=EARLIER),
            id="a RuntimeReady already True keeps its transition time",
        ),
        pytest.param(
            isvc_of(status=SERVING),
            None,
            id="RuntimeReady is not added when it never existed",
        ),
    ],
)
def test_runtime_resolved(isvc: InferenceService, expected: dict[str, Any] | None) -> None:
    plan = plan_of(isvc)
    assert find_condition(plan.status["conditions"], "RuntimeReady") == expected
