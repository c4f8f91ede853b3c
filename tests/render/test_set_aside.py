"""``ome-operator render`` treats its input as the operator treats a cluster: a runtime, model or
AcceleratorClass that does not parse is set aside with the operator's ``MalformedResource``
text (a ``Warning:`` line naming its file and document, and the event in the report's
``events``); an InferenceService that does not parse is an item admission denies with the
webhook's text; everything else renders as usual (docs/troubleshooting.md)."""

from __future__ import annotations

import io
import pathlib

import pytest
import yaml

from ome_operator.operator_command import main
from tests.builders import MODEL_TEXT as MODEL
from tests.builders import RENDER_NOW as NOW
from tests.builders import RUNTIME_TEXT as RUNTIME

#: The issue's malformed runtime: a string for a boolean and a word for a priority.
BAD_RUNTIME = RUNTIME.replace("name: vllm}", "name: bad}").replace(
    "autoSelect: true", 'autoSelect: "yes"\n    priority: high'
)
BAD_RUNTIME_PROBLEM = (
    'ClusterServingRuntime "bad" is invalid: spec.supportedModelFormats[0].autoSelect: must be '
    'a boolean (got "yes"); spec.supportedModelFormats[0].priority: must be an integer '
    '(got "high")'
)
SET_ASIDE = "; it is ignored until it changes"


def service(name: str, spec: str = "model: {name: llama}, engine: {minReplicas: 1}") -> str:
    return (
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\n"
        f"metadata: {{name: {name}, namespace: demo}}\nspec: {{{spec}}}\n"
    )


#: The issue's InferenceService that does not parse: a mode misspelt, a count as a string.
BAD_SERVICE = service("broken", "model: {name: llama}, deploymentMode: OMENatve, engine: "
                      '{minReplicas: "2"}')  # fmt: skip
BAD_SERVICE_DENIAL = (
    'InferenceService "demo/broken" is invalid: spec.deploymentMode: must be "OMENative" or '
    '"RawDeployment" (got "OMENatve"); spec.engine.minReplicas: must be an integer (got "2")'
)


def write(folder: pathlib.Path, files: dict[str, str]) -> str:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return str(folder)


def render(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["render", *argv, "--now", NOW], stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def catalog(tmp_path: pathlib.Path) -> str:
    """The issue's folder: one malformed runtime, one InferenceService that does not parse
    and five good ones."""
    files = {"a-model.yaml": MODEL, "a-runtime.yaml": RUNTIME, "bad-runtime.yaml": BAD_RUNTIME}
    files |= {f"svc-{n}.yaml": service(f"svc{n}") for n in range(1, 6)}
    files["svc-broken.yaml"] = BAD_SERVICE
    return write(tmp_path / "catalog", files)


def test_one_bad_runtime_and_one_bad_service_hide_nothing_else(catalog: str) -> None:
    code, out, err = render("-f", catalog, "-o", "summary")

    assert code == 0
    assert out.splitlines() == [
        "NAMESPACE   NAME     ALLOWED   RUNTIME   MODES                  OBJECTS",
        "demo        broken   false     -         -                      0",
        "demo        svc1     true      vllm      engine=RawDeployment   5",
        "demo        svc2     true      vllm      engine=RawDeployment   5",
        "demo        svc3     true      vllm      engine=RawDeployment   5",
        "demo        svc4     true      vllm      engine=RawDeployment   5",
        "demo        svc5     true      vllm      engine=RawDeployment   5",
    ]
    assert (
        err
        == f"Warning: {catalog}/bad-runtime.yaml: document 1: {BAD_RUNTIME_PROBLEM}{SET_ASIDE}\n"
    )


def test_the_report_holds_the_denial_and_the_operators_event(catalog: str) -> None:
    report = yaml.safe_load(render("-f", catalog)[1])

    assert report["items"][0] == {
        "inferenceService": {"namespace": "demo", "name": "broken"},
        "admission": {"allowed": False, "message": BAD_SERVICE_DENIAL, "warnings": []},
        "objects": [],
        "status": {},
        "events": [],
        "logs": [],
    }
    assert report["events"] == [
        {
            "type": "Warning",
            "reason": "MalformedResource",
            "message": BAD_RUNTIME_PROBLEM + SET_ASIDE,
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "ClusterServingRuntime",
                "name": "bad",
            },
        }
    ]


