"""The image's hash-locked requirements (requirements.lock beside this file), read.

The file is pip-compile's output (its header names the command): one ``name==version`` per
distribution, each followed by its ``--hash=sha256:`` lines and a ``# via`` comment naming what
requires it. Reading it is pure: text in, pins out, in the file's order.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re

#: The lock the Dockerfile installs with ``pip install --require-hashes -r``.
LOCK_FILE = pathlib.Path(__file__).resolve().parent / "requirements.lock"
#: What requires a pin when the project itself does (pip-compile's wording).
PROJECT_VIA = "ome-operator (pyproject.toml)"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


@dataclasses.dataclass(frozen=True)
class Pin:
    """One locked distribution: its name as pip-compile writes it (normalized), its exact
    version, the sha256 of every file pip may install for it, and what requires it."""

    name: str
    version: str
    hashes: tuple[str, ...]
    required_by: tuple[str, ...]

    @property
    def purl(self) -> str:
        return f"pkg:pypi/{self.name}@{self.version}"


def read_pins(text: str) -> tuple[Pin, ...]:
    """Every pin of a pip-compile lock, in the file's order."""
    return tuple(_pin(block) for block in _requirement_blocks(text))


def _requirement_blocks(text: str) -> list[list[str]]:
    """The lines of each requirement: its pin line and the indented lines under it."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if _PIN.match(line):
            blocks.append([line])
        elif blocks and line.startswith((" ", "\t")):
            blocks[-1].append(line.strip())
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"requirements.lock: not a pinned requirement: {line!r}")
    return blocks


def _pin(block: list[str]) -> Pin:
    found = _PIN.match(block[0])
    assert found is not None  # _requirement_blocks starts a block only on a pin line
    hashes = tuple(h for line in block for h in _HASH.findall(line))
    return Pin(found.group(1), found.group(2), hashes, _required_by(block))


def _required_by(block: list[str]) -> tuple[str, ...]:
    """The names of pip-compile's ``# via`` comment: ``# via kopf`` on one line, or ``# via``
    followed by one ``#   name`` per line."""
    comments = [line.lstrip("#").strip() for line in block if line.startswith("#")]
    names: list[str] = []
    for index, comment in enumerate(comments):
        if comment == "via":
            names.extend(c for c in comments[index + 1 :] if c)
        elif comment.startswith("via "):
            names.append(comment.removeprefix("via ").strip())
    return tuple(names)
