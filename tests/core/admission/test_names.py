"""The InferenceService's name (SPEC S7.2): it must make valid object names and label values,
and it is checked before every other rule."""

from __future__ import annotations

import pytest

from ome_operator.core.admission import AdmissionVerdict
from tests.builders import make_isvc
from tests.core.admission.reviews import AUTO, allowed_verdict, denied_verdict, review_of

_TOO_LONG = (
    "metadata.name must be no more than 63 characters (got {}): it is the value of the "
    "ome.io/inferenceservice label on every object the InferenceService owns"
)


def _not_a_label(name: str) -> str:
    return (
        f'metadata.name "{name}" must be a DNS-1035 label (lower case letters, digits and '
        "'-', starting with a letter and ending with a letter or digit): it names the "
        "InferenceService's Services"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("a" * 63, allowed_verdict(AUTO), id="63 characters are a label value"),
        pytest.param("a" * 64, denied_verdict(_TOO_LONG.format(64)), id="64 characters are not"),
        pytest.param("llama-3-70b", allowed_verdict(AUTO), id="letters, digits and dashes"),
        pytest.param(
            "3b-llama", denied_verdict(_not_a_label("3b-llama")), id="starts with a digit"
        ),
        pytest.param(
            "llama.v2", denied_verdict(_not_a_label("llama.v2")), id="a dot: no Service name"
        ),
        pytest.param("llama-", denied_verdict(_not_a_label("llama-")), id="ends with a dash"),
        pytest.param(
            "x" * 70 + ".v2",
            denied_verdict(_TOO_LONG.format(73)),
            id="the length is checked first",
        ),
    ],
)
def test_the_name_must_make_valid_object_names_and_label_values(
    name: str, expected: AdmissionVerdict
) -> None:
    assert review_of(make_isvc(name)) == expected


def test_the_name_is_checked_before_every_other_rule() -> None:
    assert review_of(make_isvc("3b", model=None)) == denied_verdict(_not_a_label("3b"))
