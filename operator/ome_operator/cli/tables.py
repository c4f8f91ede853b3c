"""Plain-text tables for `kubectl ome runtime` (SPEC S11, S12.7, S13.5).

Everything here is pure except `terminal_width`, which only asks the terminal its size.
Invariants: columns are left-aligned and separated by 3 spaces, no line carries trailing
whitespace, and every table ends with a newline.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Protocol

__all__ = [
    "EXPLAIN_HEADERS",
    "format_explain_table",
    "format_table",
    "shorten_value",
    "terminal_width",
    "wrap_cell",
]

#: Header of the `explain` table; rows carry one cell per header, in this order.
EXPLAIN_HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "REASON")

_GAP = "   "
_DEFAULT_WIDTH = 80
#: The explain layout reserves 16 columns of REASON before RUNTIME gets its natural
#: width (S12.7, derived from the two documented outputs).
_REASON_RESERVE = 16
#: Where an over-long word may be cut; `/` is OPEN-38's suggested addition.
#: `=`, `(`, `[`, `]` are deliberately absent.
_BREAK_CHARS = frozenset(".:-/")
#: S13.5: table values are at most 54 characters.
_MAX_VALUE = 54
#: OPEN-42: 20 + "..." + 21 + "#" + 8 hex digits = 53 characters.
_HEAD, _TAIL, _DIGEST = 20, 21, 8


class _Stream(Protocol):
    def isatty(self) -> bool: ...
    def fileno(self) -> int: ...


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Render one line per row; every column but the last is padded to its widest cell."""
    table = [list(headers), *(list(row) for row in rows)]
    for row in table[1:]:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, expected {len(headers)}: {row!r}")
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "".join(_render_line(row, widths) for row in table)


def format_explain_table(rows: Sequence[Sequence[str]], width: int = _DEFAULT_WIDTH) -> str:
    """Render the `explain` table wrapped to `width` columns (S12.7).

    SCOPE, COMPATIBLE, PRIORITY and WEIGHT take their natural width; RUNTIME and REASON
    share what is left (A) as `min(natural, A - 16)` and the remainder. No column is ever
    narrower than its header (OPEN-38): on very narrow terminals the table overflows
    `width` rather than wrapping into slivers, and the header itself never wraps.
    """
    for row in rows:
        if len(row) != len(EXPLAIN_HEADERS):
            raise ValueError(f"explain row has {len(row)} cells, expected 6: {row!r}")
    natural = [
        max([len(header), *(len(row[i]) for row in rows)])
        for i, header in enumerate(EXPLAIN_HEADERS)
    ]
    available = width - len(_GAP) * (len(EXPLAIN_HEADERS) - 1) - sum(natural[1:5])
    runtime_width = max(min(natural[0], available - _REASON_RESERVE), len(EXPLAIN_HEADERS[0]))
    reason_width = max(available - runtime_width, len(EXPLAIN_HEADERS[5]))
    widths = [runtime_width, *natural[1:5], reason_width]

    out = [_render_line(EXPLAIN_HEADERS, widths)]
    for row in rows:
        cells = [
            wrap_cell(row[0], runtime_width),
            *([cell] for cell in row[1:5]),
            wrap_cell(row[5], reason_width),
        ]
        height = max(len(cell) for cell in cells)
        for i in range(height):
            out.append(_render_line([cell[i] if i < len(cell) else "" for cell in cells], widths))
    return "".join(out)


def wrap_cell(text: str, width: int) -> list[str]:
    """Wrap `text` to lines of at most `width` characters (S12.7); "" gives [""].

    Words are filled greedily; a word longer than `width` starts a new line and is cut
    after the last break character that fits (or at exactly `width`); its last piece
    stays open for the following words.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1 (got {width})")
    lines: list[str] = []
    current = ""
    for word in (w for w in text.split(" ") if w):
        if current and len(current) + 1 + len(word) <= width:
            current = f"{current} {word}"
            continue
        if current:
            lines.append(current)
        *full, current = _cut_word(word, width)
        lines.extend(full)
    if current or not lines:
        lines.append(current)
    return lines


def shorten_value(value: str, *, identifying: bool) -> str:
    """Fit a table VALUE into 54 characters (S13.5, OPEN-42).

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


def terminal_width(stream: _Stream) -> int:
    """80, or the terminal's width when `stream` is a terminal narrower than that."""
    try:
        if not stream.isatty():
            return _DEFAULT_WIDTH
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return _DEFAULT_WIDTH
    return columns if 0 < columns < _DEFAULT_WIDTH else _DEFAULT_WIDTH


def _cut_word(word: str, width: int) -> list[str]:
    """Cut `word` into pieces of at most `width`, each ending after a break char if one fits."""
    pieces: list[str] = []
    while len(word) > width:
        prefix = word[:width]
        end = max((i + 1 for i, ch in enumerate(prefix) if ch in _BREAK_CHARS), default=width)
        pieces.append(word[:end])
        word = word[end:]
    pieces.append(word)
    return pieces


def _render_line(cells: Sequence[str], widths: Sequence[int]) -> str:
    padded = [cell.ljust(w) for cell, w in zip(cells[:-1], widths[:-1], strict=True)]
    return _GAP.join([*padded, cells[-1]]).rstrip() + "\n"
