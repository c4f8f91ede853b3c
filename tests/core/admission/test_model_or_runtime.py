"""S7.2 denial 1: at least one of spec.model or spec.runtime, before every later denial."""

from __future__ import annotations

import pytest

from tests.builders import make_isvc
from tests.core.admission.reviews import (
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
            make_isvc(model=None),
            MODELS,
            RUNTIMES,
            denied_verdict("at least one of spec.model or spec.runtime must be set"),
            id="1: neither spec.model nor spec.runtime is denied",
        ),
        pytest.param(
            make_isvc(model=None, engine={"minAvailable": 1, "maxUnavailable": 1, "leader": {}}),
            MODELS,
            RUNTIMES,
            denied_verdict("at least one of spec.model or spec.runtime must be set"),
            id="1: the model-or-runtime denial comes before every later one",
        ),
        pytest.param(
            make_isvc(model=None, runtime={"name": "rt"}),
            MODELS,
            RUNTIMES,
            allowed_verdict(),
            id="1: spec.runtime alone is enough",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected
