"""Plain-text tables for ``kubectl ome runtime``, laid out as kubectl lays out ``get``.

Everything here is pure. Invariants: one line per row, whatever the terminal or the pipe
(kubectl never wraps a cell: a row longer than the terminal is folded by the terminal, and
``grep``/``awk`` see whole cells); columns are left-aligned and separated by 3 spaces; no line
carries trailing whitespace; the table ends with a newline; ``--no-headers`` leaves out the
header line and nothing else. ``-o wide`` is the same table with columns added at the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = [
    "EXPLAIN_HEADERS",
    "EXPLAIN_WIDE_HEADERS",
    "format_table",
    "shorten_value",
]

#: Header of the ``explain`` table; rows carry one cell per header, in this order.
EXPLAIN_HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "REASON")
#: ``explain -o wide``: the table and TIE (``name decides`` where only the name ranks).
EXPLAIN_WIDE_HEADERS = (*EXPLAIN_HEADERS, "TIE")

_GAP = "   "
#: Table values are at most 54 characters.
_MAX_VALUE = 54
#: 20 + "..." + 21 + "#" + 8 hex digits = 53 characters.
_HEAD, _TAIL, _DIGEST = 20, 21, 8


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, no_headers: bool = False
) -> str:
    """One line per row; every column but the last is padded to its widest cell (as kubectl,
    the header counts only when it is printed)."""
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, expected {len(headers)}: {row!r}")
    table = [list(row) for row in rows] if no_headers else [list(headers), *map(list, rows)]
    if not table:
        return ""
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "".join(_render_line(row, widths) for row in table)


def shorten_value(value: str, *, identifying: bool) -> str:
    """Fit a table VALUE into 54 characters.

    Identifying values (runtime names, namespaces, revision names, issues) keep both
    ends plus a digest of the full value, so two long names that share their ends still
    read differently; other values keep their start.
    """
    if len(value) <= _MAX_VALUE:
        return value
    if not identifying:
        return value[: _MAX_VALUE - 3] + "..."
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:_DIGEST]
    return f"{value[:_HEAD]}...{value[-_TAIL:]}#{digest}"


def _render_line(cells: Sequence[str], widths: Sequence[int]) -> str:
    padded = [cell.ljust(w) for cell, w in zip(cells[:-1], widths[:-1], strict=True)]
    return _GAP.join([*padded, cells[-1]]).rstrip() + "\n"
