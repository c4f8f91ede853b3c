"""A malformed manifest ends ``ome-operator render -f`` and ``kubectl ome runtime explain|effective
-f`` with one ``error: ...`` naming the file, document, field and value, and exit 1; nothing is
printed on stdout and there is no traceback, however deep or odd the input."""

from __future__ import annotations

import io

import pytest
import yaml

from ome_operator import operator_command
from ome_operator.cli import main as kubectl_ome
from ome_operator.cli.commands import Parser, run_command
from tests.builders import MODEL_TEXT as MODEL
from tests.builders import RENDER_NOW as NOW
from tests.builders import RUNTIME_TEXT as RUNTIME
from tests.builders import SERVICE_TEXT as SERVICE
from tests.builders import isvc_manifest

#: The path the models name for a value nested over their limit of 100 levels under spec.x.
TOO_DEEP_AT = "spec.x" + "[0]" * 98


def isvc_json(lists: int) -> str:
    """The InferenceService svc in demo, as JSON, with ``spec.x`` that many lists deep (the
    document is two levels deeper)."""
    return (
        '{"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",'
        ' "metadata": {"name": "svc", "namespace": "demo"},'
        ' "spec": {"model": {"name": "llama"}, "engine": {}, "x": '
        + "[" * lists
        + "]" * lists
        + "}}"
    )


def render(stdin: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["render", "-f", "-", "--now", NOW]
    code = operator_command.main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def kubectl(stdin: str, *command: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["runtime", *command, "-n", "demo", "-f", "-"]
    code = kubectl_ome.main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


FRONT_DOORS = [
    pytest.param(render, (), id="render"),
    pytest.param(kubectl, ("explain", "--isvc", "svc"), id="explain"),
    pytest.param(kubectl, ("effective", "svc"), id="effective"),
]


#: InferenceServices that do not parse: ``explain`` and ``effective`` are asked about them
#: and stop; ``render`` denies them as the webhook would (``test_render_denies_...``).
UNPARSEABLE_SERVICES = [
    pytest.param(
        isvc_json(5_000),
        f'InferenceService "demo/svc" is invalid: {TOO_DEEP_AT}: nested more than 100 '
        "levels deep (the limit is 100)",
        id="an InferenceService nested 5,000 levels deep (JSON)",
    ),
    pytest.param(
        isvc_json(9_998),
        f'InferenceService "demo/svc" is invalid: {TOO_DEEP_AT}: nested more than 100 '
        "levels deep (the limit is 100)",
        id="as deep as an API server stores (10,000 levels)",
    ),
    pytest.param(
        MODEL + "---\n" + SERVICE.replace("spec: {", "spec: {x: " + "[" * 600 + "]" * 600 + ", "),
        f'InferenceService "demo/svc" is invalid: {TOO_DEEP_AT}: nested more than 100 '
        "levels deep (the limit is 100)",
        id="an InferenceService nested 600 levels deep (YAML)",
    ),
]


@pytest.mark.parametrize(("front_door", "command"), FRONT_DOORS[1:])
@pytest.mark.parametrize(("stdin", "message"), UNPARSEABLE_SERVICES)
def test_explain_and_effective_stop_on_the_inference_service_they_are_asked_about(
    front_door, command, stdin, message
):
    assert front_door(stdin, *command) == (1, "", f"error: {message}\n")


@pytest.mark.parametrize(("stdin", "message"), UNPARSEABLE_SERVICES)
def test_render_denies_an_inference_service_that_does_not_parse(stdin, message):
    code, out, err = render(stdin)

    assert (code, err) == (0, "")
    assert yaml.safe_load(out)["items"] == [
        {
            "inferenceService": {"namespace": "demo", "name": "svc"},
            "admission": {"allowed": False, "message": message, "warnings": []},
            "objects": [],
            "status": {},
            "events": [],
            "logs": [],
        }
    ]


@pytest.mark.parametrize(("front_door", "command"), FRONT_DOORS)
@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        pytest.param(
            isvc_json(9_999),
            "error parsing STDIN: document 1 is nested more than 10000 levels deep",
            id="deeper than an API server stores",
        ),
        pytest.param(
            MODEL + "---\n" + SERVICE.replace("kind: InferenceService", "kind: [InferenceService]"),
            'error parsing STDIN: document 2: kind: must be a string (got ["InferenceService"])',
            id="a kind that is a list",
        ),
        pytest.param(
            SERVICE + "---\napiVersion: v1\nkind: Note\na: &a [*a]\n",
            "error parsing STDIN: line 8: anchor 'a' value contains itself",
            id="an anchor inside its own value",
        ),
    ],
)
def test_a_malformed_manifest_is_one_error(front_door, command, stdin, message):
    assert front_door(stdin, *command) == (1, "", f"error: {message}\n")


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        pytest.param(
            MODEL + "---\n" + SERVICE.replace("name: svc,", "name: [1],"),
            "STDIN: document 2: metadata.name: must be a string (got [1])",
            id="an InferenceService whose name is a list",
        ),
        pytest.param(
            SERVICE + "---\napiVersion: apps/v1\nkind: Deployment\n"
            "metadata: {name: svc-engine, namespace: demo}\nstatus: true\n",
            'STDIN: document 2: Deployment "demo/svc-engine" is invalid: status: must be an '
            "object (got true)",
            id="cluster state whose status is not a mapping",
        ),
        pytest.param(
            SERVICE + "---\napiVersion: ome.io/v1beta1\nkind: InferenceReplica\n"
            "metadata: {name: svc-engine, namespace: demo, labels: {component: [engine]}}\n"
            "status: {conditions: [Ready]}\n",
            'STDIN: document 2: InferenceReplica "demo/svc-engine" is invalid: '
            "metadata.labels.component: must be "
            'a string (got ["engine"]); status.conditions[0]: must be an object (got "Ready")',
            id="cluster state with labels and conditions of the wrong shape, all named",
        ),
        pytest.param(
            SERVICE.replace("engine: {}}", "engine: {}}\nstatus: {conditions: x}"),
            'STDIN: document 1: InferenceService "demo/svc" is invalid: status.conditions: must '
            'be a list (got "x")',
            id="an InferenceService whose status conditions are not a list",
        ),
        pytest.param(
            SERVICE + "---\napiVersion: apps/v1\nkind: Deployment\n"
            "metadata: {name: old}\nspec: " + "[" * 3_000 + "]" * 3_000 + "\n",
            'STDIN: document 2: Deployment "old" is invalid: spec'
            + "[0]" * 99
            + ": nested more than 100 levels "
            "deep (the limit is 100)",
            id="cluster state nested 3,000 levels deep",
        ),
    ],
)
def test_render_refuses_what_an_api_server_could_not_have_stored(stdin, message):
    assert render(stdin) == (1, "", f"error: error parsing {message}\n")


