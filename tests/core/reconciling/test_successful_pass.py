"""A whole successful pass (SPEC S5, S8, S16.4): the objects it applies, in order, the entry
Service, and the whole status, events, logs and decisions.

The content of each rendered object is pinned by tests/core/rendering; here objects are named by
``(kind, name)`` and the rows pin which ones a pass writes, in which order.
"""

from __future__ import annotations

import pytest

from ome_operator.core.reconciling import Decisions, Outcome
from ome_operator.models import InferenceService
from tests.core.reconciling.plans import (
    AVAILABLE,
    DEFAULT_AUTOSCALER,
    ENTRY,
    INGRESS,
    annotated_isvc,
    condition_of,
    deployment_of,
    isvc_of,
    names_of,
    objects_of,
    plan_of,
    selected_record,
)


def test_a_successful_pass_applies_the_workload_and_writes_the_whole_status() -> None:
    plan = plan_of(isvc_of(generation=3), existing=[deployment_of(observed_generation=3)])
    url = "http://svc.default.svc.cluster.local:8080"
    engine_ready = condition_of("EngineReady", *AVAILABLE)
    assert (
        plan.outcome,
        names_of(plan.apply),
        plan.delete,
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions,
    ) == (
        Outcome.SUCCESS,
        objects_of("engine") + ENTRY,
        (),
        {
            "conditions": [engine_ready, INGRESS, condition_of("Ready", "True")],
            "url": url,
            "address": {"url": url},
            "components": {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": "http://svc-engine.default.svc.cluster.local:8080",
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "svc-engine",
                    },
                    "autoscaler": DEFAULT_AUTOSCALER,
                }
            },
            "runtime": {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
            "observedGeneration": 3,
        },
        (),
        (selected_record(),),
        Decisions(selection=("selected", "cluster"), modes=(("engine", "RawDeployment"),)),
    )


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(
            isvc_of(decoder={}, router={}),
            objects_of("engine") + objects_of("decoder") + objects_of("router") + ENTRY,
            id="components are applied engine, decoder, router, then the entry Service",
        ),
        pytest.param(
            isvc_of(router={}, deploymentMode="OMENative"),
            objects_of("engine", "OMENative") + objects_of("router", "OMENative") + ENTRY,
            id="each component's objects follow its mode",
        ),
        pytest.param(
            isvc_of(engine=annotated_isvc("MultiNode")),
            objects_of("engine", "MultiNode", pdb=False) + ENTRY,
            id="a MultiNode component gets no PodDisruptionBudget",
        ),
        pytest.param(
            isvc_of(engine={"minAvailable": 0}),
            objects_of("engine") + ENTRY,
            id="minAvailable 0 still creates a PodDisruptionBudget",
        ),
    ],
)
def test_the_objects_of_a_pass_in_order(
    isvc: InferenceService, expected: list[tuple[str, str]]
) -> None:
    assert names_of(plan_of(isvc).apply) == expected


@pytest.mark.parametrize(
    ("isvc", "front"),
    [
        pytest.param(isvc_of(), {"app": "svc-engine"}, id="the entry Service fronts the engine"),
        pytest.param(
            isvc_of(decoder={}),
            {"app": "svc-engine"},
            id="a decoder does not take the entry Service from the engine",
        ),
        pytest.param(
            isvc_of(decoder={}, router={}),
            {"app": "svc-router"},
            id="the entry Service fronts the router when one is declared",
        ),
    ],
)
def test_the_entry_service_fronts_the_router_else_the_engine(
    isvc: InferenceService, front: dict[str, str]
) -> None:
    entry_service = plan_of(isvc).apply[-1]
    assert (names_of([entry_service]), entry_service["spec"]["selector"]) == (ENTRY, front)


@pytest.mark.parametrize(
    "conditions",
    [
        pytest.param("Ready", id="conditions that are a string"),
        pytest.param({"type": "Ready"}, id="conditions that are a map"),
        pytest.param(["Ready", 3, None], id="entries that are not maps"),
        pytest.param([{"status": "True"}, {"type": 7}], id="entries without a string type"),
    ],
)
def test_a_hand_edited_status_reads_as_no_conditions(conditions: object) -> None:
    existing = [deployment_of(observed_generation=3)]
    clean = plan_of(isvc_of(generation=3), existing=existing)
    edited = plan_of(isvc_of(generation=3, status={"conditions": conditions}), existing=existing)
    assert (edited.outcome, edited.apply, edited.status, edited.events) == (
        clean.outcome,
        clean.apply,
        clean.status,
        clean.events,
    )
