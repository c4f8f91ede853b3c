"""``ome-operator render`` (S16.2): the RenderReport of each case folder, against its golden file.

Each ``cases/<case>/input.yaml`` is a set of manifests; ``expected.yaml`` is the whole report
``render`` prints for it, reviewed line by line against the spec. To re-create a golden file
after a deliberate change, run ``ome-operator render -f cases/<case>/input.yaml --now
2026-01-01T00:00:00Z`` and review the difference before committing it.
"""

from __future__ import annotations

import difflib
import io
import json
import pathlib

import pytest
import yaml

from ome_operator.operator_command import main

CASES = pathlib.Path(__file__).resolve().parent / "cases"
SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"
NOW = "2026-01-01T00:00:00Z"

#: The seed page's event for its example InferenceService naming the example runtime (verbatim).
SEED_ADVISORY = (
    "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model "
    "llama-3-3-70b-instruct (runtime srt-llama-3-3-70b-instruct-multinode does not support "
    "model : runtime engine deployment mode MultiNode does not match requested engine deployment "
    "mode OMENative); proceeding because the runtime was named explicitly"
)


def render(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["render", *argv], stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def golden(case: str) -> str:
    return (CASES / case / "expected.yaml").read_text(encoding="utf-8")


def differs(expected: str, actual: str) -> str:
    """A unified diff from the golden file to the output, for the failure message."""
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile="expected.yaml",
            tofile="render output",
        )
    )


CASE_PARAMS = [
    pytest.param(
        "raw-deployment-auto-selected",
        id="RawDeployment engine and router with an auto-selected namespace runtime",
    ),
    pytest.param(
        "raw-deployment-existing-deployment",
        id="an existing Deployment's Available condition becomes EngineReady",
    ),
    pytest.param(
        "multinode-seed-named-runtime",
        id="the seed page's InferenceService naming its runtime runs MultiNode with an advisory",
    ),
    pytest.param("omenative-single-pod", id="OMENative with one pod per Instance"),
    pytest.param(
        "omenative-leader-worker",
        id="OMENative with a leader and workers, its InferenceReplica already ready",
    ),
    pytest.param(
        "omenative-pd-router-raw",
        id="OMENative engine and decoder with the router kept on a Deployment",
    ),
    pytest.param("virtual-deployment", id="VirtualDeployment writes only the URL and Ready"),
    pytest.param(
        "autoscaling",
        id="an HPA, KEDA, external, equal bounds, and Instances and groups scaled, as OME scales",
    ),
    pytest.param(
        "admission-denials-and-warnings",
        id="every InferenceService denial and warning of the webhook",
    ),
    pytest.param(
        "runtime-and-model-events",
        id="runtime and model problems give the conditions, events and logs of S8",
    ),
    pytest.param(
        "component-failures",
        id="component failures log Failed to reconcile component and stop later components",
    ),
    pytest.param(
        "operator-config-defaults",
        id="the inferenceservice-config ConfigMap changes replicas and budget defaults",
    ),
    pytest.param(
        "names-the-server-would-refuse",
        id="names that cannot name Services or be label values are denied, nothing rendered",
    ),
    pytest.param(
        "operator-config-invalid",
        id="an unusable budget configuration stalls every reconcile with an error log",
    ),
    pytest.param(
        "name-conflict",
        id="a labelled Deployment of someone else's under the engine's name is a NameConflict",
    ),
    pytest.param(
        "pod-security-baseline-host-path",
        id="a baseline namespace refuses the pods of the default hostPath model volume",
    ),
    pytest.param(
        "pod-security-baseline-claim",
        id="a baseline namespace refuses nothing of a model read from a claim",
    ),
    pytest.param(
        "pod-security-restricted",
        id="a restricted namespace refuses each runner's pods for runAsNonRoot alone",
    ),
    pytest.param(
        "pod-security-warn-and-audit",
        id="warn and audit at restricted add one warning per LeaderWorkerSet template",
    ),
]