@pytest.mark.parametrize(
    ("stdin", "command", "message"),
    [
        pytest.param(
            SERVICE + "---\n" + RUNTIME.replace("name: vllm}", "name: {v: llm}}"),
            ("explain", "--isvc", "svc"),
            'error parsing STDIN: document 2: metadata.name: must be a string (got {"v": "llm"})',
            id="explain: a runtime whose name is a mapping",
        ),
        pytest.param(
            SERVICE.replace("namespace: demo", "namespace: [demo]"),
            ("effective", "svc"),
            'error parsing STDIN: document 1: metadata.namespace: must be a string (got ["demo"])',
            id="effective: a namespace that is a list",
        ),
    ],
)
def test_kubectl_ome_names_the_document_of_an_identity_it_cannot_store(stdin, command, message):
    assert kubectl(stdin, *command) == (1, "", f"error: {message}\n")


def test_the_same_manifest_reads_the_same_from_json_and_yaml():
    import json

    import yaml

    manifests = [
        yaml.safe_load(MODEL),
        yaml.safe_load(RUNTIME),
        isvc_manifest("svc", namespace="demo", model="llama"),
    ]
    as_yaml = yaml.safe_dump_all(manifests, sort_keys=False)
    as_json = json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests})

    assert render(as_yaml) == render(as_json)
    assert render(as_yaml)[0] == 0


def test_a_bug_is_one_error_line_not_a_traceback():
    def crash(*_):
        raise RuntimeError("boom\nsecond line")

    err = io.StringIO()
    code = run_command(Parser(prog="x"), crash, [], (), stderr=err)

    assert (code, err.getvalue()) == (1, "error: internal error: RuntimeError: boom second line\n")
