"""The ``console`` blocks of the docs print what the commands print: each ``$ kubectl ome ...``
or ``$ ome-operator ...`` line is run from the repository's root, and its stdout then its
stderr must be the lines below it, to the character."""

from __future__ import annotations

import io
import pathlib
import re
import shlex

import pytest

from ome_operator import operator_command
from ome_operator.cli import main as kubectl_ome

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ("docs/changing-runtimes-safely.md", "docs/autoscaling.md")
_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_PROGRAMS = {"kubectl ome": kubectl_ome.main, "ome-operator": operator_command.main}


def _examples() -> list[pytest.param]:
    found = []
    for page in PAGES:
        for block in _BLOCK.findall((ROOT / page).read_text(encoding="utf-8")):
            command, _, output = block.partition("\n")
            assert command.startswith("$ "), f"{page}: a console block starts with its command"
            found.append(pytest.param(command[2:], output, id=f"{page}: {command[2:60]}"))
    return found


@pytest.mark.parametrize(("command", "output"), _examples())
def test_a_documented_command_prints_what_the_page_shows(
    command: str, output: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    program = next(p for p in _PROGRAMS if command.startswith(p + " "))
    argv = shlex.split(command[len(program) :])
    out, err = io.StringIO(), io.StringIO()

    code = _PROGRAMS[program](argv, stdin=io.StringIO(), stdout=out, stderr=err)

    assert (code, out.getvalue() + err.getvalue()) == (0, output)
