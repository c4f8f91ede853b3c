"""Rules of SPEC S2.8.2 (version syntax) and S2.8.3 (version operators)."""

import pytest

from ome_operator.core.selection import versions
from ome_operator.core.selection.versions import Version, parse_version, versions_match


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(versions.__all__) == ["Version", "parse_version", "versions_match"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1", Version((1,), False, ""), id="a single number is a version"),
        pytest.param("0", Version((0,), False, ""), id="zero itself has no leading zero"),
        pytest.param("1.12", Version((1, 12), False, ""), id="two numbers are a version"),
        pytest.param("0.6.0", Version((0, 6, 0), False, ""), id="three numbers are a version"),
        pytest.param("10.20.300", Version((10, 20, 300), False, ""), id="numbers have any width"),
        pytest.param("v1", Version((1,), True, ""), id="a lowercase v may precede one number"),
        pytest.param("v0.8.0", Version((0, 8, 0), True, ""), id="a lowercase v may precede three"),
        pytest.param(
            "4.45.0.dev0",
            Version((4, 45, 0), False, ".dev0"),
            id="a dev part after a dot follows the third number",
        ),
        pytest.param(
            "1.2.3.4", Version((1, 2, 3), False, ".4"), id="a fourth number is a dev suffix"
        ),
        pytest.param(
            "1.0.0-rc.1",
            Version((1, 0, 0), False, "-rc.1"),
            id="a pre-release after a dash follows the third number",
        ),
        pytest.param(
            "4.51.3-SAM-HQ-preview",
            Version((4, 51, 3), False, "-SAM-HQ-preview"),
            id="a pre-release may contain dashes",
        ),
        pytest.param(
            "1.0.0+build.5",
            Version((1, 0, 0), False, "+build.5"),
            id="a build after a plus follows the third number",
        ),
        pytest.param(
            "1.0.0+b-7", Version((1, 0, 0), False, "+b-7"), id="a build may contain dashes"
        ),
        pytest.param(
            "v1.0.0.dev0-rc1+b7",
            Version((1, 0, 0), True, ".dev0-rc1+b7"),
            id="dev, pre-release and build combine in that order into one suffix",
        ),
    ],
)
def test_parse_version_reads_valid_syntax(text: str, expected: Version) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="the empty string is invalid"),
        pytest.param("1.08.0", id="a leading zero is invalid"),
        pytest.param("01", id="a leading zero in the first number is invalid"),
        pytest.param("V1.0", id="a capital V is invalid"),
        pytest.param("vv1", id="only one v may precede the numbers"),
        pytest.param("v", id="a v without numbers is invalid"),
        pytest.param("1.2-beta", id="a suffix before the third number is invalid"),
        pytest.param("1-beta", id="a suffix after the first number is invalid"),
        pytest.param("1.0.0-", id="an empty pre-release is invalid"),
        pytest.param("1.0.0+", id="an empty build is invalid"),
        pytest.param("1.0.0.", id="an empty dev part is invalid"),
        pytest.param("1.0.0-rc..1", id="an empty piece inside a suffix is invalid"),
        pytest.param("1.0.0-rc+", id="an empty build after a pre-release is invalid"),
        pytest.param("1.", id="a trailing dot after the first number is invalid"),
        pytest.param("1..2", id="an empty number is invalid"),
        pytest.param("-1", id="a negative number is invalid"),
        pytest.param(" 1.0", id="surrounding whitespace is invalid"),
        pytest.param("a.b.c", id="letters are not numbers"),
        pytest.param("\u0661.0", id="only ASCII digits are numbers"),
    ],
)
def test_parse_version_rejects_invalid_syntax(text: str) -> None:
    assert parse_version(text) is None


@pytest.mark.parametrize(
    ("entry", "model", "operator", "expected"),
    [
        pytest.param("1.0.0", "1.0.0", "Equal", True, id="Equal matches the same version"),
        pytest.param("1.0.0", "1.0", "Equal", True, id="Equal counts a missing patch as 0"),
        pytest.param("1", "1.0.0", "Equal", True, id="Equal counts missing parts as 0"),
        pytest.param("v1.0", "1.0.0", "Equal", True, id="Equal ignores the v"),
        pytest.param("1.0.1", "1.0", "Equal", False, id="Equal rejects a different number"),
        pytest.param("4.36.0", "4.40.1", "Equal", False, id="Equal does not order versions"),
        pytest.param(
            "1.0.0-rc1", "1.0.0-rc1", "Equal", True, id="Equal matches identical suffixes"
        ),
        pytest.param("1.0.0+b1", "1.0.0+b2", "Equal", False, id="Equal compares the build as well"),
        pytest.param(
            "1.0.0-rc1", "1.0.0", "Equal", False, id="Equal rejects a suffix on the entry only"
        ),
        pytest.param(
            "1.0.0", "1.0.0.dev0", "Equal", False, id="Equal rejects a suffix on the model only"
        ),
        pytest.param(
            "v1.0.0-rc1", "1.0.0-rc1", "Equal", True, id="Equal ignores the v beside a suffix"
        ),
        pytest.param("", "1.0.0", "Equal", False, id="an unparseable entry version never matches"),
        pytest.param("1.0.0", "", "Equal", False, id="an unparseable model version never matches"),
        pytest.param(
            "1.08.0", "1.08.0", "Equal", False, id="identical unparseable versions never match"
        ),
    ],
)
def test_equal_compares_numbers_and_suffixes(
    entry: str, model: str, operator: str, expected: bool
) -> None:
    assert versions_match(entry, model, operator) is expected


