"""The plugin against a Kubernetes API (the kmock emulator): the same objects give the same
output as ``-f`` manifests (S16.1), byte for byte."""

from __future__ import annotations

import asyncio
import io
import pathlib

import pytest
import yaml

from ome_operator.cli.main import main
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest
from tests.support.kube_access import apply_object

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"


def _objects() -> list[dict]:
    seed = [
        doc
        for path in sorted(SAMPLES.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]
    extra = [
        model_manifest("llama", cluster=False, namespace="llama-demo"),
        runtime_manifest(
            "team-runtime",
            cluster=False,
            namespace="llama-demo",
            formats=[entry(autoSelect=True, priority=2)],
        ),
        runtime_manifest("disabled-runtime", disabled=True),
        isvc_manifest(
            "chat",
            namespace="llama-demo",
            model="llama",
            runtime={"name": "team-runtime", "kind": "ServingRuntime"},
        ),
    ]
    return seed + extra


async def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(main, list(argv), stdin=io.StringIO(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(
            ("runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-demo"),
            id="explain --isvc of the seed InferenceService",
        ),
        pytest.param(
            ("runtime", "explain", "--model", "llama-3-3-70b-instruct"),
            id="explain --model of a ClusterBaseModel",
        ),
        pytest.param(
            ("runtime", "explain", "--model", "llama", "-n", "llama-demo"),
            id="explain --model of a BaseModel in the namespace",
        ),
        pytest.param(
            ("runtime", "explain", "--isvc", "chat", "-n", "llama-demo", "--with-effective"),
            id="explain --with-effective",
        ),
        pytest.param(
            ("runtime", "explain", "--model", "nope"),
            id="a missing model gives the same NotFound text",
        ),
        pytest.param(
            ("runtime", "effective", "llama-3-70b", "-n", "llama-demo"), id="effective table"
        ),
        pytest.param(
            ("runtime", "effective", "chat", "-n", "llama-demo", "-o", "wide"), id="effective wide"
        ),
        pytest.param(
            ("runtime", "effective", "chat", "-n", "llama-demo", "-o", "json"), id="effective json"
        ),
        pytest.param(
            ("runtime", "effective", "nope", "-n", "llama-demo"),
            id="effective of a missing InferenceService",
        ),
    ],
)
async def test_cluster_and_manifests_give_the_same_output(
    kube, kubeconfig, tmp_path: pathlib.Path, argv: tuple[str, ...]
) -> None:
    stored = [await apply_object(kube, obj) for obj in _objects()]  # with server metadata
    manifests = tmp_path / "objects.yaml"
    manifests.write_text(yaml.safe_dump_all(stored, sort_keys=False))
    online = await _run(*argv, "--kubeconfig", kubeconfig)
    offline = await _run(*argv, "-f", str(manifests))
    assert online == offline
    assert online[0] in (0, 1)


async def test_the_context_namespace_of_the_kubeconfig_is_used(kube, kubeconfig) -> None:
    await apply_object(kube, model_manifest("llama", cluster=False, namespace="default"))
    await apply_object(kube, runtime_manifest("rt", cluster=False, namespace="default"))
    code, out, err = await _run(
        "runtime", "explain", "--model", "llama", "--kubeconfig", kubeconfig
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[1].split() == ["rt", "Namespaced", "Yes", "1", "2", "-"]


async def test_an_unreachable_api_server_is_an_error_not_a_traceback() -> None:
    code, out, err = await _run(
        "runtime", "explain", "--model", "llama", "--server", "http://127.0.0.1:9", "--token", "t"
    )
    assert (code, out) == (1, "")
    assert err.startswith("error: ") and "Traceback" not in err
