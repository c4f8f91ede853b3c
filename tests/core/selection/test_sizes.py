"""Rules of SPEC S2.9 (model size) and S2.11 rule 3 (size distance)."""

from fractions import Fraction

import pytest

from ome_operator.core.selection import sizes
from ome_operator.core.selection.sizes import (
    format_range,
    parse_size,
    size_distance,
    size_in_range,
)


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(sizes.__all__) == ["format_range", "parse_size", "size_distance", "size_in_range"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("70", Fraction(70), id="no suffix multiplies by one"),
        pytest.param("500M", Fraction(500_000_000), id="M multiplies by a million"),
        pytest.param("7B", Fraction(7_000_000_000), id="B multiplies by a billion"),
        pytest.param("1T", Fraction(10**12), id="T multiplies by a trillion"),
        pytest.param("3.21B", Fraction(3_210_000_000), id="a decimal point is allowed"),
        pytest.param("1.5T", Fraction(1_500_000_000_000), id="a decimal point works with T"),
        pytest.param("0.5", Fraction(1, 2), id="a bare decimal keeps its fraction exactly"),
        pytest.param(".5B", Fraction(500_000_000), id="digits may start after the point"),
        pytest.param("5.B", Fraction(5_000_000_000), id="digits may end before the point"),
        pytest.param("0", Fraction(0), id="zero parses as zero"),
        pytest.param("4b", Fraction(0), id="a lowercase suffix parses as 0"),
        pytest.param("7K", Fraction(0), id="an unknown suffix parses as 0"),
        pytest.param("", Fraction(0), id="the empty string parses as 0"),
        pytest.param("abc", Fraction(0), id="text parses as 0"),
        pytest.param("B", Fraction(0), id="a suffix without a number parses as 0"),
        pytest.param(".", Fraction(0), id="a point without digits parses as 0"),
        pytest.param("-1B", Fraction(0), id="a sign parses as 0"),
        pytest.param("+1B", Fraction(0), id="a plus sign parses as 0"),
        pytest.param("1e9", Fraction(0), id="an exponent parses as 0"),
        pytest.param("1.2.3B", Fraction(0), id="two decimal points parse as 0"),
        pytest.param("7BB", Fraction(0), id="two suffixes parse as 0"),
        pytest.param(" 7B", Fraction(0), id="whitespace parses as 0"),
        pytest.param("7 B", Fraction(0), id="a space before the suffix parses as 0"),
        pytest.param("1_000", Fraction(0), id="an underscore parses as 0"),
        pytest.param("inf", Fraction(0), id="infinity parses as 0"),
    ],
)
def test_parse_size_reads_a_decimal_with_an_uppercase_suffix(text: str, expected: Fraction) -> None:
    assert parse_size(text) == expected


def test_half_a_billion_equals_five_hundred_million_exactly() -> None:
    assert parse_size("0.5B") == parse_size("500M")


@pytest.mark.parametrize(
    ("size", "minimum", "maximum", "expected"),
    [
        pytest.param("1B", "500M", "2B", True, id="a size inside the range is in range"),
        pytest.param("500M", "500M", "2B", True, id="the minimum is inclusive"),
        pytest.param("2B", "500M", "2B", True, id="the maximum is inclusive"),
        pytest.param("0.5B", "500M", "500M", True, id="sizes compare as numbers, not text"),
        pytest.param("3.21B", "500M", "2B", False, id="a size above the maximum is out of range"),
        pytest.param("100M", "500M", "2B", False, id="a size below the minimum is out of range"),
        pytest.param("1M", None, "13B", True, id="a missing minimum bounds nothing below"),
        pytest.param("14B", None, "13B", False, id="a lone maximum still applies"),
        pytest.param("700B", "70B", None, True, id="a missing maximum bounds nothing above"),
        pytest.param("7B", "70B", None, False, id="a lone minimum still applies"),
        pytest.param("13B", None, None, True, id="a range without bounds admits every size"),
        pytest.param("3B", "4B", "2B", False, id="a minimum above the maximum rejects all"),
        pytest.param("2B", "2B", "4b", False, id="an unparseable maximum counts as 0"),
        pytest.param("4b", None, "1B", True, id="an unparseable size counts as 0"),
        pytest.param("1B", "", "2B", True, id="an empty minimum is present and counts as 0"),
        pytest.param("1B", None, "", False, id="an empty maximum is present and counts as 0"),
    ],
)
def test_size_in_range_applies_inclusive_optional_bounds(
    size: str, minimum: str | None, maximum: str | None, expected: bool
) -> None:
    assert size_in_range(size, minimum, maximum) is expected


@pytest.mark.parametrize(
    ("minimum", "maximum", "expected"),
    [
        pytest.param("500M", "2B", "[500M, 2B]", id="both bounds render as written"),
        pytest.param("70B", None, "[70B, inf)", id="a missing maximum renders as inf)"),
        pytest.param(None, "13B", "(-inf, 13B]", id="a missing minimum renders as (-inf"),
        pytest.param("2B", "4b", "[2B, 4b]", id="an unparseable bound renders as written"),
        pytest.param(None, None, "(-inf, inf)", id="a range without bounds renders open"),
        pytest.param("", "2B", "[, 2B]", id="an empty bound renders as written"),
    ],
)
def test_format_range_renders_bounds_as_written(
    minimum: str | None, maximum: str | None, expected: str
) -> None:
    assert format_range(minimum, maximum) == expected


def test_the_spec_example_is_out_of_range() -> None:
    assert not size_in_range("3.21B", "500M", "2B")
    assert format_range("500M", "2B") == "[500M, 2B]"


@pytest.mark.parametrize(
    ("size", "minimum", "maximum", "expected"),
    [
        pytest.param("7B", "1B", "13B", Fraction(12 * 10**9), id="both bounds add both distances"),
        pytest.param("20B", "1B", "13B", Fraction(26 * 10**9), id="distances are absolute"),
        pytest.param("7B", "1B", None, Fraction(6 * 10**9), id="a lone minimum gives its distance"),
        pytest.param(
            "7B", None, "13B", Fraction(6 * 10**9), id="a lone maximum gives its distance"
        ),
        pytest.param("7B", None, None, Fraction(0), id="no bounds give distance 0"),
        pytest.param(
            "0.5B", "100M", "1B", Fraction(900_000_000), id="distances are exact for decimals"
        ),
        pytest.param("7B", "", None, Fraction(7 * 10**9), id="an empty bound counts as 0"),
    ],
)
def test_size_distance_sums_distances_to_present_bounds(
    size: str, minimum: str | None, maximum: str | None, expected: Fraction
) -> None:
    assert size_distance(size, minimum, maximum) == expected
