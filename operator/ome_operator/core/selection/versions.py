"""Parse model format/framework versions and compare them with an entry's operator
(docs/reference/selection.md, Versions).

A version is one to three dot-separated non-negative integers without leading zeros,
optionally preceded by a lowercase ``v``. Only after the third number may a
suffix follow, made of up to three parts in this order: a dev part after ``.``, a
pre-release after ``-`` and a build after ``+`` (``4.45.0.dev0``, ``1.0.0-rc1+b7``).
Each part is one or more dot-separated, non-empty pieces; a pre-release may contain
``-`` and a build may contain ``-`` and ``+``. Text that does not parse never matches.

The entry's version is always the left operand and the model's the right one, so
``GreaterThan`` admits models *older* than the entry: it sets an upper limit.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Version", "parse_version", "versions_match"]

_NUMBER = r"(?:0|[1-9][0-9]*)"
_DEV = r"\.[^.+\-]+(?:\.[^.+\-]+)*"
_PRE_RELEASE = r"-[^.+]+(?:\.[^.+]+)*"
_BUILD = r"\+[^.]+(?:\.[^.]+)*"
_VERSION = re.compile(
    rf"(?P<v>v?)(?P<major>{_NUMBER})"
    rf"(?:\.(?P<minor>{_NUMBER})"
    rf"(?:\.(?P<patch>{_NUMBER})(?P<suffix>(?:{_DEV})?(?:{_PRE_RELEASE})?(?:{_BUILD})?))?)?"
)


@dataclass(frozen=True)
class Version:
    """A parsed version: its numbers as written, its ``v`` prefix and its whole suffix."""

    #: One to three numbers, as many as the text has (``1.0`` is ``(1, 0)``).
    numbers: tuple[int, ...]
    #: Whether the text starts with a lowercase ``v``.
    has_v: bool
    #: The suffix including its leading ``.``, ``-`` or ``+``; ``""`` when there is none.
    suffix: str


@lru_cache(maxsize=4096)  # pure; runtimes repeat the same few versions
def parse_version(text: str) -> Version | None:
    """Return the version ``text`` spells, or ``None`` when it does not parse."""
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    parts = (match["major"], match["minor"], match["patch"])
    return Version(
        numbers=tuple(int(part) for part in parts if part is not None),
        has_v=bool(match["v"]),
        suffix=match["suffix"] or "",
    )


@lru_cache(maxsize=4096)
def versions_match(entry_version: str, model_version: str, operator: str) -> bool:
    """Whether ``<entry_version> <operator> <model_version>`` holds."""
    entry = parse_version(entry_version)
    model = parse_version(model_version)
    if entry is None or model is None:
        return False
    if operator == "Equal" or entry.suffix or model.suffix:
        return _equal(entry, model)
    if len(entry.numbers) != len(model.numbers) or entry.has_v != model.has_v:
        return False
    if operator == "GreaterThan":
        return entry.numbers > model.numbers
    if operator == "GreaterThanOrEqual":
        return entry.numbers >= model.numbers
    return entry.numbers == model.numbers


def _equal(left: Version, right: Version) -> bool:
    """Numerically equal with missing parts as ``0``, ``v`` ignored, suffixes identical."""
    return _padded(left) == _padded(right) and left.suffix == right.suffix


def _padded(version: Version) -> tuple[int, ...]:
    """The version's numbers with missing minor and patch parts counted as ``0``."""
    return version.numbers + (0,) * (3 - len(version.numbers))