def test_every_case_folder_is_tested() -> None:
    assert sorted(p.name for p in CASES.iterdir() if p.is_dir()) == sorted(
        p.values[0] for p in CASE_PARAMS
    )


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_render_prints_the_golden_report(case: str) -> None:
    code, out, err = render("-f", str(CASES / case / "input.yaml"), "--now", NOW)

    assert (code, err) == (0, "")
    expected = golden(case)
    assert out == expected, differs(expected, out)


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_json_output_is_the_same_report(case: str) -> None:
    code, out, err = render("-f", str(CASES / case / "input.yaml"), "--now", NOW, "-o", "json")

    assert (code, err) == (0, "")
    assert json.loads(out) == yaml.safe_load(golden(case))


def test_standard_input_gives_the_same_report() -> None:
    case = "raw-deployment-auto-selected"
    text = (CASES / case / "input.yaml").read_text(encoding="utf-8")

    code, out, err = render("-f", "-", "--now", NOW, stdin=text)

    assert (code, out, err) == (0, golden(case), "")


def test_a_directory_is_read_like_its_files() -> None:
    code, out, err = render("-f", str(CASES / "virtual-deployment"), "--now", NOW)
    # The directory holds expected.yaml too: a RenderReport is neither an ome.io object nor
    # owned by an InferenceService, so it changes nothing.
    assert (code, out, err) == (0, golden("virtual-deployment"), "")


def test_the_seed_page_event_is_recorded_verbatim() -> None:
    report = yaml.safe_load(golden("multinode-seed-named-runtime"))

    assert [item["events"] for item in report["items"]] == [
        [{"type": "Warning", "reason": "RuntimeCompatibilityAdvisory", "message": SEED_ADVISORY}]
    ]


def test_the_samples_render() -> None:
    code, out, err = render("-f", str(SAMPLES), "--now", NOW)

    assert (code, err) == (0, "")
    summary = [
        (
            item["inferenceService"]["namespace"],
            item["inferenceService"]["name"],
            item["admission"]["allowed"],
            [event["reason"] for event in item["events"]],
            [(obj["kind"], obj["metadata"]["name"]) for obj in item["objects"]],
        )
        for item in yaml.safe_load(out)["items"]
    ]
    assert summary == SAMPLES_SUMMARY


SAMPLES_SUMMARY = [
    (
        "llama-demo",
        "llama-3-70b",
        False,
        [],
        [],
    ),
    (
        "llama-demo",
        "llama-3-70b-named-runtime",
        True,
        ["RuntimeCompatibilityAdvisory"],
        [
            ("LeaderWorkerSet", "lws-llama-3-70b-named-runtime-engine"),
            ("Service", "llama-3-70b-named-runtime-engine"),
            ("Service", "llama-3-70b-named-runtime"),
        ],
    ),
    (
        "llama-migration",
        "llama-3-70b",
        True,
        [],
        [
            ("InferenceReplica", "llama-3-70b-engine"),
            ("Pod", "llama-3-70b-engine-0-leader-0"),
            ("Pod", "llama-3-70b-engine-0-worker-0"),
            ("Service", "llama-3-70b-engine"),
            ("Service", "llama-3-70b-engine-headless"),
            ("PodDisruptionBudget", "llama-3-70b-engine"),
            ("Service", "llama-3-70b"),
        ],
    ),
    (
        "llama-small",
        "llama-3-2-1b-instruct",
        True,
        [],
        [
            ("Deployment", "llama-3-2-1b-instruct-engine"),
            ("Service", "llama-3-2-1b-instruct-engine"),
            ("PodDisruptionBudget", "llama-3-2-1b-instruct-engine"),
            ("HorizontalPodAutoscaler", "llama-3-2-1b-instruct-engine"),
            ("Service", "llama-3-2-1b-instruct"),
        ],
    ),
    (
        "qwen",
        "qwen3-multi-node",
        True,
        [],
        [
            ("InferenceReplica", "qwen3-multi-node-engine"),
            ("Pod", "qwen3-multi-node-engine-0-leader-0"),
            ("Pod", "qwen3-multi-node-engine-0-worker-0"),
            ("Service", "qwen3-multi-node-engine"),
            ("Service", "qwen3-multi-node-engine-headless"),
            ("PodDisruptionBudget", "qwen3-multi-node-engine"),
            ("Service", "qwen3-multi-node"),
        ],
    ),
]


SUMMARY = """\
NAMESPACE         NAME                        ALLOWED   RUNTIME                                MODES                  OBJECTS
llama-demo        llama-3-70b                 false     -                                      -                      0
llama-demo        llama-3-70b-named-runtime   true      srt-llama-3-3-70b-instruct-multinode   engine=MultiNode       3
llama-migration   llama-3-70b                 true      srt-llama-3-3-70b-instruct-omenative   engine=OMENative       7
llama-small       llama-3-2-1b-instruct       true      vllm-llama-small                       engine=RawDeployment   5
qwen              qwen3-multi-node            true      srt-qwen3-multi-node                   engine=OMENative       7
"""  # noqa: E501


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param((), (0, SUMMARY, ""), id="a summary line per InferenceService"),
        pytest.param(
            ("--fail-on-denied",),
            (
                3,
                SUMMARY,
                "render: admission denies 1 of 5 InferenceServices: llama-demo/llama-3-70b\n",
            ),
            id="--fail-on-denied exits 3 and names the denied ones",
        ),
    ],
)
def test_the_summary_and_failing_on_denials(flags, expected) -> None:
    assert render("-f", str(SAMPLES), "-o", "summary", *flags) == expected


def test_fail_on_denied_passes_when_all_are_admitted() -> None:
    code, _, err = render(
        "-f", str(SAMPLES / "llama-3-2-1b-instruct-raw-deployment.yaml"), "--fail-on-denied"
    )
    assert (code, err) == (0, "")


