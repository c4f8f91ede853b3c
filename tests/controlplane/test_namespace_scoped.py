"""The operator installed as a user would on a control plane of its own: the CRDs with
``kubectl apply -k manifests/crds/``, then ``overlays/namespace-scoped/`` (no cluster-wide
write; its RoleBindings in the watched namespaces). Run with its Deployment's flags, it converges
InferenceServices in the namespaces it watches, leaves the others alone, and is refused nothing
(the audit log). Removing it with ``kubectl delete -k`` leaves the CRDs, the InferenceServices,
their workloads and pods, and the namespace ``ome`` (installed apart, from manifests/namespace/):
nobody deletes any of them, and none is made again."""

from __future__ import annotations

import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from ome_operator.controller.runtime import UNEXPECTED_ERROR
from tests.controlplane.scenarios import OWNER_LABEL, converged, isvc, owned, owned_workloads, seed
from tests.support.control_plane import running_control_plane, write_kubeconfig
from tests.support.installed_cluster import (
    ISVC,
    ROOT,
    WRITE_VERBS,
    Cluster,
    eventually,
)
from tests.support.operator_process import OperatorProcess

pytestmark = pytest.mark.controlplane

OVERLAY = ROOT / "overlays" / "namespace-scoped"
#: The namespaces the shipped overlay watches, and one it does not.
WATCHED = ("team-a", "team-b")
UNWATCHED = "team-c"
CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"
#: The deployment mode of each watched namespace's InferenceService.
MODES = {"team-a": "RawDeployment", "team-b": "OMENative"}


