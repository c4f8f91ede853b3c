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
    _cond,
    _deployment,
    _isvc,
    _names,
    _objects,
    _plan,
)

VIRTUAL = {MODE: "VirtualDeployment"}
VIRTUAL_READY = _cond(
    "Ready", "True", "VirtualDeployment", "InferenceService is in VirtualDeployment mode"
)
VIRTUAL_URL = "http://svc.default.svc.cluster.local"


@pytest.mark.parametrize(
    ("isvc", "config", "existing", "expected"),
    [
        pytest.param(
            _isvc(annotations=VIRTUAL),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="the URL is the cluster-local host and Ready is True, nothing else is written",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL),
            OperatorConfig(cluster_domain="example.org"),
            [],
            ReconcilePlan(
                Outcome.SUCCESS,
                status={"url": "http://svc.default.svc.example.org", "conditions": [VIRTUAL_READY]},
            ),
            id="the URL uses the configured cluster domain",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL, model="missing", runtime={"name": "missing"}),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="no model or runtime is looked up",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL, engine=None),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="no engine is required",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL),
            parse_operator_config({"deploy": "{"}),
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="a configuration problem does not stall it",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL),
            CONFIG,
            [_deployment(), _deployment("decoder")],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="existing workloads are left alone, undeclared components included",
        ),
        pytest.param(
            _isvc(
                annotations=VIRTUAL,
                status={
                    "conditions": [
                        _cond("EngineReady", "True", at=EARLIER),
                        _cond("Ready", "True", at=EARLIER),
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
                        _cond("EngineReady", "True", at=EARLIER),
                        _cond(
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
    assert _plan(isvc, existing=existing, config=config) == expected


def test_virtual_deployment_only_counts_as_the_exact_value() -> None:
    plan = _plan(_isvc(annotations={MODE: "virtualdeployment"}))
    assert (plan.outcome, _names(plan.apply)) == (Outcome.SUCCESS, _objects("engine") + ENTRY)
