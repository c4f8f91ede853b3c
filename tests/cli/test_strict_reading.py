"""``-f`` manifests are read as strictly as kubectl reads them, and held as a cluster would hold
them: a key set twice in a mapping is an error naming the file, document, line and key (two
documents written one after the other without ``---`` are one such); a kind or version the ome.io
CRDs do not serve is a ``Warning:`` naming the file and document, and the object is left out
(``render --fail-on-denied`` counts it); an object given twice keeps the last, with a warning;
a runtime or model that does not parse is set aside with the operator's text."""

from __future__ import annotations

import io
import pathlib

import pytest
import yaml

from ome_operator import operator_command
from ome_operator.cli import main as kubectl_ome
from ome_operator.cluster.decoding import StreamError, yaml_documents
from ome_operator.cluster.yaml_loading import fast_documents
from tests.builders import MODEL_TEXT as MODEL
from tests.builders import RENDER_NOW as NOW
from tests.builders import RUNTIME_TEXT as RUNTIME
from tests.builders import SERVICE_TEXT as SERVICE

SET_ASIDE = "; it is ignored until it changes"


def render(stdin: str = "", *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ("render", *(argv or ("-f", "-")), "--now", NOW)
    code = operator_command.main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def kubectl(stdin: str, *command: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["runtime", *command, "-n", "demo"]
    argv += [] if "-f" in command else ["-f", "-"]
    code = kubectl_ome.main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def explain(stdin: str) -> tuple[int, str, str]:
    return kubectl(stdin, "explain", "--isvc", "svc")


def effective(stdin: str) -> tuple[int, str, str]:
    return kubectl(stdin, "effective", "svc")


FRONT_DOORS = [
    pytest.param(render, id="render"),
    pytest.param(explain, id="explain"),
    pytest.param(effective, id="effective"),
]


@pytest.mark.parametrize("front_door", FRONT_DOORS)
@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        pytest.param(
            SERVICE + "---\n" + MODEL.replace("metadata:", "kind: BaseModel\nmetadata:"),
            'error parsing STDIN: document 2: line 8: key "kind" already set in map',
            id="a key set twice in a mapping names the file, document, line and key",
        ),
        pytest.param(
            MODEL + "---\n" + SERVICE + RUNTIME,
            'error parsing STDIN: document 2: line 10: key "apiVersion" already set in map',
            id="two documents written without --- between them are refused",
        ),
        pytest.param(
            SERVICE.replace("engine: {}", "engine: {}, model: {name: other}"),
            'error parsing STDIN: document 1: line 4: key "model" already set in map',
            id="a key set twice in a nested flow mapping",
        ),
        pytest.param(
            '{"apiVersion": "ome.io/v1beta1",\n "kind": "InferenceService",\n'
            ' "metadata": {"name": "svc", "namespace": "demo", "name": "other"}}\n',
            'error parsing STDIN: document 1: line 3: key "name" already set in map',
            id="a JSON object setting a key twice is refused with its line",
        ),
    ],
)
def test_a_key_set_twice_is_an_error(front_door, stdin, message):
    assert front_door(stdin) == (1, "", f"error: {message}\n")


def test_a_merged_key_may_be_set_again_as_merging_intends():
    text = "base: &b {a: 1, b: 2}\nmerged:\n  <<: *b\n  a: 3\n"

    assert yaml_documents(text) == [{"base": {"a": 1, "b": 2}, "merged": {"a": 3, "b": 2}}]


def test_both_readers_refuse_a_key_set_twice_and_the_pure_one_words_it():
    text = "a: 1\n---\nb: 1\nc: {b: 2}\nb: 3\n"

    with pytest.raises(StreamError) as raised:
        yaml_documents(text)

    assert fast_documents(text) is None
    assert (raised.value.problem, raised.value.document) == (
        'line 5: key "b" already set in map',
        2,
    )


