"""Rules of the ``kubectl ome runtime`` text tables: kubectl's layout (one line per row, never
wrapped, ``--no-headers``), and long values shortened."""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

from ome_operator.cli import tables
from ome_operator.cli.main import main
from ome_operator.cli.tables import EXPLAIN_HEADERS, format_table, shorten_value
from tests.builders import entry, model_manifest, runtime_manifest

NAMESPACED_YES = ("vllm-llama-small", "Namespaced", "Yes", "1", "10", "-")
DISABLED = ("vllm-legacy", "Cluster", "No", "-", "-", "runtime is disabled")
OUT_OF_RANGE = (
    "srt-llama-1b",
    "Cluster",
    "No",
    "-",
    "-",
    "model size 3.21B is outside supported range [500M, 2B]",
)
#: What used to wrap at 80 columns (``srt-llama-1b``'s REASON on three lines), one line a row.
EXPLAIN_TABLE = """\
RUNTIME            SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON
vllm-llama-small   Namespaced   Yes          1          10       -
vllm-legacy        Cluster      No           -          -        runtime is disabled
srt-llama-1b       Cluster      No           -          -        model size 3.21B is outside supported range [500M, 2B]
"""  # noqa: E501 (the point: a row is as long as its cells)


def _lines(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


def _sha8(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]


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


@pytest.mark.parametrize(
    ("headers", "rows", "expected"),
    [
        pytest.param(
            ["NAME", "VALUE"],
            [["a", "x"], ["longer-name", "y"]],
            _lines("a             x", "longer-name   y"),
            id="no headers leaves out the header line and nothing else",
        ),
        pytest.param(
            ["LONG-HEADER", "V"],
            [["a", "x"]],
            _lines("a   x"),
            id="no headers: a header that is not printed does not widen its column (kubectl)",
        ),
        pytest.param(["NAME", "VALUE"], [], "", id="no headers and no rows print nothing at all"),
    ],
)
def test_format_table_without_headers(
    headers: list[str], rows: list[list[str]], expected: str
) -> None:
    assert format_table(headers, rows, no_headers=True) == expected


def test_the_explain_table_is_one_line_a_row_however_long_the_reason() -> None:
    rows = [NAMESPACED_YES, DISABLED, OUT_OF_RANGE]
    assert format_table(EXPLAIN_HEADERS, rows) == EXPLAIN_TABLE


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
            format_table(EXPLAIN_HEADERS, [("a", "", "", "", "", "")]), id="explain, blank cells"
        ),
        pytest.param(
            format_table(["A", "B"], [["x", ""], ["", ""]], no_headers=True), id="no headers"
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


def test_every_public_name_is_exported() -> None:
    public = {name for name in vars(tables) if not name.startswith("_")}
    assert set(tables.__all__) == public - {"annotations", "hashlib", "Sequence"}


# --- the plugin's tables, piped or on a terminal -------------------------------------------

_OBJECTS = (
    model_manifest("llama", modelParameterSize="3.21B"),
    runtime_manifest("vllm-llama-small", formats=[entry(autoSelect=True)]),
    runtime_manifest("vllm-legacy", disabled=True),
    runtime_manifest("srt-llama-1b", formats=[entry(autoSelect=True)], size_range=("500M", "2B")),
)
PLUGIN_TABLE = """\
RUNTIME            SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON
vllm-llama-small   Cluster   Yes          1          2        -
srt-llama-1b       Cluster   No           -          -        model size 3.21B is outside supported range [500M, 2B]
vllm-legacy        Cluster   No           -          -        runtime is disabled
"""  # noqa: E501


class _Terminal(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1


@pytest.fixture
def manifests(tmp_path: pathlib.Path) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(_OBJECTS))
    return str(path)


@pytest.mark.parametrize(
    ("stdout", "columns"),
    [
        pytest.param(io.StringIO(), 80, id="piped, a row is one line whatever its length"),
        pytest.param(_Terminal(), 80, id="on an 80-column terminal too, as kubectl prints"),
        pytest.param(_Terminal(), 40, id="below 60 columns the layout is the same"),
    ],
)
def test_the_plugin_never_wraps_a_cell(
    monkeypatch: pytest.MonkeyPatch, manifests: str, stdout: io.StringIO, columns: int
) -> None:
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=1: os.terminal_size((columns, 24)))
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a: os.terminal_size((columns, 24)))
    err = io.StringIO()
    argv = ["runtime", "explain", "--model", "llama", "-f", manifests]
    code = main(argv, stdin=io.StringIO(), stdout=stdout, stderr=err)
    assert (code, stdout.getvalue(), err.getvalue()) == (0, PLUGIN_TABLE, "")


def test_grep_and_awk_read_whole_cells_through_a_pipe(manifests: str) -> None:
    plugin = pathlib.Path(sys.executable).with_name("kubectl-ome")
    argv = [str(plugin), "runtime", "explain", "--model", "llama", "-f", manifests, "--no-headers"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    first_cells = [line.split()[0] for line in done.stdout.splitlines()]
    assert (done.returncode, first_cells) == (
        0,
        ["vllm-llama-small", "srt-llama-1b", "vllm-legacy"],
    )
