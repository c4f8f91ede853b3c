"""A command imports what it runs, no more: start-up is most of a ``kubectl ome`` command's time
(``tests/bench/cli.py`` measures it against kubectl's)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = str(ROOT / "manifests" / "samples")
#: Runs one command in a fresh process, then prints the top-level packages it loaded (and
#: every module of ome_operator), as JSON.
IMPORTED = """
import contextlib, io, json, sys
from ome_operator.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(sys.argv[1:], stdout=io.StringIO(), stderr=io.StringIO())
print(json.dumps([m if m.startswith("ome_operator") else m.split(".")[0] for m in sys.modules]))
"""


def imported(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, *argv],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "operator")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stdout))


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("version",), id="version"),
        pytest.param(("completion", "bash"), id="completion"),
        pytest.param(("runtime", "explain", "--help"), id="help"),
    ],
)
def test_a_command_that_reads_nothing_loads_neither_pydantic_nor_pyyaml(argv):
    assert not imported(*argv) & {"pydantic", "pydantic_core", "yaml", "kubernetes"}


def test_explain_of_manifests_loads_neither_the_kubernetes_client_nor_the_effective_report():
    found = imported("runtime", "explain", "--model", "llama-3-3-70b-instruct", "-f", SAMPLES)
    assert "ome_operator.cli.explain" in found
    assert not found & {"kubernetes", "urllib3", "ome_operator.core.effective", "kopf"}
