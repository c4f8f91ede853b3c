"""What scripts read from the CLIs: ``-o json|yaml`` (every row as data, reasons whole),
kubectl's ``-o name``, ``-o jsonpath=`` and ``--no-headers`` on every table, one wording for a
bad ``-o``, ``version``, and the help of a command given without its subcommand."""

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


# --- kubectl's printers on every table command ---------------------------------------------

EXPLAIN_MIGRATION = ("runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-migration")
EXPLAIN_EVERYWHERE = ("runtime", "explain", "--isvc", "llama-3-70b", "-A")
EFFECTIVE = ("runtime", "effective", "llama-3-70b", "-n", "llama-migration")
IMPACT = (
    "runtime",
    "impact",
    "-A",
    "--delete",
    "ClusterServingRuntime/srt-llama-3-3-70b-instruct-multinode",
)
IMPACT_SUMMARY = "1 of 5 InferenceServices change runtime\n"
OMENATIVE, MULTINODE, MANUAL = (
    "srt-llama-3-3-70b-instruct-omenative",
    "srt-llama-3-3-70b-instruct-multinode",
    "srt-llama-3-3-70b-instruct-manual",
)


def _samples(command: tuple[str, ...]) -> tuple[str, ...]:
    return (*command, "--state" if "impact" in command else "-f", str(SAMPLES))


@pytest.mark.parametrize(
    ("command", "output", "expected", "summary"),
    [
        pytest.param(
            EXPLAIN_MIGRATION,
            "name",
            f"servingruntime.ome.io/{OMENATIVE}\n"
            f"clusterservingruntime.ome.io/{MULTINODE}\n"
            f"clusterservingruntime.ome.io/{MANUAL}\n",
            "",
            id="explain -o name gives every row's runtime as kind.group/name",
        ),
        pytest.param(
            EXPLAIN_EVERYWHERE,
            "name",
            f"clusterservingruntime.ome.io/{MANUAL}\n"
            f"clusterservingruntime.ome.io/{MULTINODE}\n"
            f"servingruntime.ome.io/{OMENATIVE}\n"
            f"clusterservingruntime.ome.io/{MULTINODE}\n"
            f"clusterservingruntime.ome.io/{MANUAL}\n",
            "",
            id="explain -A -o name gives every namespace's rows in turn",
        ),
        pytest.param(
            EFFECTIVE,
            "name",
            "inferenceservice.ome.io/llama-3-70b\n",
            "",
            id="effective -o name gives the InferenceService",
        ),
        pytest.param(
            IMPACT,
            "name",
            "inferenceservice.ome.io/llama-3-70b-named-runtime\n",
            IMPACT_SUMMARY,
            id="impact -o name gives the InferenceServices that move",
        ),
        pytest.param(
            EXPLAIN_MIGRATION,
            'jsonpath={range .runtimes[*]}{.name}{"\\t"}{.compatible}{"\\n"}{end}',
            f"{OMENATIVE}\ttrue\n{MULTINODE}\ttrue\n{MANUAL}\tfalse\n",
            "",
            id="explain -o jsonpath reads the document -o json prints",
        ),
        pytest.param(
            EXPLAIN_EVERYWHERE,
            "jsonpath={.items[*].namespace}",
            "llama-demo llama-migration",
            "",
            id="explain -A -o jsonpath reads the list",
        ),
        pytest.param(
            EFFECTIVE,
            "jsonpath={.views.live.runtime.kind}/{.views.live.runtime.name}",
            f"ServingRuntime/{OMENATIVE}",
            "",
            id="effective -o jsonpath reads the report",
        ),
        pytest.param(
            IMPACT,
            'jsonpath={range .items[*]}{.namespace}/{.name} {.before}{"\\n"}{end}',
            f"llama-demo/llama-3-70b-named-runtime CSR/{MULTINODE}\n",
            IMPACT_SUMMARY,
            id="impact -o jsonpath reads the impact",
        ),
    ],
)
def test_name_and_jsonpath(command, output, expected, summary):
    assert run(main, *_samples(command), "-o", output) == (0, expected, summary)


