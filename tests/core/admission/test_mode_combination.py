"""S7.2 denial 4: when the engine or the decoder is OMENative, both must declare the same mode
(an invalid annotation value counts as no mode, OPEN-27)."""

from __future__ import annotations

import pytest

from tests.builders import make_isvc, make_runtime
from tests.core.admission.reviews import (
    AUTO,
    MODE,
    MODELS,
    RUNTIMES,
    allowed_verdict,
    denied_verdict,
    review_of,
    typo_message,
)


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}, decoder={}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode=""; when either is OMENative, both must use the '
                "same value"
            ),
            id="4: an OMENative engine with a decoder declaring no mode is denied",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                decoder={"annotations": {MODE: "RawDeployment"}},
            ),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode="RawDeployment"; when either is OMENative, both '
                "must use the same value"
            ),
            id="4: spec.deploymentMode is the mode of a component without its own annotation",
        ),
        pytest.param(
            make_isvc(
                engine={"annotations": {MODE: "omenative"}},
                decoder={"annotations": {MODE: "OMENative"}},
            ),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'InvalidDeploymentModeCombination: engine deploymentMode="" does not match '
                'decoder deploymentMode="OMENative"; when either is OMENative, both must use the '
                "same value",
                typo_message("omenative", "spec.engine.annotations", "OMENative"),
            ),
            id="4: an invalid annotation value counts as no mode (OPEN-27)",
        ),
        pytest.param(
            make_isvc(
                engine={"annotations": {MODE: "RawDeployment"}},
                decoder={"annotations": {MODE: "MultiNode"}},
            ),
            MODELS,
            RUNTIMES,
            allowed_verdict(AUTO),
            id="4: different modes pass when neither is OMENative",
        ),
        pytest.param(
            make_isvc(deploymentMode="OMENative", decoder={}),
            MODELS,
            RUNTIMES,
            allowed_verdict(AUTO),
            id="4: the same OMENative mode on both passes",
        ),
        pytest.param(
            make_isvc(engine={"leader": {}, "worker": {}}, decoder={}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "OMENative"}})],
            allowed_verdict(AUTO),
            id="4: the runtime's mode and the leader/worker shape are not consulted",
        ),
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            RUNTIMES,
            allowed_verdict(AUTO),
            id="4: the combination is checked only when both engine and decoder are declared",
        ),
        pytest.param(
            make_isvc(model="missing", engine={"annotations": {MODE: "OMENative"}}, decoder={}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode=""; when either is OMENative, both must use the '
                "same value"
            ),
            id="4: the mode-combination denial comes before the model check",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected
