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
    annotated_isvc,
    deployment_of,
    isvc_of,
    lws_of,
    names_of,
    objects_of,
    pdb_of,
    plan_of,
    ref_to,
    replica_of,
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
            isvc_of(),
            OperatorConfig(pdb=PdbDefaults(raw_deployment=None)),
            objects_of("engine", pdb=False) + ENTRY,
            id="without a default or a field, a RawDeployment component gets no budget",
        ),
        pytest.param(
            isvc_of(deploymentMode="OMENative"),
            OperatorConfig(pdb=PdbDefaults(ome_native=None)),
            objects_of("engine", "OMENative", pdb=False) + ENTRY,
            id="without a default or a field, an OMENative component gets no budget",
        ),
        pytest.param(
            isvc_of(engine={"maxUnavailable": 1}),
            OperatorConfig(pdb=PdbDefaults(raw_deployment=None)),
            objects_of("engine") + ENTRY,
            id="a component field gives a budget without a default",
        ),
    ],
)
def test_the_budget_follows_the_configuration(
    isvc: InferenceService, config: OperatorConfig, expected: list[tuple[str, str]]
) -> None:
    assert names_of(plan_of(isvc, config=config).apply) == expected


MULTINODE_ENGINE = isvc_of(engine=annotated_isvc("MultiNode"))
NATIVE_OBJECTS = objects_of("engine", "OMENative", pdb=False)


@pytest.mark.parametrize(
    ("isvc", "existing", "applied", "deleted"),
    [
        pytest.param(
            NATIVE_ENGINE,
            [deployment_of(), pdb_of(RAW_SELECTOR)],
            NATIVE_OBJECTS + ENTRY,
            (),
            id="the old budget keeps protecting the old pods while the new workload is not ready",
        ),
        pytest.param(
            NATIVE_ENGINE,
            [deployment_of(), pdb_of(RAW_SELECTOR), replica_of(readyReplicas=1, servingReplicas=1)],
            objects_of("engine", "OMENative") + ENTRY,
            (),
            id="the budget moves to the new pods once the new workload is ready",
        ),
        pytest.param(
            isvc_of(),
            [
                replica_of(readyReplicas=1),
                pdb_of(NATIVE_SELECTOR),
                deployment_of(available=UNAVAILABLE),
            ],
            objects_of("engine", pdb=False) + ENTRY,
            (),
            id="back to RawDeployment: the budget waits for the Deployment to be available",
        ),
        pytest.param(
            MULTINODE_ENGINE,
            [deployment_of(), pdb_of(RAW_SELECTOR), lws_of(available=None)],
            objects_of("engine", "MultiNode", pdb=False) + ENTRY,
            (),
            id="to MultiNode: the old budget stays while the LeaderWorkerSet is not available",
        ),
        pytest.param(
            MULTINODE_ENGINE,
            [deployment_of(), pdb_of(RAW_SELECTOR), lws_of()],
            objects_of("engine", "MultiNode", pdb=False) + ENTRY,
            (ref_to("PodDisruptionBudget", "svc-engine"),),
            id="to MultiNode: the budget is deleted once the LeaderWorkerSet is available",
        ),
        pytest.param(
            isvc_of(),
            [deployment_of(available=UNAVAILABLE), pdb_of(RAW_SELECTOR)],
            objects_of("engine") + ENTRY,
            (),
            id="without a mode change the budget is updated whatever the readiness",
        ),
        pytest.param(
            isvc_of(),
            [deployment_of(available=UNAVAILABLE), pdb_of({"matchLabels": {"edited": "by-hand"}})],
            objects_of("engine") + ENTRY,
            (),
            id="without a mode change a hand-edited selector is reset at once",
        ),
        pytest.param(
            isvc_of(decoder={}, router=annotated_isvc("MultiNode"), deploymentMode="OMENative"),
            [deployment_of(), pdb_of(RAW_SELECTOR)],
            NATIVE_OBJECTS + objects_of("decoder", "OMENative"),
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
    plan = plan_of(isvc, existing=existing)
    assert (names_of(plan.apply), plan.delete) == (applied, deleted)


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
    existing = [deployment_of(available=available), pdb_of(RAW_SELECTOR)]
    plan = plan_of(isvc_of(), existing=existing, config=config)
    assert (names_of(plan.apply), plan.delete) == (
        objects_of("engine", pdb=False) + ENTRY,
        (ref_to("PodDisruptionBudget", "svc-engine"),),
    )


def test_a_budget_moved_to_the_new_pods_carries_the_new_selector() -> None:
    existing = [pdb_of(RAW_SELECTOR), replica_of(readyReplicas=1, servingReplicas=1)]
    budget = next(
        o
        for o in plan_of(NATIVE_ENGINE, existing=existing).apply
        if o["kind"] == "PodDisruptionBudget"
    )
    assert budget["spec"]["selector"] == NATIVE_SELECTOR