def _headers_left_out(command: tuple[str, ...], *options: str) -> tuple[str, str]:
    _, table, _ = run(main, *_samples(command), *options)
    _, bare, _ = run(main, *_samples(command), *options, "--no-headers")
    return table, bare


@pytest.mark.parametrize(
    ("command", "options", "header"),
    [
        pytest.param(EXPLAIN_MIGRATION, (), "RUNTIME ", id="explain"),
        pytest.param(EXPLAIN_MIGRATION, ("-o", "wide"), "RUNTIME ", id="explain -o wide"),
        pytest.param(EFFECTIVE, (), "SCOPE ", id="effective"),
        pytest.param(EFFECTIVE, ("-o", "wide"), "SCOPE ", id="effective -o wide"),
        pytest.param(IMPACT, (), "NAMESPACE ", id="impact"),
    ],
)
def test_no_headers_leaves_out_the_header_line_only(command, options, header):
    table, bare = _headers_left_out(command, *options)
    lines = table.splitlines()
    assert lines[0].startswith(header)
    assert [line.split() for line in bare.splitlines()] == [line.split() for line in lines[1:]]


def test_no_headers_with_all_namespaces_keeps_the_namespace_lines():
    _, bare = _headers_left_out(EXPLAIN_EVERYWHERE)
    assert [line for line in bare.splitlines() if not line.startswith("srt-")] == [
        "Namespace: llama-demo",
        "",
        "Namespace: llama-migration",
    ]


def test_no_headers_with_the_effective_context_leaves_out_both_headers():
    _, bare = _headers_left_out(EXPLAIN_MIGRATION, "--with-effective")
    assert [line.split()[0] for line in bare.splitlines() if line] == [
        "srt-llama-3-3-70b-instruct-omenative",
        "srt-llama-3-3-70b-instruct-multinode",
        "srt-llama-3-3-70b-instruct-manual",
        "Effective",
        *["Service"] * 2,
        *["Source"] * 2,
        "Service",
        *["Live"] * 5,  # the engine's replica bounds are the InferenceService's
        *["Active"] * 5,
        *["Service"] * 6,
    ]


ALLOWED = "json,jsonpath,name,wide,yaml"


@pytest.mark.parametrize(
    ("command", "output", "message"),
    [
        pytest.param(
            EXPLAIN_MIGRATION,
            "yamll",
            'unable to match a printer suitable for the output format "yamll", '
            f"allowed formats are: {ALLOWED}",
            id="explain: kubectl's words for an unknown format",
        ),
        pytest.param(
            EXPLAIN_EVERYWHERE,
            "csv",
            'unable to match a printer suitable for the output format "csv", '
            f"allowed formats are: {ALLOWED}",
            id="explain -A: the same words",
        ),
        pytest.param(
            EFFECTIVE,
            "yamll",
            'unable to match a printer suitable for the output format "yamll", '
            f"allowed formats are: {ALLOWED}",
            id="effective: the same words",
        ),
        pytest.param(
            IMPACT,
            "wide",
            'unable to match a printer suitable for the output format "wide", '
            "allowed formats are: json,jsonpath,name,yaml",
            id="impact: the same words, its own formats (no wide)",
        ),
        pytest.param(
            EXPLAIN_MIGRATION,
            "name=x",
            'unable to match a printer suitable for the output format "name=x", '
            f"allowed formats are: {ALLOWED}",
            id="only jsonpath takes =",
        ),
        pytest.param(
            EXPLAIN_MIGRATION,
            "jsonpath",
            "template format specified but no template given",
            id="explain: jsonpath without its template",
        ),
        pytest.param(
            EFFECTIVE,
            "jsonpath=",
            "template format specified but no template given",
            id="effective: jsonpath with an empty template",
        ),
        pytest.param(
            IMPACT,
            "jsonpath={range .items[*]}{.name}",
            "error parsing jsonpath {range .items[*]}{.name}, unclosed range: {end} is missing",
            id="impact: a template that does not parse",
        ),
    ],
)
def test_a_bad_output_is_refused_in_one_wording(command, output, message):
    assert run(main, *_samples(command), "-o", output) == (1, "", f"error: {message}\n")
