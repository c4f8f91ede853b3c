"""Rules of SPEC S5.1.7: Go-style placeholders in runner strings, and malformed templates."""

from __future__ import annotations

import pytest

from ome_operator.core.rendering import PlaceholderError, render_component
from ome_operator.core.rendering.placeholders import render_placeholders, render_template
from ome_operator.models import InferenceService, from_manifest
from tests.builders import make_isvc, make_runtime
from tests.core.rendering.contexts import make_context


def _isvc() -> InferenceService:
    manifest = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "llama",
            "namespace": "llm",
            "labels": {"app": "chat", "team.example.com/owner": "alice"},
            "annotations": {"note": "hi", "blank": ""},
        },
        "spec": {"engine": {}},
    }
    return from_manifest(manifest)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param("{{.Name}}", "llama", id="Name is the ISVC name"),
        pytest.param(
            "{{ .Namespace }}", "llm", id="Namespace is the ISVC namespace, spaces allowed"
        ),
        pytest.param("{{.Labels.app}}", "chat", id="the field form reads a label"),
        pytest.param("{{.Annotations.note}}", "hi", id="the field form reads an annotation"),
        pytest.param(
            "{{.Labels.missing}}", "<no value>", id="a missing key renders <no value> in field form"
        ),
        pytest.param(
            "{{.Annotations.blank}}", "", id="a key present with an empty value renders empty"
        ),
        pytest.param(
            "{{index .Labels `team.example.com/owner`}}",
            "alice",
            id="index with a raw string reads a key that is no field name",
        ),
        pytest.param(
            '{{index .Annotations "note"}}', "hi", id="index with a quoted string reads a key"
        ),
        pytest.param(
            "{{index .Labels `missing`}}", "", id="a missing key renders empty in index form"
        ),
        pytest.param(
            '{{index .Labels "a}}b"}}', "", id="closing braces inside a quoted key are text"
        ),
        pytest.param(
            "--name={{.Name}}.{{.Namespace}}",
            "--name=llama.llm",
            id="several actions in one string are all rendered",
        ),
        pytest.param("plain }} text", "plain }} text", id="closing braces alone are text"),
        pytest.param(
            "$(MODEL_PATH)", "$(MODEL_PATH)", id="a Kubernetes variable is not a template"
        ),
    ],
)
def test_template_renders(template: str, expected: str) -> None:
    assert render_template(template, _isvc(), "spec.engine.runner.args[0]") == expected


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        pytest.param("--name={{.Name", "unclosed action", id="an action without }} is unclosed"),
        pytest.param(
            '{{index .Labels "x}}', "unclosed action", id="an unterminated quoted key is unclosed"
        ),
        pytest.param("{{.Nme}}", "unsupported action {{.Nme}}", id="an unknown field is malformed"),
        pytest.param(
            "{{.Labels.team.example.com/owner}}",
            "unsupported action {{.Labels.team.example.com/owner}}",
            id="a key that is no field name needs the index form",
        ),
        pytest.param(
            "{{index .Labels owner}}",
            "unsupported action {{index .Labels owner}}",
            id="an index key must be a string literal",
        ),
        pytest.param(
            '{{printf "%s" .Name}}',
            'unsupported action {{printf "%s" .Name}}',
            id="functions other than index are not supported",
        ),
        pytest.param("{{}}", "unsupported action {{}}", id="an empty action is malformed"),
    ],
)
def test_malformed_template_raises(template: str, problem: str) -> None:
    with pytest.raises(PlaceholderError) as caught:
        render_template(template, _isvc(), "spec.engine.runner.args[1]")
    assert caught.value.path == "spec.engine.runner.args[1]"
    assert caught.value.template == template
    assert caught.value.problem == problem


def test_every_string_of_a_runner_is_rendered_and_other_values_kept() -> None:
    runner = {
        "name": "ome-container",
        "image": "registry/{{.Namespace}}:1",
        "args": ["--served-model-name={{.Name}}", 3],
        "env": [{"name": "OWNER", "value": "{{index .Labels `team.example.com/owner`}}"}],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    assert render_placeholders(runner, _isvc(), "spec.engine.runner") == {
        "name": "ome-container",
        "image": "registry/llm:1",
        "args": ["--served-model-name=llama", 3],
        "env": [{"name": "OWNER", "value": "alice"}],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }


@pytest.mark.parametrize(
    ("component", "isvc_spec", "runtime_spec", "message"),
    [
        pytest.param(
            "engine",
            {"engine": {"runner": {"args": ["--ok", "--name={{.Name"]}}},
            {},
            "failed to render placeholders in spec.engine.runner.args[1]: malformed template "
            '"--name={{.Name": unclosed action',
            id="the error names the runner field path and the template",
        ),
        pytest.param(
            "engine",
            {"engine": {"leader": {}, "worker": {"size": 1}}},
            {
                "engineConfig": {
                    "leader": {"runner": {"image": "img"}},
                    "worker": {"runner": {"env": [{"name": "X", "value": "{{.Bad}}"}]}},
                }
            },
            "failed to render placeholders in spec.engine.worker.runner.env[0].value: malformed "
            'template "{{.Bad}}": unsupported action {{.Bad}}',
            id="a worker runner's path names the worker",
        ),
        pytest.param(
            "router",
            {"router": {"runner": {"image": "img"}, "config": {"BACKEND": "{{.Labels}}"}}},
            {},
            "failed to render placeholders in spec.router.config.BACKEND: malformed template "
            '"{{.Labels}}": unsupported action {{.Labels}}',
            id="a router config value is rendered and its path names the config key",
        ),
    ],
)
def test_malformed_template_fails_the_component(
    component: str, isvc_spec: dict, runtime_spec: dict, message: str
) -> None:
    isvc = make_isvc("llama", model=None, **isvc_spec)
    ctx = make_context(isvc, make_runtime("rt", **runtime_spec), component)
    with pytest.raises(PlaceholderError) as caught:
        render_component(ctx)
    assert str(caught.value) == message
