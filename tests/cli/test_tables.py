"""Rules of the `kubectl ome runtime` text tables (SPEC S11, S12.7, S13.5)."""

from __future__ import annotations

import hashlib
import os

import pytest

from ome_operator.cli import tables
from ome_operator.cli.tables import (
    format_explain_table,
    format_table,
    shorten_value,
    terminal_width,
    wrap_cell,
)

HEADER_80 = "RUNTIME        SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON"
#: The S12.7 illustration, verbatim.
ILLUSTRATION = """\
vllm-legacy    Cluster      No           -          -        runtime is disabled
srt-llama-1b   Cluster      No           -          -        model size 3.21B is
                                                             outside supported
                                                             range [500M, 2B]
"""
NAMESPACED_YES = ("vllm-llama", "Namespaced", "Yes", "1", "10", "-")
DISABLED = ("vllm-legacy", "Cluster", "No", "-", "-", "runtime is disabled")
OUT_OF_RANGE = (
    "srt-llama-1b",
    "Cluster",
    "No",
    "-",
    "-",
    "model size 3.21B is outside supported range [500M, 2B]",
)


def _lines(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


def _sha8(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        pytest.param("", 10, [""], id="an empty cell is one empty line"),
        pytest.param("   ", 10, [""], id="a cell of spaces is one empty line"),
        pytest.param("abc", 3, ["abc"], id="a word of exactly w characters is not cut"),
        pytest.param("aa bb cc dd", 5, ["aa bb", "cc dd"], id="words fill each line greedily"),
        pytest.param("aa  bb", 10, ["aa bb"], id="runs of spaces separate words like one space"),
        pytest.param(
            "aaa bbbb", 6, ["aaa", "bbbb"], id="a word that does not fit starts a new line"
        ),
        pytest.param(
            "abcdefghij",
            4,
            ["abcd", "efgh", "ij"],
            id="without break chars a word is cut at exactly w",
        ),
        pytest.param("ab.cdefg", 4, ["ab.", "cdef", "g"], id="a word is cut right after a dot"),
        pytest.param("ab:cdefg", 4, ["ab:", "cdef", "g"], id="a word is cut right after a colon"),
        pytest.param("ab-cdefg", 4, ["ab-", "cdef", "g"], id="a word is cut right after a hyphen"),
        pytest.param("ab/cdefg", 4, ["ab/", "cdef", "g"], id="a word is cut right after a slash"),
        pytest.param(
            "a-b-cdefg", 5, ["a-b-", "cdefg"], id="the cut is after the last break char that fits"
        ),
        pytest.param(
            "abcd-efgh", 5, ["abcd-", "efgh"], id="a break char at position w ends the piece there"
        ),
        pytest.param(
            "abcde-fgh", 5, ["abcde", "-fgh"], id="a break char just past w does not count"
        ),
        pytest.param("ab=cdefg", 4, ["ab=c", "defg"], id="equals is not a break char"),
        pytest.param(
            "ab(cdefg", 4, ["ab(c", "defg"], id="an opening parenthesis is not a break char"
        ),
        pytest.param("ab[cdefg", 4, ["ab[c", "defg"], id="an opening bracket is not a break char"),
        pytest.param("ab]cdefg", 4, ["ab]c", "defg"], id="a closing bracket is not a break char"),
        pytest.param(
            "abcdefg hi jk",
            5,
            ["abcde", "fg hi", "jk"],
            id="the last piece is joined by following words",
        ),
        pytest.param(
            "xy abcdefgh",
            5,
            ["xy", "abcde", "fgh"],
            id="a long word leaves the partial line before cutting",
        ),
    ],
)
def test_wrap_cell(text: str, width: int, expected: list[str]) -> None:
    assert wrap_cell(text, width) == expected


def test_wrap_cell_rejects_a_width_below_one() -> None:
    with pytest.raises(ValueError, match=r"width must be at least 1 \(got 0\)"):
        wrap_cell("abc", 0)