@pytest.mark.parametrize(
    ("entry", "model", "operator", "expected"),
    [
        pytest.param(
            "4.40.0", "4.36.0", "GreaterThan", True, id="GreaterThan matches an older model"
        ),
        pytest.param(
            "4.36.0",
            "4.40.0",
            "GreaterThan",
            False,
            id="GreaterThan sets an upper limit on the model's version",
        ),
        pytest.param(
            "1.0.0", "1.0.0", "GreaterThan", False, id="GreaterThan rejects an equal version"
        ),
        pytest.param("2", "1", "GreaterThan", True, id="GreaterThan compares single numbers"),
        pytest.param(
            "2.0.0", "1.9.9", "GreaterThanOrEqual", True, id="GreaterThanOrEqual matches older"
        ),
        pytest.param(
            "1.0.0", "1.0.0", "GreaterThanOrEqual", True, id="GreaterThanOrEqual matches equal"
        ),
        pytest.param(
            "1.0", "1.1", "GreaterThanOrEqual", False, id="GreaterThanOrEqual rejects newer"
        ),
        pytest.param(
            "2.0", "1.0.0", "GreaterThan", False, id="GreaterThan needs the same number of parts"
        ),
        pytest.param(
            "1.0.0",
            "1.0",
            "GreaterThanOrEqual",
            False,
            id="GreaterThanOrEqual needs the same number of parts even when equal",
        ),
        pytest.param(
            "v2.0.0", "1.0.0", "GreaterThan", False, id="GreaterThan needs v on both or neither"
        ),
        pytest.param(
            "2.0.0", "v1.0.0", "GreaterThan", False, id="GreaterThan rejects v on the model only"
        ),
        pytest.param("v2.0.0", "v1.0.0", "GreaterThan", True, id="GreaterThan accepts v on both"),
        pytest.param(
            "2.0.0-rc1",
            "1.0.0",
            "GreaterThan",
            False,
            id="GreaterThan with a suffix on the entry needs an equal version",
        ),
        pytest.param(
            "2.0.0",
            "1.0.0.dev0",
            "GreaterThanOrEqual",
            False,
            id="GreaterThanOrEqual with a suffix on the model needs an equal version",
        ),
        pytest.param(
            "1.0.0-rc1",
            "1.0.0-rc1",
            "GreaterThan",
            True,
            id="GreaterThan with suffixes matches an equal version",
        ),
        pytest.param(
            "v1.0.0+b1",
            "1.0.0+b1",
            "GreaterThanOrEqual",
            True,
            id="GreaterThanOrEqual with suffixes ignores the v as Equal does",
        ),
        pytest.param(
            "1.08.0", "1.0.0", "GreaterThan", False, id="GreaterThan never matches unparseable"
        ),
    ],
)
def test_greater_than_operators_bound_the_model_from_above(
    entry: str, model: str, operator: str, expected: bool
) -> None:
    assert versions_match(entry, model, operator) is expected


@pytest.mark.parametrize(
    ("entry", "model", "operator", "expected"),
    [
        pytest.param("1.0.0", "1.0.0", "LessThan", True, id="LessThan matches an equal version"),
        pytest.param("1.0.0", "2.0.0", "LessThan", False, id="LessThan does not order versions"),
        pytest.param("1.0.0", "1.0.0", "equal", True, id="a lowercase operator acts like Equal"),
        pytest.param("1.0.0", "1.0.0", "", True, id="an empty operator acts like Equal"),
        pytest.param(
            "1.0.0", "1.0", "LessThan", False, id="another operator needs the same number of parts"
        ),
        pytest.param(
            "v1.0.0", "1.0.0", "equal", False, id="another operator needs the same v presence"
        ),
        pytest.param(
            "v1.0.0-rc1",
            "1.0.0-rc1",
            "LessThan",
            True,
            id="another operator with suffixes ignores the v as Equal does",
        ),
        pytest.param(
            "1.0.0-rc1",
            "1.0.0-rc2",
            "LessThan",
            False,
            id="another operator with suffixes needs identical suffixes",
        ),
    ],
)
def test_other_operators_act_like_a_strict_equal(
    entry: str, model: str, operator: str, expected: bool
) -> None:
    assert versions_match(entry, model, operator) is expected
