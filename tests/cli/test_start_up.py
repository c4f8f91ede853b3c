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
#: Runs one command in a fresh process as the console script does, then prints the modules it
#: imported, as JSON (not one made in place, as the stand-in for pydantic's plugin loader: it
#: has no spec).
IMPORTED = """
import contextlib, io, json, sys
from ome_operator.console_scripts import kubectl_ome
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    with contextlib.suppress(SystemExit):
        kubectl_ome()
print(json.dumps([n for n, m in sys.modules.items() if getattr(m, "__spec__", True)]))
"""
EXPLAIN = ("runtime", "explain", "--model", "llama-3-3-70b-instruct", "-f", SAMPLES)


def imported(*argv: str) -> set[str]:
    """Every module the command loaded, and the top-level package of each."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, *argv],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "operator")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules = json.loads(done.stdout)
    return {*modules, *(module.split(".")[0] for module in modules)}


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
    found = imported(*EXPLAIN)
    assert "ome_operator.cli.explain" in found
    assert not found & {"kubernetes", "urllib3", "ome_operator.core.effective", "kopf"}


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("version",), id="version"),
        pytest.param(("runtime", "explain", "--help"), id="help"),
        pytest.param(EXPLAIN, id="explain of manifests"),
        pytest.param(("runtime", "explain", "-o", "bogus"), id="a usage error"),
    ],
)
def test_a_command_loads_no_module_only_the_completion_or_a_pydantic_plugin_needs(argv):
    """Not the completion scripts; not shutil (with bz2 and lzma), which argparse's formatter
    imports to measure the terminal; not importlib.metadata (with email and zipfile), which
    pydantic's plugin loader imports to look for plugins."""
    unneeded = {"ome_operator.cli.completion", "shutil", "lzma", "importlib.metadata", "email"}
    assert not imported(*argv) & unneeded
