"""The conditions of a pass (SPEC S8.1, OPEN-16, OPEN-31): each component's Ready mirrors its
workload (or, while not True, names the cause its pods show), Ready follows the engine, and
transition times move only when a status changes."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.conditions import find_condition
from ome_operator.core.reconciling import Event
from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.pods import NO_GPU, pod, unschedulable
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

STALE_GROUPS = ("False", "AllGroupsReady", "All replicas are ready")
GROUPS_NOT_READY = ("GroupsNotReady", "1/2 leader-worker groups ready")
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
            [lws_of(available=AVAILABLE)],
            [condition_of("EngineReady", *AVAILABLE), INGRESS, condition_of("Ready", "True")],
            id="a MultiNode engine mirrors an Available LeaderWorkerSet",
        ),
        pytest.param(
            isvc_of(engine=annotated_isvc("MultiNode")),
            [lws_of(available=STALE_GROUPS, replicas=2, readyReplicas=1)],
            [
                condition_of("EngineReady", "False", *GROUPS_NOT_READY),
                INGRESS,
                condition_of("Ready", "False", *GROUPS_NOT_READY),
            ],
            id="a LeaderWorkerSet not Available is told from its counts, not its stale reason",
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


STUCK = f"2 of 2 pods cannot be scheduled: {NO_GPU}"
STUCK_CONDITION = ("False", "PodsUnschedulable", STUCK)
STUCK_EVENT = Event("Warning", "PodsUnschedulable", f"engine component: {STUCK}")
CRASH = (
    "svc-engine-0-default-0: container ome-container is in CrashLoopBackOff (restarted 5 "
    "times, last exit code 1)"
)


@pytest.mark.parametrize(
    ("isvc", "existing", "pods", "expected", "events"),
    [
        pytest.param(
            isvc_of(),
            [deployment_of(available=UNAVAILABLE)],
            {"engine": (unschedulable("svc-engine-a"), unschedulable("svc-engine-b"))},
            [
                condition_of("EngineReady", *STUCK_CONDITION),
                INGRESS,
                condition_of("Ready", *STUCK_CONDITION),
            ],
            (STUCK_EVENT,),
            id="pods that cannot be scheduled: EngineReady and Ready say so, with one event",
        ),
        pytest.param(
            isvc_of(
                status={
                    "conditions": [
                        condition_of("EngineReady", *STUCK_CONDITION[:2], "1 of 2", at=EARLIER),
                        condition_of("Ready", *STUCK_CONDITION[:2], "1 of 2", at=EARLIER),
                    ]
                }
            ),
            [deployment_of(available=UNAVAILABLE)],
            {"engine": (unschedulable("svc-engine-a"), unschedulable("svc-engine-b"))},
            [
                condition_of("EngineReady", *STUCK_CONDITION, at=EARLIER),
                INGRESS,
                condition_of("Ready", *STUCK_CONDITION, at=EARLIER),
            ],
            (),
            id="no event again while EngineReady already has that cause",
        ),
        pytest.param(
            isvc_of(),
            [deployment_of()],
            {"engine": (pod("svc-engine-a"), unschedulable("svc-engine-b"))},
            [condition_of("EngineReady", *AVAILABLE), INGRESS, condition_of("Ready", "True")],
            (),
            id="an available Deployment is mirrored, whatever a surge pod shows",
        ),
        pytest.param(
            isvc_of(decoder={}),
            [deployment_of(), deployment_of("decoder", available=UNAVAILABLE)],
            {"decoder": (unschedulable("svc-decoder-a"),)},
            [
                condition_of(
                    "DecoderReady",
                    "False",
                    "PodsUnschedulable",
                    f"1 of 1 pods cannot be scheduled: {NO_GPU}",
                ),
                condition_of("EngineReady", *AVAILABLE),
                INGRESS,
                condition_of("Ready", "True"),
            ],
            (
                Event(
                    "Warning",
                    "PodsUnschedulable",
                    f"decoder component: 1 of 1 pods cannot be scheduled: {NO_GPU}",
                ),
            ),
            id="each component reads its own pods; the engine's Ready is not the decoder's",
        ),
        pytest.param(
            isvc_of(deploymentMode="OMENative"),
            [replica_of(conditions=[condition_of("Ready", "False", "CrashLoopBackOff", CRASH)])],
            {"engine": (unschedulable("svc-engine-a"),)},
            [
                condition_of("EngineReady", "False", "CrashLoopBackOff", CRASH),
                INGRESS,
                condition_of("Ready", "False", "CrashLoopBackOff", CRASH),
            ],
            (Event("Warning", "CrashLoopBackOff", f"engine component: {CRASH}"),),
            id="an OMENative engine takes the cause its InferenceReplica names, not pods held",
        ),
    ],
)
def test_the_cause_the_pods_show(
    isvc: InferenceService,
    existing: list[dict[str, Any]],
    pods: dict[str, tuple[dict[str, Any], ...]],
    expected: list[dict[str, Any]],
    events: tuple[Event, ...],
) -> None:
    plan = plan_of(isvc, existing=existing, pods=pods)
    assert (plan.status["conditions"], plan.events) == (expected, events)
