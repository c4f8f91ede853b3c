"""S7.2 denial 2b: replica bounds. minReplicas and maxReplicas must be from 0 to 2147483647
(issue 8: they become an int32 spec.replicas) and minReplicas no greater than a non-zero
maxReplicas."""

from __future__ import annotations

import pytest

from tests.builders import make_isvc
from tests.core.admission.reviews import (
    COMPLETE,
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
            make_isvc(engine={**COMPLETE, "minReplicas": 10**30}),
            MODELS,
            RUNTIMES,
            denied_verdict(f"spec.engine.minReplicas must be from 0 to 2147483647 (got {10**30})"),
            id="2b: a minReplicas beyond int32 is denied",
        ),
        pytest.param(
            make_isvc(decoder={"maxReplicas": -1}),
            MODELS,
            RUNTIMES,
            denied_verdict("spec.decoder.maxReplicas must be from 0 to 2147483647 (got -1)"),
            id="2b: a negative maxReplicas is denied",
        ),
        pytest.param(
            make_isvc(router={"minReplicas": 3, "maxReplicas": 2}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                "spec.router.minReplicas (3) must not be greater than spec.router.maxReplicas (2)"
            ),
            id="2b: minReplicas above maxReplicas is denied",
        ),
        pytest.param(
            make_isvc(engine={**COMPLETE, "minReplicas": 3, "maxReplicas": 0}),
            MODELS,
            RUNTIMES,
            allowed_verdict(),
            id="2b: maxReplicas 0 is unset and bounds nothing",
        ),
        pytest.param(
            make_isvc(engine={**COMPLETE, "minReplicas": 0, "maxReplicas": 2147483647}),
            MODELS,
            RUNTIMES,
            allowed_verdict(),
            id="2b: the int32 range is allowed end to end",
        ),
        pytest.param(
            make_isvc(engine={"minReplicas": -2, "leader": {}}),
            MODELS,
            RUNTIMES,
            denied_verdict("spec.engine.minReplicas must be from 0 to 2147483647 (got -2)"),
            id="2b: replica bounds come before the leader/worker pairing",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected
