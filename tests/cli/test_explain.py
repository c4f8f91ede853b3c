"""``kubectl ome runtime explain`` end to end over ``-f`` manifests (S12, S16.1)."""

from __future__ import annotations

import io
import pathlib
import textwrap

import pytest
import yaml

from ome_operator.cli.main import main
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: pathlib.Path, *objects: dict) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return str(path)


SEED_EXPLAIN = textwrap.dedent("""\
    RUNTIME                                SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON
    srt-llama-3-3-70b-instruct-manual      Cluster   No           -          -        supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it (pin it explicitly via spec.runtime.name instead)
    srt-llama-3-3-70b-instruct-multinode   Cluster   No           -          -        runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative
    """)  # noqa: E501 (one line a row, as kubectl prints)


def test_seed_inference_service_is_explained_from_the_samples() -> None:
    assert run(
        "runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-demo", "-f", str(SAMPLES)
    ) == (0, SEED_EXPLAIN, "")


def test_model_alone_skips_the_mode_check_and_ranks_the_qualifying_runtime_first() -> None:
    expected = textwrap.dedent("""\
        RUNTIME                                SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON
        srt-llama-3-3-70b-instruct-multinode   Cluster   Yes          2          4        -
        """)
    code, out, err = run(
        "runtime", "explain", "--model", "llama-3-3-70b-instruct", "-f", str(SAMPLES)
    )
    assert (code, err) == (0, "")
    assert out.startswith(expected)


def test_rank_order_priority_weight_and_no_rows(tmp_path: pathlib.Path) -> None:
    path = write(
        tmp_path,
        model_manifest("llama"),
        runtime_manifest("zeta", cluster=False, formats=[entry(autoSelect=True)]),
        runtime_manifest(
            "alpha",
            formats=[
                entry(autoSelect=True, priority=3, modelFormat={"name": "safetensors", "weight": 2})
            ],
        ),
        runtime_manifest("beta", disabled=True),
        runtime_manifest("gamma", formats=[entry("gguf", autoSelect=True)]),
    )
    expected = textwrap.dedent("""\
        RUNTIME   SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON
        zeta      Namespaced   Yes          1          2        -
        alpha     Cluster      Yes          3          9        -
        beta      Cluster      No           -          -        runtime is disabled
        gamma     Cluster      No           -          -        model format 'mt:safetensors:transformers' not in supported formats: format name mismatch (model=safetensors, runtime=gguf)
        """)  # noqa: E501
    assert run("runtime", "explain", "--model", "llama", "-f", path) == (0, expected, "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ("runtime", "explain"),
            "exactly one of --model or --isvc is required",
            id="neither --model nor --isvc",
        ),
        pytest.param(
            ("runtime", "explain", "--model", "m", "--isvc", "i"),
            "exactly one of --model or --isvc is required",
            id="both --model and --isvc",
        ),
        pytest.param(
            ("runtime", "explain", "--model", "m", "--with-effective"),
            "--with-effective requires --isvc",
            id="--with-effective without --isvc",
        ),
        pytest.param(
            ("runtime", "explain", "--model", "nope"),
            'clusterbasemodels.ome.io "nope" not found',
            id="a missing model gives the API's NotFound text for the ClusterBaseModel",
        ),
        pytest.param(
            ("runtime", "explain", "--isvc", "nope"),
            'inferenceservices.ome.io "nope" not found',
            id="a missing InferenceService gives the API's NotFound text",
        ),
        pytest.param(
            ("runtime", "explain", "--isvc", "bare"),
            'InferenceService "bare" has no spec.model; pass --model instead',
            id="an InferenceService without spec.model",
        ),
        pytest.param(
            ("runtime", "tree", "x"), None, id="tree, history and sync are not registered"
        ),
    ],
)
def test_argument_and_input_errors_exit_1(
    tmp_path: pathlib.Path, argv: tuple[str, ...], message: str | None
) -> None:
    bare = isvc_manifest("bare", model=None, runtime={"name": "rt"})
    code, out, err = run(*argv, "-f", write(tmp_path, bare))
    assert (code, out) == (1, "")
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1
    if message is not None:
        assert err == f"error: {message}\n"


