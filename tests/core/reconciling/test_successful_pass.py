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
    ENTRY,
    INGRESS,
    _annotated,
    _cond,
    _deployment,
    _isvc,
    _names,
    _objects,
    _plan,
    _selected,
)


def test_a_successful_pass_applies_the_workload_and_writes_the_whole_status() -> None:
    plan = _plan(_isvc(generation=3), existing=[_deployment(observed_generation=3)])
    url = "http://svc.default.svc.cluster.local:8080"
    engine_ready = _cond("EngineReady", *AVAILABLE)
    assert (
        plan.outcome,
        _names(plan.apply),
        plan.delete,
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions,
    ) == (
        Outcome.SUCCESS,
        _objects("engine") + ENTRY,
        (),
        {
            "conditions": [engine_ready, INGRESS, _cond("Ready", "True")],
            "url": url,
            "address": {"url": url},
            "components": {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": "http://svc-engine.default.svc.cluster.local",
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "svc-engine",
                    },
                }
            },
            "runtime": {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
            "observedGeneration": 3,
        },
        (),
        (_selected(),),
        Decisions(selection=("selected", "cluster"), modes=(("engine", "RawDeployment"),)),
    )


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(
            _isvc(decoder={}, router={}),
            _objects("engine") + _objects("decoder") + _objects("router") + ENTRY,
            id="components are applied engine, decoder, router, then the entry Service",
        ),
        pytest.param(
            _isvc(router={}, deploymentMode="OMENative"),
            _objects("engine", "OMENative") + _objects("router", "OMENative") + ENTRY,
            id="each component's objects follow its mode",
        ),
        pytest.param(
            _isvc(engine=_annotated("MultiNode")),
            _objects("engine", "MultiNode", pdb=False) + ENTRY,
            id="a MultiNode component gets no PodDisruptionBudget",
        ),
        pytest.param(
            _isvc(engine={"minAvailable": 0}),
            _objects("engine") + ENTRY,
            id="minAvailable 0 still creates a PodDisruptionBudget",
        ),
    ],
)
def test_the_objects_of_a_pass_in_order(
    isvc: InferenceService, expected: list[tuple[str, str]]
) -> None:
    assert _names(_plan(isvc).apply) == expected


@pytest.mark.parametrize(
    ("isvc", "front"),
    [
        pytest.param(_isvc(), {"app": "svc-engine"}, id="the entry Service fronts the engine"),
        pytest.param(
            _isvc(decoder={}),
            {"app": "svc-engine"},
            id="a decoder does not take the entry Service from the engine",
        ),
        pytest.param(
            _isvc(decoder={}, router={}),
            {"app": "svc-router"},
            id="the entry Service fronts the router when one is declared",
        ),
    ],
)
def test_the_entry_service_fronts_the_router_else_the_engine(
    isvc: InferenceService, front: dict[str, str]
) -> None:
    entry_service = _plan(isvc).apply[-1]
    assert (_names([entry_service]), entry_service["spec"]["selector"]) == (ENTRY, front)
