"""``kubectl ome runtime impact`` (S16.6) offline: the table, the documents, the summary line,
the exit codes and the errors, exactly."""

from __future__ import annotations

import io
import json
import pathlib

import pytest
import yaml

from ome_operator.cli.main import main
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest

_STATE = [
    model_manifest("llama", modelParameterSize="7B"),
    runtime_manifest("rt-a", formats=[entry(autoSelect=True)]),
    runtime_manifest("local", cluster=False, namespace="team-b", formats=[entry(autoSelect=True)]),
    isvc_manifest("chat", namespace="team-a"),
    isvc_manifest("batch", namespace="team-a"),
    isvc_manifest("search", namespace="team-b"),
    isvc_manifest(
        "pinned", namespace="team-a", runtime={"name": "rt-a", "kind": "ClusterServingRuntime"}
    ),
]
_PRIORITY_FIVE = runtime_manifest("rt-new", formats=[entry(autoSelect=True, priority=5)])


def _files(tmp_path: pathlib.Path, change: list[dict] | None = None) -> list[str]:
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(_STATE))
    argv = ["--state", str(state)]
    if change is not None:
        proposed = tmp_path / "change.yaml"
        proposed.write_text(yaml.safe_dump_all(change))
        argv += ["-f", str(proposed)]
    return argv


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["runtime", "impact", *argv], stdin=io.StringIO(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_higher_priority_runtime_in_every_namespace(tmp_path: pathlib.Path) -> None:
    assert _run(*_files(tmp_path, [_PRIORITY_FIVE]), "-A") == (
        0,
        "NAMESPACE   INFERENCESERVICE   BEFORE     AFTER        WHY\n"
        "team-a      batch              CSR/rt-a   CSR/rt-new   CSR/rt-new ranks higher\n"
        "team-a      chat               CSR/rt-a   CSR/rt-new   CSR/rt-new ranks higher\n",
        "2 of 4 InferenceServices change runtime\n",
    )


def test_a_deletion_in_one_namespace(tmp_path: pathlib.Path) -> None:
    assert _run(*_files(tmp_path), "--delete", "ClusterServingRuntime/rt-a", "-n", "team-a") == (
        0,
        "NAMESPACE   INFERENCESERVICE   BEFORE     AFTER   WHY\n"
        "team-a      batch              CSR/rt-a   -       no runtime qualifies\n"
        "team-a      chat               CSR/rt-a   -       no runtime qualifies\n"
        "team-a      pinned             CSR/rt-a   -       no runtime qualifies\n",
        "3 of 3 InferenceServices change runtime\n",
    )


def test_a_namespaced_runtime_deleted(tmp_path: pathlib.Path) -> None:
    assert _run(*_files(tmp_path), "--delete", "ServingRuntime/team-b/local", "-n", "team-b") == (
        0,
        "NAMESPACE   INFERENCESERVICE   BEFORE     AFTER      WHY\n"
        "team-b      search             SR/local   CSR/rt-a   SR/local was deleted\n",
        "1 of 1 InferenceServices change runtime\n",
    )


def test_nothing_moved_prints_only_the_summary(tmp_path: pathlib.Path) -> None:
    same = runtime_manifest("rt-a", formats=[entry(autoSelect=True)])
    same["metadata"]["labels"] = {"team": "platform"}

    assert _run(*_files(tmp_path, [same]), "-A", "--fail-on-change") == (
        0,
        "",
        "0 of 4 InferenceServices change runtime\n",
    )


def test_fail_on_change_exits_3_when_something_moves(tmp_path: pathlib.Path) -> None:
    code, out, _ = _run(*_files(tmp_path, [_PRIORITY_FIVE]), "-A", "--fail-on-change")

    assert (code, len(out.splitlines())) == (3, 3)


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_the_document(tmp_path: pathlib.Path, output: str) -> None:
    code, out, err = _run(
        *_files(tmp_path), "--delete", "ClusterServingRuntime/rt-a", "-A", "-o", output
    )

    document = json.loads(out) if output == "json" else yaml.safe_load(out)
    assert (code, err) == (0, "3 of 4 InferenceServices change runtime\n")
    assert document == {
        "apiVersion": "cli.ome.io/v1alpha1",
        "kind": "RuntimeImpact",
        "items": [
            {"namespace": ns, "name": name, "before": "CSR/rt-a", "after": None,
             "why": "no runtime qualifies"}
            for ns, name in (("team-a", "batch"), ("team-a", "chat"), ("team-a", "pinned"))
        ],
        "changed": 3,
        "total": 4,
    }  # fmt: skip


def test_a_state_object_that_does_not_parse_is_left_out_with_a_warning(
    tmp_path: pathlib.Path,
) -> None:
    argv = _files(tmp_path, [_PRIORITY_FIVE])
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(isvc_manifest("odd", namespace="team-a", engine="x")))

    code, out, err = _run(*argv, "--state", str(broken), "-n", "team-a")

    assert code == 0 and "odd" not in out
    assert err.splitlines() == [
        'Warning: InferenceService "team-a/odd" is invalid: spec.engine: must be an object '
        '(got "x"); it is ignored until it changes',
        "2 of 3 InferenceServices change runtime",
    ]


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        pytest.param(
            (),
            "error: a change is required: -f with the proposed runtimes, or --delete KIND/NAME",
            id="no change",
        ),
        pytest.param(
            ("--delete", "csr/rt-a"),
            'error: --delete "csr/rt-a": use ClusterServingRuntime/<name> or '
            "ServingRuntime/<namespace>/<name>",
            id="a delete target in another form",
        ),
        pytest.param(
            ("--delete", "ServingRuntime/local"),
            'error: --delete "ServingRuntime/local": use ClusterServingRuntime/<name> or '
            "ServingRuntime/<namespace>/<name>",
            id="a namespaced delete target without its namespace",
        ),
        pytest.param(
            ("--delete", "ClusterServingRuntime/nope"),
            'error: clusterservingruntimes.ome.io "nope" not found',
            id="a delete target that does not exist",
        ),
        pytest.param(
            ("--delete", "x", "-A", "-n", "team-a"),
            "error: --all-namespaces and --namespace cannot be used together",
            id="-A and -n",
        ),
        pytest.param(
            ("--delete", "ClusterServingRuntime/rt-a", "-o", "wide"),
            'error: unable to match a printer suitable for the output format "wide", allowed '
            "formats are: json,jsonpath,name,yaml",
            id="an unknown output format",
        ),
    ],
)
def test_argument_errors(tmp_path: pathlib.Path, argv: tuple[str, ...], error: str) -> None:
    assert _run(*_files(tmp_path), *argv) == (1, "", error + "\n")


def test_a_change_file_holds_only_runtimes(tmp_path: pathlib.Path) -> None:
    code, out, err = _run(*_files(tmp_path, [model_manifest("other")]))

    assert (code, out) == (1, "")
    assert err == (
        f"error: {tmp_path / 'change.yaml'}: document 1: -f holds the proposed ServingRuntimes "
        "and ClusterServingRuntimes, not ClusterBaseModel (the current state is the cluster, "
        "or --state)\n"
    )


def test_a_runtime_both_proposed_and_deleted_is_refused(tmp_path: pathlib.Path) -> None:
    argv = _files(tmp_path, [runtime_manifest("rt-a")])

    assert _run(*argv, "--delete", "ClusterServingRuntime/rt-a") == (
        1,
        "",
        "error: ClusterServingRuntime/rt-a is both proposed (-f) and deleted (--delete)\n",
    )