def test_the_migrated_runtime_gives_pods_the_ome_variables_and_no_lws_ones() -> None:
    migration = SAMPLES / "llama-3-3-70b-instruct-omenative-migration.yaml"
    model = SAMPLES / "clusterbasemodel-llama-3-3-70b-instruct.yaml"
    multinode = SAMPLES / "clusterservingruntime-multinode.yaml"
    code, out, _ = render(
        "-f", str(migration), "-f", str(model), "-f", str(multinode), "--now", NOW
    )
    (item,) = yaml.safe_load(out)["items"]
    pods = [obj for obj in item["objects"] if obj["kind"] == "Pod"]
    found = {}
    for pod in pods:
        (container,) = pod["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        found[pod["metadata"]["name"]] = (
            [arg for arg in container["command"] if "$(" in arg and "MODEL_PATH" not in arg],
            {
                k: env[k]
                for k in ("OME_LEADER_ADDRESS", "OME_INSTANCE_POD_COUNT", "OME_INSTANCE_POD_RANK")
            },
            sorted(k for k in env if k.startswith("LWS_")),
        )
    leader = "llama-3-70b-engine-0-leader-0.llama-3-70b-engine-headless"
    args = ["$(OME_LEADER_ADDRESS):5000", "$(OME_INSTANCE_POD_COUNT)", "$(OME_INSTANCE_POD_RANK)"]
    assert (code, item["status"]["components"]["engine"]["deploymentMode"], found) == (
        0,
        "OMENative",
        {
            "llama-3-70b-engine-0-leader-0": (
                args,
                {
                    "OME_LEADER_ADDRESS": leader,
                    "OME_INSTANCE_POD_COUNT": "2",
                    "OME_INSTANCE_POD_RANK": "0",
                },
                [],
            ),
            "llama-3-70b-engine-0-worker-0": (
                args,
                {
                    "OME_LEADER_ADDRESS": leader,
                    "OME_INSTANCE_POD_COUNT": "2",
                    "OME_INSTANCE_POD_RANK": "1",
                },
                [],
            ),
        },
    )


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        pytest.param(
            ("-f", "/no/such/manifests"),
            "",
            'the path "/no/such/manifests" does not exist',
            id="a path that does not exist",
        ),
        pytest.param(
            ("-f", "-"),
            "kind: InferenceService\nmetadata: [\n",
            "error parsing STDIN: line 3: expected the node content, but found '<stream end>'",
            id="malformed YAML names the input and the line",
        ),
        pytest.param(
            ("-f", "-"),
            "- just\n- a list\n",
            "error parsing STDIN: document 1 is not a mapping",
            id="a document that is not an object",
        ),
        pytest.param(
            ("-f", "-"),
            "apiVersion: v1\nkind: ConfigMap\n"
            "metadata: {name: inferenceservice-config, namespace: ome}\n"
            'data:\n  deploy: \'{"defaultDeploymentMode": "OMENative"}\'\n',
            "Failed to initialize deployment configuration: "
            'defaultDeploymentMode "OMENative" is not RawDeployment',
            id="a configuration the manager cannot start with",
        ),
        pytest.param(
            ("-f", "-"),
            "apiVersion: v1\nkind: ConfigMap\n"
            "metadata: {name: inferenceservice-config, namespace: ome}\n"
            "data:\n  deploy: {replicas: 2}\n",
            "ConfigMap ome/inferenceservice-config is invalid: data.deploy: "
            'must be a string (got {"replicas": 2})',
            id="a ConfigMap value that is not a string",
        ),
    ],
)
def test_bad_input_is_an_error_without_a_traceback(
    argv: tuple[str, ...], stdin: str, message: str
) -> None:
    assert render(*argv, stdin=stdin) == (1, "", f"error: {message}\n")


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        pytest.param(
            (),
            "",
            "the following arguments are required: -f/--filename",
            id="no -f",
        ),
        pytest.param(
            ("-f", "-", "--now", "yesterday"),
            "",
            '--now "yesterday" is not an RFC 3339 time, e.g. 2026-01-01T00:00:00Z',
            id="a --now that is not an RFC 3339 time",
        ),
        pytest.param(
            ("-f", "-", "-o", "wide"),
            "",
            "argument -o/--output: invalid choice: 'wide' (choose from 'yaml', 'json', 'summary')",
            id="an output format other than yaml, json or summary",
        ),
    ],
)
def test_a_usage_error_exits_2_as_argparse_does(
    argv: tuple[str, ...], stdin: str, message: str
) -> None:
    assert render(*argv, stdin=stdin) == (2, "", f"error: {message}\n")


def test_objects_that_cannot_be_stored_are_ignored() -> None:
    manifests = (CASES / "virtual-deployment" / "input.yaml").read_text(encoding="utf-8")
    junk = "---\napiVersion: v1\nkind: Note\n---\napiVersion: v1\nkind: Note\nmetadata: text\n"

    assert render("-f", "-", "--now", NOW, stdin=manifests + junk) == (
        0,
        golden("virtual-deployment"),
        "",
    )


def test_yaml_timestamps_are_reported_as_rfc_3339_strings() -> None:
    manifests = (CASES / "omenative-leader-worker" / "input.yaml").read_text(encoding="utf-8")
    unquoted = manifests.replace('"2025-12-31T10:00:00Z"', "2025-12-31T10:00:00Z")
    assert unquoted != manifests

    yaml_out = render("-f", "-", "--now", NOW, stdin=unquoted)
    json_out = render("-f", "-", "--now", NOW, "-o", "json", stdin=unquoted)

    assert yaml_out == (0, golden("omenative-leader-worker"), "")
    assert (json_out[0], json.loads(json_out[1]), json_out[2]) == (
        0,
        yaml.safe_load(golden("omenative-leader-worker")),
        "",
    )
