"""Rules of SPEC S5.5: where a component's PodDisruptionBudget comes from, when resolving it fails,
and how OMENative turns it into an integer minAvailable counted in pods (OPEN-21)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.operator_config import PdbDefaults
from ome_operator.core.rendering import (
    PdbResolutionError,
    render_component,
    resolve_pdb,
)
from ome_operator.core.rendering.disruption_budgets import ome_native_min_available
from tests.builders import make_isvc, make_runtime
from tests.core.rendering.contexts import make_context

MODE = "ome.io/deploymentMode"


def _resolve(
    isvc_engine: dict[str, Any],
    runtime_engine: dict[str, Any] | None = None,
    defaults: PdbDefaults | None = None,
) -> Any:
    isvc = make_isvc("llama", model=None, engine=isvc_engine)
    runtime = make_runtime("vllm", engineConfig=runtime_engine)
    return resolve_pdb(make_context(isvc, runtime, pdb_defaults=defaults))


@pytest.mark.parametrize(
    ("isvc_engine", "runtime_engine", "defaults", "expected"),
    [
        pytest.param(
            {}, None, None, ("maxUnavailable", 1), id="nothing set uses the mode's default"
        ),
        pytest.param(
            {},
            None,
            PdbDefaults(raw_deployment=None),
            None,
            id="nothing set and no default for the mode gives no PDB",
        ),
        pytest.param(
            {"annotations": {MODE: "OMENative"}},
            None,
            PdbDefaults(ome_native=("minAvailable", "50%")),
            ("minAvailable", "50%"),
            id="an OMENative component uses the omeNative default",
        ),
        pytest.param(
            {"annotations": {MODE: "MultiNode"}, "minAvailable": 1},
            None,
            None,
            None,
            id="a MultiNode component never gets a PDB",
        ),
        pytest.param(
            {"minAvailable": 0},
            None,
            None,
            ("minAvailable", 0),
            id="minAvailable 0 on the ISVC is a budget that opts out of the default",
        ),
        pytest.param(
            {},
            {"maxUnavailable": "10%"},
            None,
            ("maxUnavailable", "10%"),
            id="the runtime config's field applies when the ISVC sets none",
        ),
        pytest.param(
            {"maxUnavailable": 2},
            {"maxUnavailable": "10%"},
            None,
            ("maxUnavailable", 2),
            id="the ISVC's field wins over the runtime's same field",
        ),
        pytest.param(
            {"minAvailable": "100%"},
            None,
            PdbDefaults(raw_deployment=None),
            ("minAvailable", "100%"),
            id="a field set without a default for the mode still gives a PDB",
        ),
    ],
)
def test_budget_source(
    isvc_engine: dict[str, Any],
    runtime_engine: dict[str, Any] | None,
    defaults: PdbDefaults | None,
    expected: Any,
) -> None:
    assert _resolve(isvc_engine, runtime_engine, defaults) == expected


@pytest.mark.parametrize(
    ("isvc_engine", "runtime_engine", "message"),
    [
        pytest.param(
            {"minAvailable": 1},
            {"maxUnavailable": 1},
            "failed to resolve engine PodDisruptionBudget: "
            "runtime vllm engineConfig.maxUnavailable "
            "and spec.engine.minAvailable are both set; only one of minAvailable or "
            "maxUnavailable may be set",
            id="the runtime setting one field and the ISVC the other fails",
        ),
        pytest.param(
            {},
            {"maxUnavailable": "half"},
            "failed to resolve engine PodDisruptionBudget: "
            "runtime vllm engineConfig.maxUnavailable "
            'must be a non-negative integer or a percentage from 0% to 100% (got "half")',
            id="a runtime value that is no percentage fails",
        ),
        pytest.param(
            {"maxUnavailable": 1},
            {"maxUnavailable": "150%"},
            "failed to resolve engine PodDisruptionBudget: "
            "runtime vllm engineConfig.maxUnavailable "
            'must be a non-negative integer or a percentage from 0% to 100% (got "150%")',
            id="an invalid runtime value fails even when the ISVC overrides it",
        ),
        pytest.param(
            {},
            {"minAvailable": -1},
            "failed to resolve engine PodDisruptionBudget: runtime vllm engineConfig.minAvailable "
            "must be a non-negative integer or a percentage from 0% to 100% (got -1)",
            id="a negative runtime value fails",
        ),
        pytest.param(
            {"minAvailable": "1"},
            None,
            "failed to resolve engine PodDisruptionBudget: spec.engine.minAvailable must be a "
            'non-negative integer or a percentage from 0% to 100% (got "1")',
            id="an ISVC string that is no percentage fails",
        ),
        pytest.param(
            {"minAvailable": 1, "maxUnavailable": 1},
            None,
            "failed to resolve engine PodDisruptionBudget: spec.engine.minAvailable and "
            "spec.engine.maxUnavailable cannot both be set",
            id="both fields on the ISVC fail",
        ),
        pytest.param(
            {},
            {"minAvailable": 1, "maxUnavailable": 1},
            "failed to resolve engine PodDisruptionBudget: runtime vllm engineConfig.minAvailable "
            "and engineConfig.maxUnavailable cannot both be set",
            id="both fields on the runtime fail",
        ),
    ],
)
def test_budget_resolution_fails(
    isvc_engine: dict[str, Any], runtime_engine: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(PdbResolutionError) as caught:
        _resolve(isvc_engine, runtime_engine)
    assert str(caught.value) == message
    assert caught.value.component == "engine"


@pytest.mark.parametrize(
    ("budget", "total", "expected"),
    [
        pytest.param(("minAvailable", 2), 6, 2, id="minAvailable n is n"),
        pytest.param(("minAvailable", "50%"), 5, 3, id="minAvailable p% rounds up"),
        pytest.param(("minAvailable", "0%"), 5, 0, id="minAvailable 0% is 0"),
        pytest.param(("minAvailable", "100%"), 4, 4, id="minAvailable 100% is every pod"),
        pytest.param(("maxUnavailable", 1), 6, 5, id="maxUnavailable n is total minus n"),
        pytest.param(
            ("maxUnavailable", "50%"), 3, 1, id="maxUnavailable p% is total minus ceil(p% of total)"
        ),
        pytest.param(("maxUnavailable", "25%"), 6, 4, id="maxUnavailable 25% of 6 leaves 4"),
        pytest.param(("maxUnavailable", 10), 6, 0, id="maxUnavailable above total leaves 0"),
    ],
)
def test_ome_native_min_available(budget: Any, total: int, expected: int) -> None:
    assert ome_native_min_available(budget, total) == expected


@pytest.mark.parametrize(
    ("engine", "runtime_engine", "expected_spec"),
    [
        pytest.param(
            {"minReplicas": 4, "minAvailable": "50%"},
            None,
            {"minAvailable": 2},
            id="single-pod Instances count one pod each",
        ),
        pytest.param(
            {"minReplicas": 2, "leader": {}, "worker": {"size": 3}, "maxUnavailable": "25%"},
            None,
            {"minAvailable": 6},
            id="leader and worker Instances count 1 + worker.size pods each",
        ),
        pytest.param(
            {"minReplicas": 0},
            None,
            {"minAvailable": 0},
            id="minReplicas 0 still counts the one Instance the InferenceReplica keeps",
        ),
        pytest.param(
            {"minReplicas": 2},
            {"worker": {"size": 1}, "leader": {}, "minAvailable": "100%"},
            {"minAvailable": 4},
            id="a runtime's worker and budget count too",
        ),
    ],
)
def test_ome_native_pdb_is_counted_in_pods(
    engine: dict[str, Any], runtime_engine: dict[str, Any] | None, expected_spec: dict[str, Any]
) -> None:
    isvc = make_isvc("llama", model=None, deploymentMode="OMENative", engine=engine)
    ctx = make_context(isvc, make_runtime("vllm", engineConfig=runtime_engine))
    pdb = render_component(ctx)[-1]
    assert pdb["kind"] == "PodDisruptionBudget"
    assert pdb["spec"] == {
        **expected_spec,
        "selector": {
            "matchLabels": {
                "component": "engine",
                "ome.io/inferenceservice": "llama",
                "ome.io/managed-by": "OMENative",
            }
        },
    }


@pytest.mark.parametrize(
    ("mode", "defaults", "kinds"),
    [
        pytest.param(
            "RawDeployment",
            PdbDefaults(raw_deployment=None),
            ["Deployment", "Service"],
            id="a RawDeployment component without a budget gets no PDB",
        ),
        pytest.param(
            "OMENative",
            PdbDefaults(ome_native=None),
            ["InferenceReplica", "Service", "Service"],
            id="an OMENative component without a budget gets no PDB",
        ),
    ],
)
def test_no_budget_means_no_pdb_object(mode: str, defaults: PdbDefaults, kinds: list[str]) -> None:
    isvc = make_isvc("llama", model=None, deploymentMode=mode)
    ctx = make_context(isvc, make_runtime("vllm"), pdb_defaults=defaults)
    assert [obj["kind"] for obj in render_component(ctx)] == kinds
