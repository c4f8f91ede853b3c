"""VirtualDeployment (SPEC S3.5, OPEN-10): only the URL and Ready are written, nothing is looked
up or applied, and only the exact annotation value counts."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.core.reconciling import Outcome, ReconcilePlan
from ome_operator.models import InferenceService
from tests.core.reconciling.plans import (
    CONFIG,
    EARLIER,
    ENTRY,
    MODE,
    condition_of,
    deployment_of,
    isvc_of,
    names_of,
    objects_of,
    plan_of,
)

VIRTUAL = {MODE: "VirtualDeployment"}
VIRTUAL_READY = condition_of(
    "Ready", "True", "VirtualDeployment", "InferenceService is in VirtualDeployment mode"
)
VIRTUAL_URL = "http://svc.default.svc.cluster.local"


@pytest.mark.parametrize(
    ("isvc", "config", "existing", "expected"),
    [
        pytest.param(
            isvc_of(annotations=VIRTUAL),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="the URL is the cluster-local host and Ready is True, nothing else is written",
        ),
        pytest.param(
            isvc_of(annotations=VIRTUAL),
            OperatorConfig(cluster_domain="example.org"),
            [],
            ReconcilePlan(
                Outcome.SUCCESS,
                status={"url": "http://svc.default.svc.example.org", "conditions": [VIRTUAL_READY]},
            ),
            id="the URL uses the configured cluster domain",
        ),
        pytest.param(
            isvc_of(annotations=VIRTUAL, model="missing", runtime={"name": "missing"}),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="no model or runtime is looked up",
        ),
        pytest.param(
            isvc_of(annotations=VIRTUAL, engine=None),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="no engine is required",
        ),
        pytest.param(
            isvc_of(annotations=VIRTUAL),
            parse_operator_config({"deploy": "{"}),
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="a configuration problem does not stall it",
        ),
        pytest.param(
            isvc_of(annotations=VIRTUAL),
            CONFIG,
            [deployment_of(), deployment_of("decoder")],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="existing workloads are left alone, undeclared components included",
        ),
        pytest.param(
            isvc_of(
                annotations=VIRTUAL,
                status={
                    "conditions": [
                        condition_of("EngineReady", "True", at=EARLIER),
                        condition_of("Ready", "True", at=EARLIER),
                    ],
                    "url": "http://old",
                },
            ),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS,
                status={
                    "url": VIRTUAL_URL,
                    "conditions": [
                        condition_of("EngineReady", "True", at=EARLIER),
                        condition_of(
                            "Ready",
                            "True",
                            "VirtualDeployment",
                            "InferenceService is in VirtualDeployment mode",
                            at=EARLIER,
                        ),
                    ],
                },
            ),
            id="other conditions are kept and Ready keeps its transition time while True",
        ),
    ],
)
def test_virtual_deployment(
    isvc: InferenceService,
    config: OperatorConfig,
    existing: list[dict[str, Any]],
    expected: ReconcilePlan,
) -> None:
    assert plan_of(isvc, existing=existing, config=config) == expected


def test_virtual_deployment_only_counts_as_the_exact_value() -> None:
    plan = plan_of(isvc_of(annotations={MODE: "virtualdeployment"}))
    assert (plan.outcome, names_of(plan.apply)) == (Outcome.SUCCESS, objects_of("engine") + ENTRY)
