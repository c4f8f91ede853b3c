"""What a status records as told: a RuntimeNotFound event is told once per message while its
condition stands."""

from __future__ import annotations

import pytest

from ome_operator.core.event_records import runtime_not_found_told, untold
from ome_operator.core.plans import Event


def _ready(status: str, reason: str, message: object = "runtime x not found") -> dict:
    return {
        "conditions": [
            {"type": "RuntimeReady", "status": status, "reason": reason, "message": message}
        ]
    }


@pytest.mark.parametrize(
    ("status", "told"),
    [
        pytest.param(
            _ready("False", "RuntimeNotFound"),
            "runtime x not found",
            id="a False RuntimeReady for that reason records its message",
        ),
        pytest.param(_ready("True", "RuntimeResolved"), None, id="a resolved runtime records none"),
        pytest.param(_ready("False", "RuntimeDisabled"), None, id="another reason records none"),
        pytest.param(
            _ready("False", "RuntimeNotFound", 12),
            None,
            id="a message that is not text records none",
        ),
        pytest.param(
            {"conditions": ["not a condition"]}, None, id="conditions that are not maps record none"
        ),
        pytest.param({"conditions": "none"}, None, id="conditions that are not a list record none"),
        pytest.param(None, None, id="no status records none"),
    ],
)
def test_what_a_status_records_as_told(status, told) -> None:
    assert runtime_not_found_told(status) == told


NOT_FOUND = Event("Warning", "RuntimeNotFound", "runtime x not found")
ADVISORY = Event("Warning", "RuntimeCompatibilityAdvisory", "runtime x not found")


@pytest.mark.parametrize(
    ("told", "left"),
    [
        pytest.param("runtime x not found", (ADVISORY,), id="the message told is not told again"),
        pytest.param("runtime y not found", (NOT_FOUND, ADVISORY), id="another message is told"),
        pytest.param(None, (NOT_FOUND, ADVISORY), id="with nothing told it is told"),
    ],
)
def test_only_a_runtime_not_found_already_told_is_left_out(told, left) -> None:
    assert untold((NOT_FOUND, ADVISORY), told) == left
