"""The real KEDA CRDs (``keda.sh``: ScaledObject, ScaledJob, TriggerAuthentication,
ClusterTriggerAuthentication; and ``eventing.keda.sh``) on the test control plane, as KEDA's Go
module ships them (``config/crd/bases``) at the release ``tests/controlplane/keda/go.mod`` pins.

``fetch.sh`` beside that go.mod downloads the module and copies the CRDs into a cache folder
keyed by version and pins (a no-op when it is there). Only the CRDs are installed, no KEDA
operator: the API is served and its schema validates, but nothing acts on a ScaledObject.
"""

from __future__ import annotations

import pathlib
import subprocess

import yaml

from tests.support.installed_cluster import Cluster, eventually, path

ROOT = pathlib.Path(__file__).resolve().parents[2]
FETCH_SCRIPT = ROOT / "tests" / "controlplane" / "keda" / "fetch.sh"
GROUP_VERSION = "keda.sh/v1alpha1"
SCALED_OBJECT = f"{GROUP_VERSION}/scaledobjects"


def keda_crd_folder() -> pathlib.Path:
    """The cache folder ``fetch.sh`` prints (its ``crds/`` holds the CRD files), fetched first
    when absent."""
    done = subprocess.run(
        ["bash", str(FETCH_SCRIPT)], check=True, stdout=subprocess.PIPE, text=True
    )
    folders = dict(line.split("=", 1) for line in done.stdout.strip().splitlines() if "=" in line)
    return pathlib.Path(folders["keda"])


def crd_files(folder: pathlib.Path) -> list[pathlib.Path]:
    """The CRD files in ``folder/crds``, sorted."""
    files = sorted((folder / "crds").glob("*.yaml"))
    assert files, f"no KEDA CRDs in {folder / 'crds'}"
    return files


def crd_names(files: list[pathlib.Path]) -> list[str]:
    """Each file's CustomResourceDefinition name (``scaledobjects.keda.sh``, ...)."""
    names = []
    for file in files:
        for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                names.append(doc["metadata"]["name"])
    return names


def scaled_objects_served(cluster: Cluster) -> bool:
    """Whether discovery lists ``scaledobjects`` in keda.sh/v1alpha1 and a list of them answers."""
    status, resources = cluster.plane.raw("GET", f"/apis/{GROUP_VERSION}")
    if status != 200 or not isinstance(resources, dict):
        return False
    served = {r.get("name") for r in resources.get("resources") or []}
    if "scaledobjects" not in served:
        return False
    status, _ = cluster.plane.raw("GET", path(SCALED_OBJECT, "default"))
    return status == 200


def _discovery_gone(cluster: Cluster) -> bool:
    status, _ = cluster.plane.raw("GET", f"/apis/{GROUP_VERSION}")
    return status == 404


def install_keda_crds(cluster: Cluster) -> None:
    """Apply the KEDA CRDs (server-side: the ScaledJob CRD, at about 650 kB, is over the limit
    of a client-side apply's annotation), wait until each is Established and the ScaledObject
    API is served. Idempotent: applying again changes nothing."""
    files = crd_files(keda_crd_folder())
    cluster.plane.kubectl("apply", "--server-side", *(f"--filename={f}" for f in files))
    cluster.plane.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *(f"crd/{name}" for name in crd_names(files)),
    )
    eventually(lambda: scaled_objects_served(cluster), timeout=60, interval=0.5)


def uninstall_keda_crds(cluster: Cluster) -> None:
    """Delete the KEDA CRDs (with every KEDA object in the cluster) and wait until the
    keda.sh/v1alpha1 API is no longer served. Idempotent: nothing installed is no error."""
    files = crd_files(keda_crd_folder())
    cluster.plane.kubectl(
        "delete",
        "--ignore-not-found",
        "--wait=true",
        "--timeout=60s",
        *(f"--filename={f}" for f in files),
    )
    eventually(lambda: _discovery_gone(cluster), timeout=60, interval=0.5)