def test_fail_on_denied_names_the_service_that_does_not_parse(catalog: str) -> None:
    code, _, err = render("-f", catalog, "-o", "summary", "--fail-on-denied")

    assert code == 3
    assert err.splitlines()[1:] == [
        "render: admission denies 1 of 6 InferenceServices: demo/broken"
    ]


@pytest.mark.parametrize(
    ("manifests", "event", "summary"),
    [
        pytest.param(
            MODEL.replace("{name: safetensors}", "safetensors") + "---\n" + RUNTIME,
            {
                "message": 'ClusterBaseModel "llama" is invalid: spec.modelFormat: must be an '
                'object (got "safetensors")' + SET_ASIDE,
                "involvedObject": {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "ClusterBaseModel",
                    "name": "llama",
                },
            },
            "demo        svc    false     -         -       0",
            id="a model that does not parse is set aside: its InferenceService finds no model",
        ),
        pytest.param(
            MODEL + "---\n" + RUNTIME + "---\napiVersion: ome.io/v1beta1\nkind: AcceleratorClass\n"
            "metadata: {name: a100}\nspec: [a100]\n",
            {
                "message": 'AcceleratorClass "a100" is invalid: spec: must be an object (got '
                '["a100"])' + SET_ASIDE,
                "involvedObject": {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "AcceleratorClass",
                    "name": "a100",
                },
            },
            "demo        svc    true      vllm      engine=RawDeployment   5",
            id="an AcceleratorClass that does not parse is set aside",
        ),
        pytest.param(
            MODEL
            + "---\n"
            + RUNTIME.replace("kind: Cluster", "kind: ")
            .replace("name: vllm}", "name: vllm, namespace: demo}")
            .replace("'vllm:1'", "12"),
            {
                "message": 'ServingRuntime "demo/vllm" is invalid: spec.engineConfig.runner.image: '
                "must be a string (got 12)" + SET_ASIDE,
                "involvedObject": {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "ServingRuntime",
                    "namespace": "demo",
                    "name": "vllm",
                },
            },
            "demo        svc    false     -         -       0",
            id="a runtime whose image is a number is set aside, not rendered",
        ),
    ],
)
def test_a_runtime_model_or_accelerator_class_that_does_not_parse_is_set_aside(
    tmp_path: pathlib.Path, manifests: str, event: dict, summary: str
) -> None:
    folder = write(tmp_path / "in", {"all.yaml": manifests + "---\n" + service("svc")})

    code, out, err = render("-f", folder, "-o", "summary")
    report = yaml.safe_load(render("-f", folder)[1])

    assert (code, out.splitlines()[1]) == (0, summary)
    assert report["events"] == [{"type": "Warning", "reason": "MalformedResource", **event}]
    assert err.startswith(f"Warning: {folder}/all.yaml: document ")
    assert err.endswith(f": {event['message']}\n")


def test_a_report_without_anything_set_aside_has_no_events_key(tmp_path: pathlib.Path) -> None:
    folder = write(
        tmp_path / "in", {"all.yaml": MODEL + "---\n" + RUNTIME + "---\n" + service("s")}
    )

    assert list(yaml.safe_load(render("-f", folder)[1])) == ["apiVersion", "kind", "items"]


def test_an_inference_service_whose_runner_image_is_a_number_is_denied(
    tmp_path: pathlib.Path,
) -> None:
    spec = "model: {name: llama}, engine: {runner: {name: ome-container, image: 12}}"
    folder = write(
        tmp_path / "in", {"all.yaml": MODEL + "---\n" + RUNTIME + "---\n" + service("s", spec)}
    )

    item = yaml.safe_load(render("-f", folder)[1])["items"][0]

    assert item["admission"] == {
        "allowed": False,
        "message": 'InferenceService "demo/s" is invalid: spec.engine.runner.image: must be a '
        "string (got 12)",
        "warnings": [],
    }