#: Objects the ome.io CRDs do not serve, and what reading each one warns.
UNSERVED = [
    pytest.param(
        SERVICE.replace("kind: InferenceService", "kind: InferenceServce"),
        'no matches for kind "InferenceServce" in version "ome.io/v1beta1" (did you mean '
        '"InferenceService"?); it is left out',
        id="a misspelt kind",
    ),
    pytest.param(
        SERVICE.replace("ome.io/v1beta1", "ome.io/v1"),
        'no matches for kind "InferenceService" in version "ome.io/v1" (the CRDs serve '
        '"ome.io/v1beta1"); it is left out',
        id="a version the CRDs do not serve",
    ),
    pytest.param(
        SERVICE.replace("ome.io/v1beta1", "v1"),
        'kind "InferenceService" in version "v1" is not an ome.io kind (did you mean '
        '"ome.io/v1beta1"?); it is left out',
        id="an ome.io kind in another group",
    ),
    pytest.param(
        SERVICE.replace("ome.io/v1beta1", "serving.example.com/v1").replace(
            "kind: InferenceService", "kind: ServingRuntme"
        ),
        'kind "ServingRuntme" in version "serving.example.com/v1" is not an ome.io kind (did '
        'you mean kind "ServingRuntime" in "ome.io/v1beta1"?); it is left out',
        id="a kind of another group close to an ome.io kind",
    ),
    pytest.param(
        SERVICE.replace("kind: InferenceService", "kind: BenchmarkJob"),
        'no matches for kind "BenchmarkJob" in version "ome.io/v1beta1" (not a kind the ome.io '
        "CRDs serve); it is left out",
        id="an ome.io kind this operator does not serve",
    ),
]


@pytest.mark.parametrize(("document", "warning"), UNSERVED)
def test_render_leaves_out_a_kind_the_crds_do_not_serve_with_a_warning(document, warning):
    code, out, err = render(MODEL + "---\n" + document)

    assert (code, yaml.safe_load(out)["items"]) == (0, [])
    assert err == f"Warning: STDIN: document 2: {warning}\n"


@pytest.mark.parametrize(("document", "warning"), UNSERVED)
def test_fail_on_denied_counts_what_was_meant_for_the_operator(document, warning):
    code, _, err = render(MODEL + "---\n" + document, "-f", "-", "--fail-on-denied")

    assert code == 3
    assert err.splitlines() == [
        f"Warning: STDIN: document 2: {warning}",
        "render: 1 object of a kind the ome.io CRDs do not serve: STDIN: document 2",
    ]


def test_another_groups_kinds_are_taken_as_written():
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: demo}\n"

    assert render(MODEL + "---\n" + deployment + "---\n" + SERVICE)[::2] == (0, "")


def test_explain_leaves_out_a_runtime_in_a_version_the_crds_do_not_serve():
    stdin = MODEL + "---\n" + SERVICE + "---\n" + RUNTIME.replace("ome.io/v1beta1", "ome.io/v1")

    assert explain(stdin) == (
        0,
        "",
        'Warning: STDIN: document 3: no matches for kind "ClusterServingRuntime" in version '
        '"ome.io/v1" (the CRDs serve "ome.io/v1beta1"); it is left out\n'
        "No serving runtimes found in the selected namespace or at cluster scope.\n",
    )


@pytest.fixture
def folder(tmp_path: pathlib.Path) -> pathlib.Path:
    """A model, an InferenceService and the runtime vllm in two files: ``a.yaml`` supports
    another format, ``b.yaml`` (read last) the model's."""
    found = tmp_path / "in"
    found.mkdir()
    (found / "0.yaml").write_text(MODEL + "---\n" + SERVICE, encoding="utf-8")
    (found / "a.yaml").write_text(RUNTIME.replace("{name: safetensors}", "{name: onnx}"))
    (found / "b.yaml").write_text(RUNTIME, encoding="utf-8")
    return found


def test_a_runtime_defined_twice_is_evaluated_once_the_last(folder: pathlib.Path) -> None:
    code, out, err = render("", "-f", str(folder), "-o", "summary")

    assert (code, out.splitlines()[1].split()[:4]) == (0, ["demo", "svc", "true", "vllm"])
    assert err == (
        f'Warning: {folder}/b.yaml: document 1: ClusterServingRuntime "vllm" is also in '
        f"{folder}/a.yaml: document 1; the last is kept\n"
    )


def test_the_no_runtime_message_counts_a_runtime_defined_twice_once(
    folder: pathlib.Path,
) -> None:
    (folder / "b.yaml").write_text(RUNTIME.replace("{name: safetensors}", "{name: gguf}"))

    report = yaml.safe_load(render("", "-f", str(folder))[1])

    assert (
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)"
        in (report["items"][0]["admission"]["message"])
    )
    assert "runtime=gguf" in report["items"][0]["admission"]["message"]


