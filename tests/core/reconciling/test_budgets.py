"""The PodDisruptionBudgets a pass writes and deletes (SPEC S5.5, S3.6): from the configuration
and the component fields, and across a mode change, where the old budget keeps protecting the
old pods until the new workload is ready."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.operator_config import OperatorConfig, PdbDefaults
from ome_operator.models import InferenceService
from tests.core.reconciling.plans import (
    AVAILABLE,
    ENTRY,
    NATIVE_ENGINE,
    RAW_SELECTOR,
    UNAVAILABLE,
    _annotated,
    _deployment,
    _isvc,
    _lws,
    _names,
    _objects,
    _pdb,
    _plan,
    _ref,
    _replica,
)

NATIVE_SELECTOR = {
    "matchLabels": {
        "component": "engine",
        "ome.io/inferenceservice": "svc",
        "ome.io/managed-by": "OMENative",
    }
}


@pytest.mark.parametrize(
    ("isvc", "config", "expected"),
    [
        pytest.param(
            _isvc(),
            OperatorConfig(pdb=PdbDefaults(raw_deployment=None)),
            _objects("engine", pdb=False) + ENTRY,
            id="without a default or a field, a RawDeployment component gets no budget",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            OperatorConfig(pdb=PdbDefaults(ome_native=None)),
            _objects("engine", "OMENative", pdb=False) + ENTRY,
            id="without a default or a field, an OMENative component gets no budget",
        ),
        pytest.param(
            _isvc(engine={"maxUnavailable": 1}),
            OperatorConfig(pdb=PdbDefaults(raw_deployment=None)),
            _objects("engine") + ENTRY,
            id="a component field gives a budget without a default",
        ),
    ],
)
def test_the_budget_follows_the_configuration(
    isvc: InferenceService, config: OperatorConfig, expected: list[tuple[str, str]]
) -> None:
    assert _names(_plan(isvc, config=config).apply) == expected


MULTINODE_ENGINE = _isvc(engine=_annotated("MultiNode"))
NATIVE_OBJECTS = _objects("engine", "OMENative", pdb=False)


@pytest.mark.parametrize(
    ("isvc", "existing", "applied", "deleted"),
    [
        pytest.param(
            NATIVE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR)],
            NATIVE_OBJECTS + ENTRY,
            (),
            id="the old budget keeps protecting the old pods while the new workload is not ready",
        ),
        pytest.param(
            NATIVE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR), _replica(readyReplicas=1, servingReplicas=1)],
            _objects("engine", "OMENative") + ENTRY,
            (),
            id="the budget moves to the new pods once the new workload is ready",
        ),
        pytest.param(
            _isvc(),
            [_replica(readyReplicas=1), _pdb(NATIVE_SELECTOR), _deployment(available=UNAVAILABLE)],
            _objects("engine", pdb=False) + ENTRY,
            (),
            id="back to RawDeployment: the budget waits for the Deployment to be available",
        ),
        pytest.param(
            MULTINODE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR), _lws(available=None)],
            _objects("engine", "MultiNode", pdb=False) + ENTRY,
            (),
            id="to MultiNode: the old budget stays while the LeaderWorkerSet is not available",
        ),
        pytest.param(
            MULTINODE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR), _lws()],
            _objects("engine", "MultiNode", pdb=False) + ENTRY,
            (_ref("PodDisruptionBudget", "svc-engine"),),
            id="to MultiNode: the budget is deleted once the LeaderWorkerSet is available",
        ),
        pytest.param(
            _isvc(),
            [_deployment(available=UNAVAILABLE), _pdb(RAW_SELECTOR)],
            _objects("engine") + ENTRY,
            (),
            id="without a mode change the budget is updated whatever the readiness",
        ),
        pytest.param(
            _isvc(),
            [_deployment(available=UNAVAILABLE), _pdb({"matchLabels": {"edited": "by-hand"}})],
            _objects("engine") + ENTRY,
            (),
            id="without a mode change a hand-edited selector is reset at once",
        ),
        pytest.param(
            _isvc(decoder={}, router=_annotated("MultiNode"), deploymentMode="OMENative"),
            [_deployment(), _pdb(RAW_SELECTOR)],
            NATIVE_OBJECTS + _objects("decoder", "OMENative"),
            (),
            id="the old budget is kept in a pass that fails on a later component",
        ),
    ],
)
def test_the_budget_across_a_mode_change(
    isvc: InferenceService,
    existing: list[dict[str, Any]],
    applied: list[tuple[str, str]],
    deleted: tuple[dict[str, Any], ...],
) -> None:
    plan = _plan(isvc, existing=existing)
    assert (_names(plan.apply), plan.delete) == (applied, deleted)


@pytest.mark.parametrize(
    "available",
    [
        pytest.param(AVAILABLE, id="a budget the mode no longer gets is deleted"),
        pytest.param(
            UNAVAILABLE,
            id="without a mode change a budget the mode no longer gets is deleted at once",
        ),
    ],
)
def test_a_budget_the_mode_no_longer_gets_is_deleted(available: tuple[str, str, str]) -> None:
    config = OperatorConfig(pdb=PdbDefaults(raw_deployment=None))
    existing = [_deployment(available=available), _pdb(RAW_SELECTOR)]
    plan = _plan(_isvc(), existing=existing, config=config)
    assert (_names(plan.apply), plan.delete) == (
        _objects("engine", pdb=False) + ENTRY,
        (_ref("PodDisruptionBudget", "svc-engine"),),
    )


def test_a_budget_moved_to_the_new_pods_carries_the_new_selector() -> None:
    existing = [_pdb(RAW_SELECTOR), _replica(readyReplicas=1, servingReplicas=1)]
    budget = next(
        o
        for o in _plan(NATIVE_ENGINE, existing=existing).apply
        if o["kind"] == "PodDisruptionBudget"
    )
    assert budget["spec"]["selector"] == NATIVE_SELECTOR
