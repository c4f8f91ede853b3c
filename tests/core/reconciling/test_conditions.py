"""The conditions of a pass (SPEC S8.1, OPEN-16, OPEN-31): each component's Ready mirrors its
workload, Ready follows the engine, and transition times move only when a status changes."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.conditions import find_condition
from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.reconciling.plans import (
    AVAILABLE,
    EARLIER,
    INGRESS,
    RT,
    UNAVAILABLE,
    annotated_isvc,
    condition_of,
    deployment_of,
    isvc_of,
    lws_of,
    plan_of,
    replica_of,
)

ENGINE_INITIALIZING = condition_of(
    "EngineReady", "False", "Initializing", "engine component initializing"
)
READY_INITIALIZING = condition_of("Ready", "False", "Initializing", "engine component initializing")


@pytest.mark.parametrize(
    ("isvc", "existing", "expected"),
    [
        pytest.param(
            isvc_of(),
            [],
            [ENGINE_INITIALIZING, INGRESS, READY_INITIALIZING],
            id="before the Deployment exists the engine is Initializing and Ready copies it",
        ),
        pytest.param(
            isvc_of(),
            [deployment_of(available=None)],
            [ENGINE_INITIALIZING, INGRESS, READY_INITIALIZING],
            id="before the Deployment reports Available the engine is Initializing",
        ),
        pytest.param(
            isvc_of(),
            [deployment_of()],
            [condition_of("EngineReady", *AVAILABLE), INGRESS, condition_of("Ready", "True")],
            id="EngineReady mirrors an Available Deployment and Ready is True",
        ),
        pytest.param(
            isvc_of(),
            [deployment_of(available=UNAVAILABLE)],
            [
                condition_of("EngineReady", *UNAVAILABLE),
                INGRESS,
                condition_of("Ready", "False", *UNAVAILABLE[1:]),
            ],
            id="EngineReady mirrors an unavailable Deployment and Ready copies its reason",
        ),
        pytest.param(
            isvc_of(decoder={}, router={}),
            [deployment_of()],
            [
                condition_of(
                    "DecoderReady", "False", "Initializing", "decoder component initializing"
                ),
                condition_of("EngineReady", *AVAILABLE),
                INGRESS,
                condition_of("Ready", "True"),
                condition_of(
                    "RouterReady", "False", "Initializing", "router component initializing"
                ),
            ],
            id="Ready does not wait for the decoder or the router",
        ),
        pytest.param(
            isvc_of(engine=annotated_isvc("MultiNode")),
            [lws_of(available=UNAVAILABLE)],
            [
                condition_of("EngineReady", *UNAVAILABLE),
                INGRESS,
                condition_of("Ready", "False", *UNAVAILABLE[1:]),
            ],
            id="a MultiNode engine mirrors the LeaderWorkerSet's Available",
        ),
        pytest.param(
            isvc_of(engine=annotated_isvc("MultiNode")),
            [deployment_of()],
            [ENGINE_INITIALIZING, INGRESS, READY_INITIALIZING],
            id="after a mode change the old workload does not count",
        ),
        pytest.param(
            isvc_of(
                status={
                    "conditions": [
                        condition_of("DecoderReady", "True", at=EARLIER),
                        condition_of("EngineReady", "False", "Initializing", "x", at=EARLIER),
                        condition_of("IngressReady", "True", "IngressDisabled", at=EARLIER),
                        condition_of("Ready", "False", "Initializing", "x", at=EARLIER),
                    ]
                }
            ),
            [deployment_of()],
            [
                condition_of("EngineReady", *AVAILABLE),
                condition_of("IngressReady", "True", "IngressDisabled", at=EARLIER),
                condition_of("Ready", "True"),
            ],
            id="transition times move only for changed statuses; an undeclared decoder's is gone",
        ),
        pytest.param(
            isvc_of(
                status={
                    "conditions": [
                        condition_of("EngineReady", "False", "Initializing", "x", at=EARLIER),
                        condition_of("Ready", "False", "Initializing", "x", at=EARLIER),
                    ]
                }
            ),
            [deployment_of(available=UNAVAILABLE)],
            [
                condition_of("EngineReady", *UNAVAILABLE, at=EARLIER),
                INGRESS,
                condition_of("Ready", "False", *UNAVAILABLE[1:], at=EARLIER),
            ],
            id="a new reason with the same status keeps the transition time",
        ),
    ],
)
def test_the_conditions_of_a_pass(
    isvc: InferenceService, existing: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> None:
    assert plan_of(isvc, existing=existing).status["conditions"] == expected


def _native(**engine: Any) -> InferenceService:
    return isvc_of(deploymentMode="OMENative", engine=engine)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "replica", "expected"),
    [
        pytest.param(
            _native(minReplicas=2),
            (RT,),
            replica_of(replicas=2, readyReplicas=2, servingReplicas=2),
            ("True", "Ready", "All Instances are Ready"),
            id="Ready when every desired Instance is ready",
        ),
        pytest.param(
            _native(
                minReplicas=2,
                lifecycle={"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}},
            ),
            (RT,),
            replica_of(replicas=2, readyReplicas=1, servingReplicas=1),
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="MinimumAvailable counts the ISVC lifecycle's maxUnavailable",
        ),
        pytest.param(
            _native(minReplicas=2),
            (
                make_runtime(
                    "rt",
                    engineConfig={
                        "lifecycle": {
                            "updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%"}}
                        }
                    },
                ),
            ),
            replica_of(replicas=2, readyReplicas=1, servingReplicas=1),
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="a runtime's lifecycle reaches the component through the merge",
        ),
        pytest.param(
            _native(minReplicas=2),
            (RT,),
            replica_of(replicas=2, readyReplicas=1, servingReplicas=1),
            ("False", "InsufficientAvailable", "1/2 Instances serving, need 2"),
            id="InsufficientAvailable below the minimum",
        ),
        pytest.param(
            _native(minReplicas=0),
            (RT,),
            replica_of(replicas=1, readyReplicas=1, servingReplicas=1),
            ("True", "Ready", "All Instances are Ready"),
            id="minReplicas 0 still desires one Instance",
        ),
    ],
)
def test_an_omenative_engine_condition(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    replica: dict[str, Any],
    expected: tuple[str, str, str],
) -> None:
    conditions = plan_of(isvc, runtimes, existing=[replica]).status["conditions"]
    assert find_condition(conditions, "EngineReady") == condition_of("EngineReady", *expected)