def test_an_explicit_runtime_prints_a_note_and_the_hypothetical_table(
    tmp_path: pathlib.Path,
) -> None:
    path = write(
        tmp_path,
        model_manifest("llama"),
        runtime_manifest("rt"),
        isvc_manifest("chat", runtime={"name": "rt"}),
    )
    code, out, err = run("runtime", "explain", "--isvc", "chat", "-f", path)
    assert (code, err) == (
        0,
        "Note: spec.runtime is explicit; automatic selection below is hypothetical.\n",
    )
    assert out.splitlines()[1].split() == ["rt", "Cluster", "Yes", "1", "2", "-"]


def test_no_runtimes_prints_no_table_and_succeeds(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, model_manifest("llama"))
    assert run("runtime", "explain", "--model", "llama", "-f", path) == (
        0,
        "",
        "No serving runtimes found in the selected namespace or at cluster scope.\n",
    )


def test_more_than_1000_runtimes_is_refused(tmp_path: pathlib.Path) -> None:
    runtimes = [runtime_manifest(f"rt-{i:04d}") for i in range(1001)]
    path = write(tmp_path, model_manifest("llama"), *runtimes)
    assert run("runtime", "explain", "--model", "llama", "-f", path) == (
        1,
        "",
        "error: runtime candidate snapshot exceeds the CLI collection limit\n",
    )


def test_a_base_model_in_the_namespace_is_read_before_the_cluster_model(
    tmp_path: pathlib.Path,
) -> None:
    path = write(
        tmp_path,
        model_manifest("llama", fmt="gguf"),
        model_manifest("llama", cluster=False, namespace="team"),
        runtime_manifest("rt"),
    )
    code, out, _ = run("runtime", "explain", "--model", "llama", "-n", "team", "-f", path)
    assert (code, out.splitlines()[1].split()[:3]) == (0, ["rt", "Cluster", "Yes"])


def test_a_malformed_runtime_is_set_aside_with_the_operators_warning(
    tmp_path: pathlib.Path,
) -> None:
    broken = runtime_manifest("broken")
    broken["spec"]["supportedModelFormats"][0]["priority"] = "high"
    path = write(tmp_path, model_manifest("llama"), broken)
    assert run("runtime", "explain", "--model", "llama", "-f", path) == (
        0,
        "",
        'Warning: ClusterServingRuntime "broken" is invalid: '
        'spec.supportedModelFormats[0].priority: must be an integer (got "high"); it is ignored '
        "until it changes\n"
        "No serving runtimes found in the selected namespace or at cluster scope.\n",
    )


def test_manifests_can_come_from_stdin() -> None:
    text = yaml.safe_dump_all([model_manifest("llama"), runtime_manifest("rt")])
    code, out, _ = run("runtime", "explain", "--model", "llama", "-f", "-", stdin=text)
    assert (code, out.splitlines()[1].split()[:3]) == (0, ["rt", "Cluster", "Yes"])


# --- S16.7: ties ----------------------------------------------------------------------------

_TIED = (
    model_manifest("llama"),
    runtime_manifest("beta", formats=[entry(autoSelect=True, priority=2)]),
    runtime_manifest("alpha", formats=[entry(autoSelect=True, priority=2)]),
    runtime_manifest("gamma", formats=[entry(autoSelect=True)]),
    runtime_manifest("delta", formats=[entry(autoSelect=True)]),
    runtime_manifest("solo", formats=[entry(autoSelect=True, priority=3)], size_range=("1B", None)),
)


@pytest.mark.parametrize(
    ("output", "table"),
    [
        pytest.param(
            "wide",
            textwrap.dedent("""\
                RUNTIME   SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON   TIE
                solo      Cluster   Yes          3          6        -        -
                alpha     Cluster   Yes          2          4        -        name decides
                beta      Cluster   Yes          2          4        -        name decides
                delta     Cluster   Yes          1          2        -        name decides
                gamma     Cluster   Yes          1          2        -        name decides
                """),
            id="wide adds a TIE column naming every runtime only its name ranks",
        ),
        pytest.param(
            "table",
            textwrap.dedent("""\
                RUNTIME   SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON
                solo      Cluster   Yes          3          6        -
                alpha     Cluster   Yes          2          4        -
                beta      Cluster   Yes          2          4        -
                delta     Cluster   Yes          1          2        -
                gamma     Cluster   Yes          1          2        -
                """),
            id="the S12 table stays as documented",
        ),
    ],
)
def test_ties_are_marked_with_o_wide_only(tmp_path: pathlib.Path, output: str, table: str) -> None:
    path = write(tmp_path, *_TIED)

    assert run("runtime", "explain", "--model", "llama", "-f", path, "-o", output) == (
        0,
        table,
        "",
    )
