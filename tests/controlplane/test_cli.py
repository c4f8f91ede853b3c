"""``kubectl ome runtime explain`` and ``effective`` online against the real server print the same
bytes as offline (``-f``) over the same objects (S11–S13, S16.1)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
import yaml

from tests.controlplane.scenarios import MULTINODE, converged, isvc, runtime, seed, status
from tests.support.installed_cluster import eventually

pytestmark = pytest.mark.controlplane

KUBECTL_OME = str(pathlib.Path(sys.executable).parent / "kubectl-ome")


def _ome(*args: str) -> tuple[int, str, str]:
    done = subprocess.run([KUBECTL_OME, *args], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def _objects(cluster, namespace: str, tmp_path: pathlib.Path) -> str:
    """The namespace's ome.io objects as the server stores them, in one manifest file."""
    items = []
    for kind in ("inferenceservices", "servingruntimes", "basemodels"):
        listed = cluster.plane.kubectl("get", f"{kind}.ome.io", "-n", namespace, "-o", "yaml")
        for item in yaml.safe_load(listed.stdout)["items"]:
            item["metadata"].pop("managedFields", None)
            items.append(item)
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(items), encoding="utf-8")
    return str(path)


def _setup(cluster, namespace, tmp_path) -> tuple[str, str]:
    second = runtime(namespace, "multi", **MULTINODE)
    cluster.apply(second)
    seed(cluster, namespace, isvc(namespace), isvc(namespace, "native", deploymentMode="OMENative"))
    eventually(lambda: status(cluster, namespace, "native").get("runtime"))
    converged(cluster, namespace)
    return str(cluster.plane.admin_kubeconfig), _objects(cluster, namespace, tmp_path)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("explain", "--model", "llama"), id="explain --model"),
        pytest.param(("explain", "--isvc", "chat"), id="explain --isvc"),
        pytest.param(("explain", "--isvc", "native", "--with-effective"), id="--with-effective"),
        pytest.param(("effective", "chat"), id="effective"),
        pytest.param(("effective", "native", "-o", "wide"), id="effective -o wide"),
        pytest.param(("effective", "native", "-o", "json"), id="effective -o json"),
    ],
)
def test_online_output_is_the_offline_output(cluster, namespace, operator, tmp_path, args):
    kubeconfig, objects = _setup(cluster, namespace, tmp_path)

    online = _ome("runtime", *args, "-n", namespace, f"--kubeconfig={kubeconfig}")
    offline = _ome("runtime", *args, "-n", namespace, "-f", objects)

    assert online == offline
    assert online[0] == 0, online
