"""S16.6 and S16.7 on the real server: kubectl prints the webhook's warnings on a runtime's
create, edit and delete, and ``kubectl ome runtime impact`` online prints what it prints offline
(``--state``) over the same objects."""

from __future__ import annotations

import copy
import pathlib
import subprocess
import sys

import pytest
import yaml

from tests.controlplane.scenarios import converged, isvc, runtime, seed

pytestmark = pytest.mark.controlplane

KUBECTL_OME = str(pathlib.Path(sys.executable).parent / "kubectl-ome")
_NAMES = ("chat", "search", "batch")


def _better(namespace: str) -> dict:
    better = runtime(namespace, "better")
    better["spec"]["supportedModelFormats"][0]["priority"] = 5
    return better


def _seeded(cluster, namespace: str) -> None:
    seed(cluster, namespace, *(isvc(namespace, name) for name in _NAMES))
    converged(cluster, namespace)


def _moves(namespace: str, before: str, after: str) -> str:
    listed = ", ".join(f"{namespace}/{n} ({before} -> {after})" for n in sorted(_NAMES))
    return f"Warning: this change moves 3 InferenceService(s) to another runtime: {listed}\n"


def test_kubectl_prints_what_a_runtime_change_moves(cluster, namespace, operator):
    _seeded(cluster, namespace)

    created = cluster.apply(_better(namespace))
    relabelled = cluster.plane.kubectl("label", "servingruntime", "vllm", "team=x", "-n", namespace)
    deleted = cluster.plane.kubectl("delete", "servingruntime", "better", "-n", namespace)

    assert (created.stderr, created.stdout) == (
        _moves(namespace, "SR/vllm", "SR/better"),
        "servingruntime.ome.io/better created\n",
    )
    assert (relabelled.stderr, relabelled.stdout) == ("", "servingruntime.ome.io/vllm labeled\n")
    assert (deleted.stderr, deleted.stdout) == (
        _moves(namespace, "SR/better", "SR/vllm"),
        'servingruntime.ome.io "better" deleted\n',
    )


def test_kubectl_prints_a_tie_the_name_decides(cluster, namespace, operator):
    _seeded(cluster, namespace)

    tied = cluster.apply(runtime(namespace, "vllm-twin"))

    assert tied.stderr == (
        "Warning: runtime vllm-twin ties with vllm for model llama (score 2): the name "
        "decides, vllm is selected\n"
    )


def _ome(*args: str) -> tuple[int, str, str]:
    done = subprocess.run([KUBECTL_OME, *args], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def _state(cluster, namespace: str, tmp_path: pathlib.Path) -> str:
    """Every ome.io object impact reads, as the server stores it, in one manifest file."""
    items = []
    for kind in (
        "inferenceservices",
        "servingruntimes",
        "basemodels",
        "clusterservingruntimes",
        "clusterbasemodels",
    ):
        listed = cluster.plane.kubectl("get", f"{kind}.ome.io", "-n", namespace, "-o", "yaml")
        items += yaml.safe_load(listed.stdout)["items"]
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(items), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(("-f", "better.yaml"), id="a higher-priority runtime"),
        pytest.param(("--delete", "ServingRuntime/{namespace}/vllm"), id="a deletion"),
        pytest.param(("-f", "better.yaml", "-o", "json"), id="the document"),
    ],
)
def test_impact_online_is_impact_offline(cluster, namespace, operator, tmp_path, change):
    _seeded(cluster, namespace)
    (tmp_path / "better.yaml").write_text(yaml.safe_dump(_better(namespace)), encoding="utf-8")
    state = _state(cluster, namespace, tmp_path)
    args = [a.format(namespace=namespace) for a in change]
    args = [str(tmp_path / a) if a.endswith(".yaml") else a for a in args]
    kubeconfig = str(cluster.plane.admin_kubeconfig)

    online = _ome("runtime", "impact", *args, "-n", namespace, f"--kubeconfig={kubeconfig}")
    offline = _ome("runtime", "impact", *args, "-n", namespace, "--state", state)

    assert online == offline
    assert (online[0], online[2]) == (0, "3 of 3 InferenceServices change runtime\n")


def test_a_no_op_edit_moves_nothing_online(cluster, namespace, operator, tmp_path):
    _seeded(cluster, namespace)
    same = copy.deepcopy(runtime(namespace))
    same["metadata"]["labels"] = {"team": "x"}
    (tmp_path / "same.yaml").write_text(yaml.safe_dump(same), encoding="utf-8")
    kubeconfig = str(cluster.plane.admin_kubeconfig)

    done = _ome(
        "runtime",
        "impact",
        "-f",
        str(tmp_path / "same.yaml"),
        "-n",
        namespace,
        "--fail-on-change",
        f"--kubeconfig={kubeconfig}",
    )

    assert done == (0, "", "0 of 3 InferenceServices change runtime\n")