def test_the_same_folder_given_twice_renders_each_object_once(folder: pathlib.Path) -> None:
    code, out, err = render("", "-f", str(folder), "-f", str(folder), "-o", "summary")

    assert (code, len(out.splitlines())) == (0, 2)
    again = "is also in the same file, read twice; the last is kept"
    assert err.splitlines() == [
        f'Warning: {folder}/b.yaml: document 1: ClusterServingRuntime "vllm" is also in '
        f"{folder}/a.yaml: document 1; the last is kept",
        f'Warning: {folder}/0.yaml: document 1: ClusterBaseModel "llama" {again}',
        f'Warning: {folder}/0.yaml: document 2: InferenceService "demo/svc" {again}',
        f'Warning: {folder}/a.yaml: document 1: ClusterServingRuntime "vllm" is also in '
        f"{folder}/b.yaml: document 1; the last is kept",
        f'Warning: {folder}/b.yaml: document 1: ClusterServingRuntime "vllm" is also in '
        f"{folder}/a.yaml: document 1; the last is kept",
    ]


def test_explain_keeps_the_last_of_a_runtime_defined_twice(folder: pathlib.Path) -> None:
    code, out, err = kubectl("", "explain", "--isvc", "svc", "-f", str(folder))

    assert (code, err) == (
        0,
        f'Warning: {folder}/b.yaml: document 1: ClusterServingRuntime "vllm" is also in '
        f"{folder}/a.yaml: document 1; the last is kept\n",
    )
    assert [line.split()[:3] for line in out.splitlines()] == [
        ["RUNTIME", "SCOPE", "COMPATIBLE"],
        ["vllm", "Cluster", "Yes"],
    ]


BAD_RUNTIME = RUNTIME.replace("name: vllm}", "name: bad}").replace(
    "autoSelect: true", 'autoSelect: "yes"\n    priority: high'
)
BAD_RUNTIME_WARNING = (
    'Warning: ClusterServingRuntime "bad" is invalid: spec.supportedModelFormats[0].autoSelect: '
    'must be a boolean (got "yes"); spec.supportedModelFormats[0].priority: must be an integer '
    '(got "high")' + SET_ASIDE
)


def test_explain_sets_aside_a_runtime_that_does_not_parse():
    code, out, err = explain(MODEL + "---\n" + SERVICE + "---\n" + RUNTIME + "---\n" + BAD_RUNTIME)

    assert (code, err) == (0, BAD_RUNTIME_WARNING + "\n")
    assert [line.split()[:3] for line in out.splitlines()] == [
        ["RUNTIME", "SCOPE", "COMPATIBLE"],
        ["vllm", "Cluster", "Yes"],
    ]


def test_explain_sets_aside_a_runtime_whose_image_is_a_number():
    code, out, err = explain(
        MODEL + "---\n" + SERVICE + "---\n" + RUNTIME.replace("'vllm:1'", "12")
    )

    assert (code, out) == (0, "")
    assert err == (
        'Warning: ClusterServingRuntime "vllm" is invalid: spec.engineConfig.runner.image: must '
        f"be a string (got 12){SET_ASIDE}\n"
        "No serving runtimes found in the selected namespace or at cluster scope.\n"
    )


def test_explain_finds_no_model_that_does_not_parse():
    bad_model = MODEL.replace("{name: safetensors}", "safetensors")

    assert explain(bad_model + "---\n" + SERVICE + "---\n" + RUNTIME) == (
        1,
        "",
        'Warning: ClusterBaseModel "llama" is invalid: spec.modelFormat: must be an object (got '
        f'"safetensors"){SET_ASIDE}\n'
        'error: clusterbasemodels.ome.io "llama" not found\n',
    )


def test_effective_sets_aside_a_runtime_that_does_not_parse():
    code, out, err = effective(
        MODEL + "---\n" + SERVICE + "---\n" + RUNTIME + "---\n" + BAD_RUNTIME
    )

    assert (code, err) == (0, BAD_RUNTIME_WARNING + "\n")
    assert out


def test_impact_sets_aside_a_state_runtime_that_does_not_parse(tmp_path: pathlib.Path) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(MODEL + "---\n" + SERVICE + "---\n" + RUNTIME + "---\n" + BAD_RUNTIME)
    proposed = tmp_path / "proposed.yaml"
    proposed.write_text(RUNTIME.replace("autoSelect: true", "autoSelect: false"))

    code, _, err = kubectl("", "impact", "-f", str(proposed), "--state", str(state))

    assert (code, err.splitlines()[0]) == (0, BAD_RUNTIME_WARNING)