@pytest.mark.parametrize(
    ("rows", "width", "expected"),
    [
        pytest.param(
            [NAMESPACED_YES, DISABLED, OUT_OF_RANGE],
            80,
            _lines(HEADER_80, "vllm-llama     Namespaced   Yes          1          10       -")
            + ILLUSTRATION,
            id="the documented 80-column illustration (REASON width 19)",
        ),
        pytest.param(
            [],
            80,
            _lines("RUNTIME   SCOPE   COMPATIBLE   PRIORITY   WEIGHT   REASON"),
            id="without rows only the header is printed at natural widths",
        ),
        pytest.param(
            [("srt-llama-3-1-70b-instruct-fp8", "Namespaced", "Yes", "1", "10", "-")],
            80,
            _lines(
                "RUNTIME           SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON",
                "srt-llama-3-1-    Namespaced   Yes          1          10       -",
                "70b-instruct-",
                "fp8",
            ),
            id="a tall RUNTIME cell is capped at A - 16 and leaves continuation lines blank",
        ),
        pytest.param(
            [("a-very-long-runtime-name", "Cluster", "No", "-", "-", "runtime is disabled")],
            100,
            _lines(
                "RUNTIME                    SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON",
                "a-very-long-runtime-name   Cluster   No           -          -        "
                "runtime is disabled",
            ),
            id="RUNTIME keeps its natural width when A - 16 allows it",
        ),
        pytest.param(
            [DISABLED],
            60,
            _lines(
                "RUNTIME   SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON",
                "vllm-     Cluster   No           -          -        runtime",
                "legacy" + " " * 47 + "is",
                " " * 53 + "disable",
                " " * 53 + "d",
            ),
            id="on a 60-column terminal RUNTIME falls back to its header width",
        ),
        pytest.param(
            [
                ("a", "Namespaced", "Yes", "1", "10", "-"),
                ("b", "Cluster", "No", "-", "-", "is off"),
            ],
            60,
            _lines(
                "RUNTIME   SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON",
                "a         Namespaced   Yes          1          10       -",
                "b         Cluster      No           -          -        is off",
            ),
            id="REASON is never narrower than its header even when A - 7 is smaller",
        ),
    ],
)
def test_format_explain_table(rows: list[tuple[str, ...]], width: int, expected: str) -> None:
    assert format_explain_table(rows, width=width) == expected


def test_the_illustration_appears_verbatim_in_the_80_column_table() -> None:
    assert ILLUSTRATION in format_explain_table([NAMESPACED_YES, DISABLED, OUT_OF_RANGE])


def test_format_explain_table_rejects_a_row_without_six_cells() -> None:
    with pytest.raises(ValueError, match="explain row has 5 cells, expected 6"):
        format_explain_table([("a", "Cluster", "No", "-", "-")])


@pytest.mark.parametrize(
    ("headers", "rows", "expected"),
    [
        pytest.param(
            ["NAME", "VALUE"],
            [["a", "x"], ["longer-name", "y"]],
            _lines("NAME          VALUE", "a             x", "longer-name   y"),
            id="a column is padded to its widest cell plus 3 spaces",
        ),
        pytest.param(
            ["LONG-HEADER", "V"],
            [["a", "x"]],
            _lines("LONG-HEADER   V", "a             x"),
            id="the header counts towards the column width",
        ),
        pytest.param(
            ["A", "B", "C"],
            [["1", "22", "a long last cell"], ["333", "4", "z"]],
            _lines("A     B    C", "1     22   a long last cell", "333   4    z"),
            id="the last column is not padded",
        ),
        pytest.param(
            ["A", "B"],
            [["1", ""]],
            _lines("A   B", "1"),
            id="an empty last cell leaves no trailing whitespace",
        ),
        pytest.param(
            ["A", "B", "C"],
            [["1", "", ""]],
            _lines("A   B   C", "1"),
            id="trailing empty cells leave no trailing whitespace",
        ),
        pytest.param(
            ["NAME", "VALUE"],
            [],
            _lines("NAME   VALUE"),
            id="without rows only the header is printed",
        ),
        pytest.param(
            ["A", "B"],
            [["x " * 30, "y"]],
            _lines("A" + " " * 62 + "B", ("x " * 30).ljust(63) + "y"),
            id="long cells are never wrapped (one line per row)",
        ),
    ],
)
def test_format_table(headers: list[str], rows: list[list[str]], expected: str) -> None:
    assert format_table(headers, rows) == expected


