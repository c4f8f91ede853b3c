"""What scripts read from the CLIs: ``explain -o json|yaml`` (every row as data, reasons whole),
``version``, and the help of a command given without its subcommand."""

from __future__ import annotations

import io
import json
import pathlib

import pytest
import yaml

from ome_operator import __version__, operator_command
from ome_operator.cli.main import main

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"
MULTINODE_REASON = (
    "runtime engine deployment mode MultiNode does not match requested engine deployment mode "
    "OMENative"
)
MANUAL_REASON = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
    "selection skips it (pin it explicitly via spec.runtime.name instead)"
)


def run(command, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = command(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def explanation(namespace: str, runtimes: list[dict]) -> dict:
    return {
        "apiVersion": "cli.ome.io/v1alpha1",
        "kind": "RuntimeExplanation",
        "namespace": namespace,
        "model": "llama-3-3-70b-instruct",
        "inferenceService": "llama-3-70b",
        "runtimes": runtimes,
    }


def no(name: str, scope: str, reason: str) -> dict:
    row = {"name": name, "scope": scope, "compatible": False, "priority": None, "weight": None}
    return {**row, "reason": reason}


def yes(name: str, scope: str, priority: int, weight: int) -> dict:
    row = {"name": name, "scope": scope, "compatible": True, "priority": priority}
    return {**row, "weight": weight, "reason": None}


@pytest.mark.parametrize("output", [pytest.param("json"), pytest.param("yaml")])
@pytest.mark.parametrize(
    ("namespace", "runtimes"),
    [
        pytest.param(
            "llama-demo",
            [
                no("srt-llama-3-3-70b-instruct-manual", "Cluster", MANUAL_REASON),
                no("srt-llama-3-3-70b-instruct-multinode", "Cluster", MULTINODE_REASON),
            ],
            id="every No row, its reason whole",
        ),
        pytest.param(
            "llama-migration",
            [
                yes("srt-llama-3-3-70b-instruct-omenative", "Namespaced", 2, 4),
                yes("srt-llama-3-3-70b-instruct-multinode", "Cluster", 2, 4),
                no("srt-llama-3-3-70b-instruct-manual", "Cluster", MANUAL_REASON),
            ],
            id="Yes rows in rank order with their numbers",
        ),
    ],
)
def test_explain_prints_every_row_as_data(output, namespace, runtimes):
    argv = ("runtime", "explain", "--isvc", "llama-3-70b", "-n", namespace, "-f", str(SAMPLES))
    code, out, err = run(main, *argv, "-o", output)
    parsed = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert (code, parsed, err) == (0, explanation(namespace, runtimes), "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ("-o", "name"), 'unknown output format "name": use one of table, wide, json, yaml'
        ),
        pytest.param(
            ("-o", "json", "--with-effective"),
            "--with-effective prints a table: it cannot be used with -o",
        ),
    ],
)
def test_explain_refuses_what_it_cannot_print(argv, message):
    base = ("runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-demo", "-f", str(SAMPLES))
    assert run(main, *base, *argv) == (1, "", f"error: {message}\n")


@pytest.mark.parametrize(
    ("command", "program"),
    [
        pytest.param(main, "kubectl-ome", id="kubectl-ome version"),
        pytest.param(operator_command.main, "ome-operator", id="ome-operator version"),
    ],
)
def test_version(command, program):
    assert run(command, "version") == (0, f"{program} {__version__} (OME v1.3)\n", "")


@pytest.mark.parametrize(
    ("command", "argv", "usage"),
    [
        pytest.param(
            main, (), "usage: kubectl ome [-h] {runtime,version,completion} ...", id="kubectl-ome"
        ),
        pytest.param(
            main,
            ("runtime",),
            "usage: kubectl ome runtime [-h] {explain,effective,impact} ...",
            id="kubectl-ome runtime",
        ),
        pytest.param(
            operator_command.main,
            (),
            "usage: ome-operator [-h] {run,render,version} ...",
            id="ome-operator",
        ),
    ],
)
def test_a_bare_command_prints_its_help(command, argv, usage):
    code, out, err = run(command, *argv)
    assert (code, out.splitlines()[0], err) == (0, usage, "")
