"""PyYAML's scanner with its possible simple keys kept in linear time (``LinearSimpleKeys``).

The pure-Python scanner notes, at every ``[``, ``{``, scalar, anchor, alias and tag, a possible
simple key (a mapping key not yet followed by its ``:``), one per flow level. Before every
token it looks at all of them, to drop those gone stale (on an earlier line, or more than
1,024 characters back) and to find the oldest. A flow document nested N levels on one line
(``[[[...]]]``, which libyaml does not read past 1,000 levels, so the pure-Python reader
does) holds up to min(N, 1,024) of them: 3,000 levels took 4.4 s to read and refuse, against
0.3 s as JSON.

The keys are noted in the order of their position, and a key older than a stale one is
stale too, so the stale keys are always the oldest ones: ``LinearSimpleKeys`` keeps the keys
in that order as well and looks only at the oldest, until one is still possible. What it
reads, the tokens and every error (the same key refused with the same marks) are PyYAML's.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from yaml.scanner import ScannerError

__all__ = ["LinearSimpleKeys"]

#: How far back (in characters) a simple key may start, as the YAML specification says.
_SIMPLE_KEY_REACH = 1024


class LinearSimpleKeys:
    """Mixed in before a PyYAML loader with the pure-Python ``Scanner``."""

    possible_simple_keys: dict[int, Any]
    line: int
    index: int
    flow_level: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: ``(flow level, key)`` in the order the keys were noted; an entry whose key is no
        #: longer the one ``possible_simple_keys`` holds at its level was removed since.
        self._noted: deque[tuple[int, Any]] = deque()

    def save_possible_simple_key(self) -> None:
        before = self.possible_simple_keys.get(self.flow_level)
        super().save_possible_simple_key()  # type: ignore[misc]
        after = self.possible_simple_keys.get(self.flow_level)
        if after is not None and after is not before:
            self._noted.append((self.flow_level, after))

    def stale_possible_simple_keys(self) -> None:
        while (oldest := self._oldest()) is not None:
            level, key = oldest
            if key.line == self.line and self.index - key.index <= _SIMPLE_KEY_REACH:
                return
            if key.required:
                raise ScannerError(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'",
                    self.get_mark(),  # type: ignore[attr-defined]
                )
            del self.possible_simple_keys[level]
            self._noted.popleft()

    def next_possible_simple_key(self) -> int | None:
        oldest = self._oldest()
        return None if oldest is None else oldest[1].token_number

    def _oldest(self) -> tuple[int, Any] | None:
        """The oldest possible simple key with its level; entries removed since are dropped."""
        noted = self._noted
        while noted:
            level, key = noted[0]
            if self.possible_simple_keys.get(level) is key:
                return noted[0]
            noted.popleft()
        return None
