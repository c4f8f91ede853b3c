"""S7.2 denial 2: the PodDisruptionBudget fields of each component (minAvailable or
maxUnavailable, never both; a non-negative integer or a whole percentage up to 100%), checked in
engine, decoder, router order."""

from __future__ import annotations

import pytest

from tests.builders import make_isvc
from tests.core.admission.reviews import (
    AUTO,
    MODELS,
    RUNTIMES,
    allowed_verdict,
    denied_verdict,
    review_of,
)


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        pytest.param(
            make_isvc(engine={"minAvailable": 1, "maxUnavailable": 1}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.engine.minAvailable and spec.engine.maxUnavailable cannot both be set"
            ),
            id="2: engine minAvailable and maxUnavailable together are denied",
        ),
        pytest.param(
            make_isvc(decoder={"minAvailable": "50%", "maxUnavailable": 0}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.decoder.minAvailable and spec.decoder.maxUnavailable cannot both be set"
            ),
            id="2: decoder minAvailable and maxUnavailable together are denied",
        ),
        pytest.param(
            make_isvc(router={"minAvailable": 0, "maxUnavailable": "0%"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.router.minAvailable and spec.router.maxUnavailable cannot both be set"
            ),
            id="2: router minAvailable and maxUnavailable together are denied",
        ),
        pytest.param(
            make_isvc(engine={"minAvailable": -1}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.engine.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a negative integer is denied",
        ),
        pytest.param(
            make_isvc(engine={"maxUnavailable": "101%"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.engine.maxUnavailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a percentage above 100% is denied",
        ),
        pytest.param(
            make_isvc(router={"maxUnavailable": "12.5%"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.router.maxUnavailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a fractional percentage is denied",
        ),
        pytest.param(
            make_isvc(decoder={"minAvailable": "one"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.decoder.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a string that is not a percentage is denied",
        ),
        pytest.param(
            make_isvc(engine={"minAvailable": "-5%"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.engine.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a negative percentage is denied",
        ),
        pytest.param(
            make_isvc(
                engine={"minAvailable": 0},
                decoder={"maxUnavailable": "100%"},
                router={"minAvailable": "0%"},
            ),
            MODELS,
            RUNTIMES,
            allowed_verdict(AUTO),
            id="2: 0, 0% and 100% are valid PDB values",
        ),
        pytest.param(
            make_isvc(
                engine={"minAvailable": "x"}, decoder={"minAvailable": 1, "maxUnavailable": 1}
            ),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.engine.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: components are checked in engine, decoder, router order",
        ),
        pytest.param(
            make_isvc(engine={"maxUnavailable": -1, "leader": {}}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.engine.maxUnavailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: the PDB denial comes before the leader/worker pairing",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected
