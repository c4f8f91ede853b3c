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
    _allowed,
    _denied,
    _review,
    _typo,
)


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}, decoder={}),
            MODELS,
            RUNTIMES,
            _denied(
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
            _denied(
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
            _denied(
                'InvalidDeploymentModeCombination: engine deploymentMode="" does not match '
                'decoder deploymentMode="OMENative"; when either is OMENative, both must use the '
                "same value",
                _typo("omenative", "spec.engine.annotations", "OMENative"),
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
            _allowed(AUTO),
            id="4: different modes pass when neither is OMENative",
        ),
        pytest.param(
            make_isvc(deploymentMode="OMENative", decoder={}),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="4: the same OMENative mode on both passes",
        ),
        pytest.param(
            make_isvc(engine={"leader": {}, "worker": {}}, decoder={}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "OMENative"}})],
            _allowed(AUTO),
            id="4: the runtime's mode and the leader/worker shape are not consulted",
        ),
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="4: the combination is checked only when both engine and decoder are declared",
        ),
        pytest.param(
            make_isvc(model="missing", engine={"annotations": {MODE: "OMENative"}}, decoder={}),
            MODELS,
            RUNTIMES,
            _denied(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode=""; when either is OMENative, both must use the '
                "same value"
            ),
            id="4: the mode-combination denial comes before the model check",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert _review(isvc, models, runtimes) == expected
