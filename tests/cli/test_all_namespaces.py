"""``kubectl ome runtime explain --isvc NAME -A``: every InferenceService NAME, each namespace
explained as ``-n <namespace>`` explains it, over ``-f`` manifests and a cluster alike."""

from __future__ import annotations

import asyncio
import io
import json
import pathlib
import textwrap

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ome_operator.cli.main import main
from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.fuzz.mutations import fuzz, manifest_sets, manifest_text
from tests.support.kube_access import apply_object

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"
EXPLAIN = ("runtime", "explain", "--isvc", "llama-3-70b")
EXPLICIT_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."
NO_RUNTIMES = "No serving runtimes found in the selected namespace or at cluster scope."


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: pathlib.Path, *objects: dict) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return str(path)


def parsed(output: str, text: str) -> dict:
    return json.loads(text) if output == "json" else yaml.safe_load(text)


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param((), id="the tables"),
        pytest.param(("--with-effective",), id="the tables and their effective context"),
    ],
)
def test_every_namespace_prints_what_its_namespace_alone_prints(extra: tuple[str, ...]) -> None:
    files = ("-f", str(SAMPLES))
    _, demo, _ = run(*EXPLAIN, *extra, "-n", "llama-demo", *files)
    _, migration, _ = run(*EXPLAIN, *extra, "-n", "llama-migration", *files)
    expected = f"Namespace: llama-demo\n{demo}\nNamespace: llama-migration\n{migration}"
    assert run(*EXPLAIN, *extra, "-A", *files) == (0, expected, "")


@pytest.mark.parametrize("output", [pytest.param("json"), pytest.param("yaml")])
def test_machine_output_is_a_list_of_the_namespaces_explanations(output: str) -> None:
    files = ("-f", str(SAMPLES), "-o", output)
    items = [
        parsed(output, run(*EXPLAIN, "-n", namespace, *files)[1])
        for namespace in ("llama-demo", "llama-migration")
    ]
    code, out, err = run(*EXPLAIN, "--all-namespaces", *files)
    assert (code, parsed(output, out), err) == (
        0,
        {"apiVersion": "cli.ome.io/v1alpha1", "kind": "RuntimeExplanationList", "items": items},
        "",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ("runtime", "explain", "--model", "llama-3-3-70b-instruct", "-A"),
            "--all-namespaces requires --isvc: a --model is explained in one namespace (-n)",
            id="-A with --model",
        ),
        pytest.param(
            (*EXPLAIN, "-A", "-n", "llama-demo"),
            "--all-namespaces and --namespace cannot be used together",
            id="-A with -n",
        ),
        pytest.param(
            ("runtime", "explain", "--isvc", "nope", "-A"),
            'no InferenceService named "nope" in any namespace',
            id="no InferenceService of that name anywhere",
        ),
        pytest.param(
            ("runtime", "explain", "--isvc", "llama-3-70b-named", "-A"),
            'no InferenceService named "llama-3-70b-named" in any namespace',
            id="a name is matched whole, not as a prefix",
        ),
    ],
)
def test_what_all_namespaces_refuses_exits_1(argv: tuple[str, ...], message: str) -> None:
    assert run(*argv, "-f", str(SAMPLES)) == (1, "", f"error: {message}\n")


def test_a_namespace_that_fails_is_reported_last_and_the_others_still_print(
    tmp_path: pathlib.Path,
) -> None:
    path = write(
        tmp_path,
        model_manifest("llama"),
        runtime_manifest("rt"),
        isvc_manifest("chat", namespace="a"),
        isvc_manifest("chat", namespace="b", model="gone"),
        isvc_manifest("chat", namespace="c", model=None, runtime={"name": "rt"}),
        isvc_manifest("chat", namespace="d", runtime={"name": "rt"}),
    )
    table = textwrap.dedent("""\
        RUNTIME   SCOPE     COMPATIBLE   PRIORITY   WEIGHT   REASON
        rt        Cluster   Yes          1          2        -
        """)
    assert run("runtime", "explain", "--isvc", "chat", "-A", "-f", path) == (
        1,
        f"Namespace: a\n{table}\nNamespace: d\n{table}",
        f'namespace "d": {EXPLICIT_NOTE}\n'
        'error: namespace "b": clusterbasemodels.ome.io "gone" not found\n'
        'error: namespace "c": InferenceService "chat" has no spec.model; '
        "pass --model instead\n",
    )


def test_a_namespace_without_runtimes_prints_its_header_and_its_note(
    tmp_path: pathlib.Path,
) -> None:
    path = write(
        tmp_path,
        model_manifest("llama"),
        runtime_manifest("team", cluster=False, namespace="team"),
        isvc_manifest("chat", namespace="team"),
        isvc_manifest("chat", namespace="lonely"),
    )
    table = textwrap.dedent("""\
        RUNTIME   SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON
        team      Namespaced   Yes          1          2        -
        """)
    assert run("runtime", "explain", "--isvc", "chat", "-A", "-f", path) == (
        0,
        f"Namespace: lonely\n\nNamespace: team\n{table}",
        f'namespace "lonely": {NO_RUNTIMES}\n',
    )


def test_an_inference_service_without_a_namespace_is_in_default(tmp_path: pathlib.Path) -> None:
    service = isvc_manifest("chat")
    del service["metadata"]["namespace"]
    path = write(tmp_path, model_manifest("llama"), runtime_manifest("rt"), service)
    code, out, err = run("runtime", "explain", "--isvc", "chat", "-A", "-f", path, "-o", "json")
    namespaces = [item["namespace"] for item in json.loads(out)["items"]]
    assert (code, namespaces, err) == (0, ["default"], "")


def test_more_than_1000_inference_services_is_refused(tmp_path: pathlib.Path) -> None:
    services = [isvc_manifest(f"svc-{i:04d}") for i in range(1001)]
    path = write(tmp_path, model_manifest("llama"), *services)
    assert run("runtime", "explain", "--isvc", "svc-0000", "-A", "-f", path) == (
        1,
        "",
        "error: InferenceService list across namespaces exceeds the CLI collection limit\n",
    )


@pytest.mark.parametrize(
    "extra",
    [pytest.param((), id="tables"), pytest.param(("-o", "json"), id="json")],
)
async def test_a_cluster_gives_what_the_manifests_give(
    kube, kubeconfig, tmp_path: pathlib.Path, extra: tuple[str, ...]
) -> None:
    docs = [d for p in sorted(SAMPLES.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text())]
    stored = [await apply_object(kube, doc) for doc in docs if doc]
    manifests = write(tmp_path, *stored)
    argv = (*EXPLAIN, "-A", *extra)
    online = await asyncio.to_thread(run, *argv, "--kubeconfig", kubeconfig)
    assert online == run(*argv, "-f", manifests)
    assert online[0] == 0


@fuzz(40)
@given(st.data())
def test_mutated_manifests_print_explanations_or_errors_and_the_same_ones_twice(
    data: st.DataObject,
) -> None:
    text = data.draw(manifest_text(data.draw(manifest_sets())))
    output = data.draw(st.sampled_from(["table", "json"]))
    argv = ("runtime", "explain", "--isvc", "llama-3-70b", "-A", "-o", output, "-f", "-")

    first = run(*argv, stdin=text)

    code, _, err = first
    assert code in (0, 1), first
    if code == 1:
        last = err.rstrip("\n").split("\n")[-1]
        assert last.startswith("error: ") and not last.startswith("error: internal error"), err
    assert run(*argv, stdin=text) == first
