"""Defence in depth for the pod policy (docs/configuration.md, "podPolicy"): a component whose
declared pod fields the policy refuses (an InferenceService admitted before the policy, or past
the webhook) is a component failure with reason ``PodPolicyDenied`` and the webhook's sentence;
nothing is written for it or any later component. A namespace exception applies as at
admission."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ome_operator.core.conditions import COMPONENT_CONDITION
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.core.reconciling import Event, Outcome, ReconcilePlan, Snapshot, reconcile
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import InferenceService
from tests.core.reconciling.plans import LLAMA, NOW, RT, condition_of, isvc_of, names_of, objects_of

HOST_NETWORK = (
    "spec.{0}.hostNetwork: host namespaces are refused by the pod policy (rule hostNamespaces)"
)
EXEMPT = parse_operator_config(
    {
        "podPolicy": json.dumps(
            {
                "exceptions": [
                    {
                        "namespaceSelector": {"matchLabels": {"host-network": "allowed"}},
                        "relax": ["hostNamespaces"],
                    }
                ]
            }
        )
    }
)

DEFAULTS = OperatorConfig()


def _plan(
    isvc: InferenceService,
    config: OperatorConfig = DEFAULTS,
    labels: dict[str, str] | None = None,
) -> ReconcilePlan:
    snapshot = Snapshot(
        RuntimeCatalog.of((RT,)),
        ModelCatalog.of((LLAMA,)),
        now=NOW,
        config=config,
        namespace_labels=labels or {},
    )
    return reconcile(isvc, snapshot)


def _told(component: str) -> tuple[dict[str, Any], tuple[Event, ...]]:
    message = f"{component} component: {HOST_NETWORK.format(component)}"
    kinds = sorted([COMPONENT_CONDITION[component], "Ready"])
    conditions = [condition_of(k, "False", "PodPolicyDenied", message) for k in kinds]
    return {"conditions": conditions}, (Event("Warning", "PodPolicyDenied", message),)


@pytest.mark.parametrize(
    ("isvc", "component", "applied"),
    [
        pytest.param(
            isvc_of(engine={"hostNetwork": True}),
            "engine",
            [],
            id="a refused engine writes nothing",
        ),
        pytest.param(
            isvc_of(decoder={}, router={"hostNetwork": True}),
            "router",
            objects_of("engine") + objects_of("decoder"),
            id="a refused router stops only the router",
        ),
    ],
)
def test_a_refused_component_is_a_component_failure(
    isvc: InferenceService, component: str, applied: list[tuple[str, str]]
) -> None:
    plan = _plan(isvc)
    status, events = _told(component)
    assert (plan.outcome, names_of(plan.apply), plan.status, plan.events[-1:]) == (
        Outcome.ERROR,
        applied,
        status,
        events,
    )
    assert plan.decisions.component_errors == ((component, "pod_policy"),)


def test_a_namespace_exception_lets_the_component_be_written() -> None:
    plan = _plan(isvc_of(engine={"hostNetwork": True}), EXEMPT, {"host-network": "allowed"})
    assert (plan.outcome, names_of(plan.apply)) == (
        Outcome.SUCCESS,
        [*objects_of("engine"), ("Service", "svc")],
    )
    deployment = next(o for o in plan.apply if o["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["hostNetwork"] is True