def _deployment_flags() -> list[str]:
    """The flags the overlay's Deployment runs ``ome-operator run`` with."""
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(OVERLAY)], capture_output=True, text=True, timeout=60
    )
    assert rendered.returncode == 0, rendered.stderr
    (deployment,) = [
        doc for doc in yaml.safe_load_all(rendered.stdout) if doc and doc["kind"] == "Deployment"
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return [*container["command"][2:], *container.get("args", [])]


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("namespace-scoped")
    with running_control_plane(folder) as plane:
        for name in (*WATCHED, UNWATCHED):  # the overlay's RoleBindings need them
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            plane.request("POST", "/api/v1/namespaces", namespace)
        yield Cluster.install(plane, folder, OVERLAY, watched=WATCHED[0])


def _unexpected(operator: OperatorProcess) -> list[str]:
    """The operator's log lines of passes that ended in an exception no rule handles."""
    return [
        str(r["message"])
        for r in operator.records()
        if str(r.get("message", "")).startswith(UNEXPECTED_ERROR)
    ]


def _run(cluster: Cluster, name: str) -> OperatorProcess:
    process = OperatorProcess(
        cluster.operator_kubeconfig,
        cluster.folder / f"operator-{name}.log",
        cluster.webhook_port,
        _deployment_flags(),
    )
    process.start()
    return process


def _seed_and_converge(cluster: Cluster, name: str) -> None:
    """An InferenceService ``name`` in each watched namespace, run to its workloads; one in
    the unwatched namespace."""
    for namespace, mode in MODES.items():
        seed(cluster, namespace, isvc(namespace, name, deploymentMode=mode))
    cluster.apply(isvc(UNWATCHED, name))  # the webhook admits it without a review of its own
    for namespace, mode in MODES.items():
        eventually(lambda n=namespace, m=mode: owned_workloads(cluster, n, name, m))
    for namespace in MODES:
        converged(cluster, namespace)


def _refused(records: list[dict[str, Any]]) -> list[str]:
    return [
        f"{r['verb']} {r['requestURI']} {r.get('responseStatus', {}).get('code')}"
        for r in records
        if (r.get("annotations") or {}).get("authorization.k8s.io/decision") != "allow"
        or r.get("responseStatus", {}).get("code") == 403
    ]


def _inventory(cluster: Cluster, name: str) -> dict[str, str]:
    """uid of every CRD, and of the InferenceService ``name``, its workloads and pods in each
    watched namespace, by kind and name."""
    found = {crd["metadata"]["name"]: crd["metadata"]["uid"] for crd in cluster.list(CRDS)}
    for namespace in WATCHED:
        pods = cluster.list("v1/pods", namespace, f"{OWNER_LABEL}={name}")
        for obj in [cluster.stored(ISVC, namespace, name), *owned(cluster, namespace, name), *pods]:
            found[f"{obj['kind']} {namespace}/{obj['metadata']['name']}"] = obj["metadata"]["uid"]
    return found


def _deletions(records: list[dict[str, Any]]) -> list[str]:
    """The deletes of a CRD, or of anything in a watched namespace but the overlay's
    RoleBindings."""
    found = []
    for record in records:
        ref = record.get("objectRef") or {}
        resource = ref.get("resource")
        if record.get("verb") not in ("delete", "deletecollection"):
            continue
        if resource == CRDS.rpartition("/")[2] or (
            ref.get("namespace") in WATCHED and resource != "rolebindings"
        ):
            found.append(f"{record['verb']} {resource} {ref.get('namespace')}/{ref.get('name')}")
    return found


def _reinstall(cluster: Cluster, overlay: pathlib.Path) -> None:
    """The overlay applied again, and a token of the new ServiceAccount in the kubeconfig."""
    cluster.plane.kubectl("apply", "-k", str(overlay))
    token = cluster.plane.token("ome-operator", "ome")
    write_kubeconfig(cluster.operator_kubeconfig, cluster.plane.url, cluster.plane.ca_file, token)


def test_a_namespace_scoped_operator_converges_its_namespaces_and_is_refused_nothing(scoped):
    mark = scoped.plane.audit_mark()
    operator = _run(scoped, "scoped")
    try:
        _seed_and_converge(scoped, "scoped")
        unwatched = {
            "status": scoped.stored(ISVC, UNWATCHED, "scoped").get("status"),
            "workloads": owned(scoped, UNWATCHED, "scoped"),
        }
    finally:
        assert operator.stop() == 0, operator.tail()
    records = scoped.operator_requests(mark)
    written = {
        (r.get("objectRef") or {}).get("namespace") for r in records if r["verb"] in WRITE_VERBS
    }
    assert {
        "refused": _refused(records),
        "unexpected errors": _unexpected(operator),
        "unwatched": unwatched,
        "namespaces written": sorted(written - {None}),
    } == {
        "refused": [],
        "unexpected errors": [],
        "unwatched": {"status": None, "workloads": []},
        "namespaces written": ["ome", *WATCHED],  # ome: the leader Lease and the certificate
    }


def test_removing_the_operator_leaves_the_crds_the_inference_services_and_their_workloads(scoped):
    operator = _run(scoped, "before-removal")
    try:
        _seed_and_converge(scoped, "kept")
    finally:
        assert operator.stop() == 0, operator.tail()
    assert _unexpected(operator) == []
    before = _inventory(scoped, "kept")
    mark = scoped.plane.audit_mark()
    overlay = scoped.folder / "install"
    try:
        scoped.plane.kubectl("delete", "-k", str(overlay), "--wait=true", timeout=120)
        for namespace in WATCHED:
            converged(scoped, namespace)
        deleted = _deletions(scoped.plane.audit_since(mark))
        operator_namespace = scoped.stored("v1/namespaces", None, "ome")
        assert {
            "after": _inventory(scoped, "kept"),
            "deleted": deleted,
            "namespace ome": operator_namespace["status"]["phase"],
        } == {"after": before, "deleted": [], "namespace ome": "Active"}
        kinds = sorted({key.split()[0] for key in before if " " in key})
        assert (kinds, len([key for key in before if key.endswith(".ome.io")])) == (
            [
                "Deployment",
                "InferenceReplica",
                "InferenceService",
                "Pod",
                "PodDisruptionBudget",
                "Service",
            ],
            7,
        )
    finally:
        _reinstall(scoped, overlay)