def test_format_table_rejects_a_row_of_the_wrong_length() -> None:
    with pytest.raises(ValueError, match="row has 1 cells, expected 2"):
        format_table(["A", "B"], [["x"]])


@pytest.mark.parametrize(
    "table",
    [
        pytest.param(
            format_table(["A", "B", "C"], [["x", "", ""], ["", "y", ""]]), id="format_table"
        ),
        pytest.param(
            format_explain_table([NAMESPACED_YES, DISABLED, OUT_OF_RANGE]), id="explain at 80"
        ),
        pytest.param(
            format_explain_table([("r" * 40, "Cluster", "No", "-", "-", "short")], width=60),
            id="explain with a tall RUNTIME at 60",
        ),
        pytest.param(
            format_explain_table([("a", "", "", "", "", "")]), id="explain with blank cells"
        ),
    ],
)
def test_no_line_has_trailing_whitespace(table: str) -> None:
    assert table.endswith("\n")
    assert all(line == line.rstrip() for line in table.splitlines())


LONG_NAME = "clusterservingruntime-" + "x" * 20 + "-srt-llama-3-3-70b-fp8"


@pytest.mark.parametrize(
    ("value", "identifying", "expected"),
    [
        pytest.param(
            "a" * 54, True, "a" * 54, id="an identifying value of 54 characters is unchanged"
        ),
        pytest.param("b" * 54, False, "b" * 54, id="another value of 54 characters is unchanged"),
        pytest.param(
            LONG_NAME,
            True,
            f"{LONG_NAME[:20]}...{LONG_NAME[-21:]}#{_sha8(LONG_NAME)}",
            id="a long identifying value keeps 20 + ... + 21 + # + 8 hex of its sha256",
        ),
        pytest.param(
            "c" * 55,
            False,
            "c" * 51 + "...",
            id="another long value keeps its first 51 characters plus ...",
        ),
    ],
)
def test_shorten_value(value: str, identifying: bool, expected: str) -> None:
    assert shorten_value(value, identifying=identifying) == expected


def test_a_shortened_identifying_value_is_53_characters_and_spelled_out() -> None:
    value = "0123456789abcdefghij" + "-" * 20 + "klmnopqrstuvwxyzABCDE"
    shortened = shorten_value(value, identifying=True)
    assert shortened == f"0123456789abcdefghij...klmnopqrstuvwxyzABCDE#{_sha8(value)}"
    assert len(shortened) == 53


class _FakeStream:
    def __init__(self, *, tty: bool) -> None:
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def fileno(self) -> int:
        return 99


@pytest.mark.parametrize(
    ("tty", "columns", "expected"),
    [
        pytest.param(False, 60, 80, id="output that is not a terminal is 80 wide"),
        pytest.param(True, 60, 60, id="a 60-column terminal is 60 wide"),
        pytest.param(True, 120, 80, id="a terminal wider than 80 is capped at 80"),
        pytest.param(True, 0, 80, id="a terminal reporting 0 columns is 80 wide"),
        pytest.param(True, OSError("no tty"), 80, id="a terminal that cannot be asked is 80 wide"),
    ],
)
def test_terminal_width(
    monkeypatch: pytest.MonkeyPatch, tty: bool, columns: int | Exception, expected: int
) -> None:
    def fake_get_terminal_size(fd: int) -> os.terminal_size:
        assert fd == 99
        if isinstance(columns, Exception):
            raise columns
        return os.terminal_size((columns, 24))

    monkeypatch.setattr(os, "get_terminal_size", fake_get_terminal_size)
    assert terminal_width(_FakeStream(tty=tty)) == expected


def test_terminal_width_of_an_object_that_is_no_stream_is_80() -> None:
    assert terminal_width(object()) == 80  # type: ignore[arg-type]


def test_every_public_name_is_exported() -> None:
    public = {name for name in vars(tables) if not name.startswith("_")}
    assert set(tables.__all__) == public - {"annotations", "hashlib", "os", "Protocol", "Sequence"}
