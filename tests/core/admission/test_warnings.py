"""InferenceService warnings (SPEC S7.3.3, S16.3): deploymentStrategy outside RawDeployment and
mode typos, after the selection warning, in that order."""

from __future__ import annotations

import pytest

from ome_operator.core.admission import AdmissionVerdict
from ome_operator.models import InferenceService
from tests.builders import make_isvc
from tests.core.admission.reviews import AUTO, COMPLETE, MODE, review_of, typo_message


def _strategy(component: str, mode: str) -> str:
    return (
        f'{component}.deploymentStrategy is set but deploymentMode is "{mode}"; '
        "deploymentStrategy applies only to RawDeployment and is ignored here \u2014 use "
        f"{component}.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
    )


@pytest.mark.parametrize(
    ("isvc", "warnings"),
    [
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                engine={**COMPLETE, "deploymentStrategy": {"type": "Recreate"}},
                decoder={"deploymentStrategy": {}},
                router={"deploymentStrategy": {}},
            ),
            (
                _strategy("engine", "OMENative"),
                _strategy("decoder", "OMENative"),
                _strategy("router", "OMENative"),
            ),
            id="deploymentStrategy warns per component, in engine, decoder, router order",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "MultiNode"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_strategy("engine", "MultiNode"),),
            id="a valid metadata annotation mode triggers the deploymentStrategy warning",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "VirtualDeployment"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_strategy("engine", "VirtualDeployment"),),
            id="VirtualDeployment in the metadata annotation triggers the warning",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                annotations={MODE: "RawDeployment"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_strategy("engine", "OMENative"),),
            id="spec.deploymentMode comes before the metadata annotation",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="RawDeployment",
                annotations={MODE: "OMENative"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (),
            id="no deploymentStrategy warning when the ISVC-level mode is RawDeployment",
        ),
        pytest.param(
            make_isvc(engine={**COMPLETE, "deploymentStrategy": {}}),
            (),
            id="no deploymentStrategy warning without an ISVC-level mode",
        ),
        pytest.param(
            make_isvc(
                engine={
                    **COMPLETE,
                    "deploymentStrategy": {},
                    "annotations": {MODE: "OMENative"},
                }
            ),
            (),
            id="no deploymentStrategy warning for a component-annotation mode (OPEN-29)",
        ),
        pytest.param(
            make_isvc(deploymentMode="OMENative", engine=COMPLETE, router={}),
            (),
            id="no deploymentStrategy warning for components that do not set one",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "omenative"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (typo_message("omenative", "metadata.annotations", "OMENative"),),
            id="an invalid metadata mode gives a typo warning and no deploymentStrategy warning",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "MultiNodeRayVLLM"},
                engine={**COMPLETE, "annotations": {MODE: "rawdeployment"}},
                decoder={"annotations": {MODE: "multinode"}},
                router={"annotations": {MODE: ""}},
            ),
            (
                typo_message("MultiNodeRayVLLM", "metadata.annotations"),
                typo_message("rawdeployment", "spec.engine.annotations", "RawDeployment"),
                typo_message("multinode", "spec.decoder.annotations", "MultiNode"),
                typo_message("", "spec.router.annotations"),
            ),
            id="typo warnings name each place: metadata, then engine, decoder, router",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                engine={"deploymentStrategy": {}, "annotations": {MODE: "omeNative"}},
            ),
            (
                AUTO,
                _strategy("engine", "OMENative"),
                typo_message("omeNative", "spec.engine.annotations", "OMENative"),
            ),
            id="warnings come as selection, deploymentStrategy, then typos",
        ),
    ],
)
def test_inference_service_warnings(isvc: InferenceService, warnings: tuple[str, ...]) -> None:
    assert review_of(isvc) == AdmissionVerdict(True, "", warnings)
