"""S7.2 denial 3: a component declares both leader and worker, or neither."""

from __future__ import annotations

import pytest

from tests.builders import make_isvc
from tests.core.admission.reviews import (
    AUTO,
    MODE,
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
            make_isvc(engine={"leader": {}}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "InvalidLeaderWorkerPairing: engine declares leader without worker; "
                "declare both or neither"
            ),
            id="3: an engine leader without worker is denied",
        ),
        pytest.param(
            make_isvc(engine={"worker": {"size": 1}}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "InvalidLeaderWorkerPairing: engine declares worker without leader; "
                "declare both or neither"
            ),
            id="3: an engine worker without leader is denied",
        ),
        pytest.param(
            make_isvc(decoder={"leader": {"runner": {"image": "x"}}}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "InvalidLeaderWorkerPairing: decoder declares leader without worker; "
                "declare both or neither"
            ),
            id="3: a decoder leader without worker is denied",
        ),
        pytest.param(
            make_isvc(engine={"leader": {}, "worker": {}}),
            MODELS,
            RUNTIMES,
            allowed_verdict(AUTO),
            id="3: an engine declaring both leader and worker passes",
        ),
        pytest.param(
            make_isvc(
                engine={"leader": {}, "annotations": {MODE: "OMENative"}},
                decoder={},
            ),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "InvalidLeaderWorkerPairing: engine declares leader without worker; "
                "declare both or neither"
            ),
            id="3: the pairing denial comes before the mode combination",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected
