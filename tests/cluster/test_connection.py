"""kubectl's connection flags are parsed as kubectl parses them."""

import pytest

from ome_operator.cluster.connection import parse_request_timeout, parse_user_extra
from ome_operator.cluster.objects import ReadError

TIMEOUT_ERROR = (
    "invalid timeout value. Timeout must be a single integer in seconds, "
    "or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("0", None, id="zero means no timeout"),
        pytest.param("0s", None, id="a zero duration means no timeout"),
        pytest.param("5", 5.0, id="a plain integer is seconds"),
        pytest.param("5s", 5.0, id="seconds"),
        pytest.param("2m", 120.0, id="minutes"),
        pytest.param("1h", 3600.0, id="hours"),
        pytest.param("1m30s", 90.0, id="a compound duration"),
        pytest.param("250ms", 0.25, id="milliseconds"),
        pytest.param("1.5s", 1.5, id="a fractional duration"),
        pytest.param("abc", TIMEOUT_ERROR, id="not a duration"),
        pytest.param("5x", TIMEOUT_ERROR, id="an unknown unit"),
        pytest.param("-1s", TIMEOUT_ERROR, id="a negative duration"),
        pytest.param("", TIMEOUT_ERROR, id="nothing"),
    ],
)
def test_request_timeout_is_parsed_like_kubectl(text, expected):
    try:
        result = parse_request_timeout(text)
    except ReadError as exc:
        result = str(exc)
    assert result == expected


def test_user_extra_values_group_by_key_in_flag_order():
    extra = parse_user_extra(("scopes=view", "team=ml", "scopes=edit", "empty="))
    assert extra == {"scopes": ("view", "edit"), "team": ("ml",), "empty": ("",)}
