"""The ``console`` blocks of README.md and docs/: transcripts the tests replay, to the character.

A block is a series of steps: a line ``$ <command>`` and the lines below it up to the next
``$ `` line, which are what the command prints (``run``). Every command runs with
bash from the repository's root, ``kubectl ome ...`` as the installed ``kubectl-ome``. A block
whose commands all work offline (``kubectl ome``/``kubectl-ome``/``ome-operator``, and what a
pipe feeds them to) is replayed by tests/test_docs_examples.py; a block that talks to a cluster
(``kubectl`` itself, or ``kubectl ome`` without ``-f``) by
tests/controlplane/test_docs_console.py, against the tier's cluster with the operator running.
An instruction whose output no test can reproduce (a port-forward to a pod) belongs in an
``sh`` block, not a ``console`` one.
"""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)
#: ``kubectl ome`` as kubectl runs a plugin: the ``kubectl-ome`` on PATH, with the arguments.
_PLUGIN = (
    'kubectl() { if [ "$1" = ome ]; then shift; kubectl-ome "$@"; else command kubectl "$@"; fi; }'
)
_OFFLINE_PROGRAMS = ("kubectl-ome", "ome-operator")
#: Seconds any one command of a block may take.
TIMEOUT = 60


@dataclass(frozen=True)
class Step:
    command: str
    output: str


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    steps: tuple[Step, ...]

    @property
    def offline(self) -> bool:
        """Whether every command of the block works without a cluster."""
        return all(_offline(step.command) for step in self.steps)

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}: {self.steps[0].command[:60]}"


def pages() -> list[pathlib.Path]:
    """README.md and every Markdown page under docs/, in path order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks() -> list[Block]:
    """Every console block of the pages, in page then line order."""
    return [block for page in pages() for block in _blocks_of(page)]


def _blocks_of(page: pathlib.Path) -> Iterator[Block]:
    text = page.read_text(encoding="utf-8")
    where = page.relative_to(ROOT).as_posix()
    for found in _BLOCK.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        assert found[1].startswith("$ "), f"{where}:{line}: a console block starts with '$ '"
        yield Block(where, line, tuple(_steps(found[1])))


def _steps(body: str) -> Iterator[Step]:
    for chunk in re.split(r"^\$ ", body, flags=re.MULTILINE)[1:]:
        command, _, output = chunk.partition("\n")
        yield Step(command, output)


def _offline(command: str) -> bool:
    """A pipeline whose first program is ``kubectl-ome``/``ome-operator`` (or ``kubectl ome``)
    and, for ``kubectl ome runtime``, reads files (``-f``, ``--state``) instead of a cluster."""
    words = shlex.split(command.split("|", 1)[0])
    if words[:2] == ["kubectl", "ome"]:
        words = ["kubectl-ome", *words[2:]]
    if not words or words[0] not in _OFFLINE_PROGRAMS:
        return False
    online = words[0] == "kubectl-ome" and words[1:2] == ["runtime"]
    return not online or any(w in ("-f", "--state") or w.startswith("--filename") for w in words)


def run(step: Step, environment: Mapping[str, str] | None = None, *, merged: bool = False) -> str:
    """What the step's command prints from the repository's root: its stdout, then its stderr
    (a command of ours writes its result, then what it has to say about it), or with ``merged``
    both in the order they are written, as a terminal shows kubectl's (which writes each line
    at once: a ``Warning:`` between the objects it applies). The virtualenv's scripts come
    first on PATH; ``environment`` is added (KUBECONFIG, say)."""
    scripts = str(pathlib.Path(sys.executable).parent)
    env = {**os.environ, **(environment or {})}
    env["PATH"] = os.pathsep.join([scripts, env.get("PATH", "")])
    env.pop("COLUMNS", None)
    script = f"{_PLUGIN}\n{{ {step.command}\n}} 2>&1" if merged else f"{_PLUGIN}\n{step.command}"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    return done.stdout + done.stderr
