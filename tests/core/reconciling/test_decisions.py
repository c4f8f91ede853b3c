"""The decisions a pass records for the metrics (SPEC S10): the outcome, the selection and its
exclusions, the named-runtime verdict and each component's mode."""

from __future__ import annotations

import pytest

from ome_operator.core.reconciling import Decisions, Outcome
from ome_operator.models import InferenceService, ModelResource, ServingRuntime
from tests.builders import entry, make_model, make_runtime
from tests.core.reconciling.plans import LLAMA, RT, annotated_isvc, isvc_of, plan_of


def test_the_outcomes_are_spelled_as_the_metric_labels() -> None:
    assert [o.value for o in Outcome] == ["success", "error", "parked"]


@pytest.mark.parametrize(
    ("isvc", "runtimes", "models", "expected"),
    [
        pytest.param(
            isvc_of(),
            (RT, make_runtime("off", disabled=True), make_runtime("big", size_range=("1B", "2B"))),
            (make_model("llama", modelParameterSize="7B"),),
            Decisions(
                selection=("selected", "cluster"),
                exclusions=("model_size", "disabled"),
                modes=(("engine", "RawDeployment"),),
            ),
            id="auto-selection records its outcome, scope and each exclusion's check",
        ),
        pytest.param(
            isvc_of(),
            (make_runtime("local", cluster=False),),
            (LLAMA,),
            Decisions(selection=("selected", "namespaced"), modes=(("engine", "RawDeployment"),)),
            id="a ServingRuntime is the namespaced scope",
        ),
        pytest.param(
            isvc_of(),
            (make_runtime("rt", formats=[entry()]),),
            (LLAMA,),
            Decisions(selection=("no_runtime", "none"), runtime_unresolved=True),
            id="a runtime that supports the model but does not qualify is not an exclusion",
        ),
        pytest.param(
            isvc_of(deploymentMode="OMENative", decoder={}, router=annotated_isvc("RawDeployment")),
            (RT,),
            (LLAMA,),
            Decisions(
                selection=("selected", "cluster"),
                modes=(
                    ("engine", "OMENative"),
                    ("decoder", "OMENative"),
                    ("router", "RawDeployment"),
                ),
            ),
            id="each declared component's resolved mode is recorded in reconcile order",
        ),
        pytest.param(
            isvc_of(runtime={"name": "rt"}, deploymentMode="RawDeployment"),
            (make_runtime("rt", engineConfig=annotated_isvc("OMENative")),),
            (LLAMA,),
            Decisions(named="advisory", modes=(("engine", "OMENative"),)),
            id="a named runtime used despite an advisory records advisory",
        ),
    ],
)
def test_the_decisions_of_a_pass(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    models: tuple[ModelResource, ...],
    expected: Decisions,
) -> None:
    assert plan_of(isvc, runtimes, models).decisions == expected
