"""Parse model parameter sizes and check them against a runtime's size range
(docs/reference/selection.md, Model size).

A size is a decimal number followed by an optional uppercase ``M`` (×10⁶), ``B`` (×10⁹)
or ``T`` (×10¹²); no suffix means ×1. The number is ASCII digits with at most one
decimal point and at least one digit, on either side of the point (``70``, ``3.21``,
``.5`` and ``5.`` all parse). Anything else — a lowercase suffix (``4b``), a sign, an
exponent, whitespace, the empty string — parses as ``0``. Values are exact fractions,
so ``0.5B`` equals ``500M``.

A bound of ``None`` is absent; every string bound is present, even one that parses
as ``0`` (``""``, ``4b``).
"""

import re
from fractions import Fraction
from functools import lru_cache

__all__ = ["format_range", "parse_size", "size_distance", "size_in_range"]

#: Multiplier of each size suffix; only these uppercase letters are recognised.
_MULTIPLIERS = {"": 1, "M": 10**6, "B": 10**9, "T": 10**12}

_SIZE = re.compile(r"(?P<number>[0-9]+\.?[0-9]*|\.[0-9]+)(?P<suffix>[MBT]?)")


@lru_cache(maxsize=4096)  # pure; sizes repeat across runtimes and reconciles
def parse_size(text: str) -> Fraction:
    """The parameter count ``text`` spells, or ``0`` when it does not parse."""
    match = _SIZE.fullmatch(text)
    if match is None:
        return Fraction(0)
    return Fraction(match["number"]) * _MULTIPLIERS[match["suffix"]]


@lru_cache(maxsize=4096)
def size_in_range(size: str, minimum: str | None, maximum: str | None) -> bool:
    """Whether ``size`` lies within the inclusive bounds; ``min > max`` admits nothing."""
    value = parse_size(size)
    if minimum is not None and value < parse_size(minimum):
        return False
    return maximum is None or value <= parse_size(maximum)


def format_range(minimum: str | None, maximum: str | None) -> str:
    """Render the range as ``[<min>, <max>]`` with the bounds as written."""
    lower = "(-inf" if minimum is None else f"[{minimum}"
    upper = "inf)" if maximum is None else f"{maximum}]"
    return f"{lower}, {upper}"


@lru_cache(maxsize=4096)
def size_distance(size: str, minimum: str | None, maximum: str | None) -> Fraction:
    """The sum of the distances from ``size`` to each present bound (rule 3 of the ranking)."""
    value = parse_size(size)
    bounds = (bound for bound in (minimum, maximum) if bound is not None)
    return sum((abs(parse_size(bound) - value) for bound in bounds), Fraction(0))
