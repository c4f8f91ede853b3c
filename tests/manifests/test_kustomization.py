"""The two-command install (`kubectl apply -k manifests/crds/`, then `kubectl apply -k manifests/`)
and the overlays over the second (`overlays/cert-manager/`, `overlays/namespace-scoped/`),
rendered offline by the machine's kubectl: the CRDs are only in their own kustomization (removing
the operator never removes them), every built-in object validates strictly, the image is named in
one place, the cert-manager overlay swaps the operator's own certificate for cert-manager's, and
the namespace-scoped overlay (and its component over another overlay) grants every namespaced
rule of the base ClusterRole only in the watched namespaces."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml

from ome_operator.settings import RunOptions
from tests.manifests.manifest_files import (
    CRD_FOLDER,
    KUBERNETES_VERSION,
    MANIFESTS,
    NAMESPACE_FOLDER,
    ROOT,
    documents,
    operator_documents,
)
from tests.support.crd_schema import load_crds
from tests.support.rbac_rules import Grant, grants

CRDS = MANIFESTS / CRD_FOLDER
CERT_MANAGER = ROOT / "overlays" / "cert-manager"
NAMESPACE_SCOPED = ROOT / "overlays" / "namespace-scoped"
SECURE_METRICS = ROOT / "overlays" / "secure-metrics"
#: Every kustomization that installs the operator.
OPERATOR_INSTALLS = [
    pytest.param(str(MANIFESTS), id="manifests"),
    pytest.param(str(CERT_MANAGER), id="cert-manager"),
    pytest.param(str(NAMESPACE_SCOPED), id="namespace-scoped"),
]
#: Whether each built-in resource the operator's RBAC names lives in a namespace (ome.io's are
#: read from the CRDs). A grant on a resource missing here fails the overlay test: add it.
BUILT_IN_NAMESPACED = {
    ("", "pods"): True,
    ("", "services"): True,
    ("", "events"): True,
    ("", "configmaps"): True,
    ("", "secrets"): True,
    ("apps", "deployments"): True,
    ("policy", "poddisruptionbudgets"): True,
    ("leaderworkerset.x-k8s.io", "leaderworkersets"): True,
    ("autoscaling", "horizontalpodautoscalers"): True,
    ("keda.sh", "scaledobjects"): True,
    ("scheduling.k8s.io", "podgroups"): True,
    ("coordination.k8s.io", "leases"): True,
    ("", "namespaces"): False,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): False,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): False,
    ("authentication.k8s.io", "tokenreviews"): False,
    ("authorization.k8s.io", "subjectaccessreviews"): False,
}


@functools.cache
def kustomized(folder: str) -> tuple[dict[str, Any], ...]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl (with its built-in kustomize) is needed to render the install"
    done = subprocess.run(
        [kubectl, "kustomize", folder], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def identities(objects) -> set[tuple[str, str]]:
    return {(o["kind"], o["metadata"]["name"]) for o in objects}


def placed(objects) -> set[tuple[str, str | None, str]]:
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects}


def one(objects, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    (found,) = [
        o
        for o in objects
        if (o["kind"], o["metadata"]["name"]) == (kind, name)
        and (namespace is None or o["metadata"].get("namespace") == namespace)
    ]
    return found


def test_the_operator_install_is_the_install_folders_and_the_configuration():
    expected = {(d.kind, d.name) for d in operator_documents()}
    assert identities(kustomized(str(MANIFESTS))) == expected | {
        ("ConfigMap", "inferenceservice-config")
    }


def test_the_crd_install_is_the_seven_crds():
    expected = {(d.kind, d.name) for d in documents(CRDS)}
    assert identities(kustomized(str(CRDS))) == expected
    assert {kind for kind, _ in expected} == {"CustomResourceDefinition"}


@pytest.mark.parametrize(
    "folder",
    [
        pytest.param(str(MANIFESTS), id="manifests"),
        *[
            pytest.param(str(overlay), id=overlay.name)
            for overlay in sorted((ROOT / "overlays").iterdir())
            if (overlay / "kustomization.yaml").exists()
        ],
    ],
)
def test_removing_the_operator_never_removes_a_crd_nor_a_namespace(folder):
    removed = [
        f"{o['kind']}/{o['metadata']['name']}"
        for o in kustomized(folder)
        if o["kind"] in ("CustomResourceDefinition", "Namespace")
    ]
    assert removed == []


def test_the_namespace_install_is_the_namespace_ome_alone():
    assert identities(kustomized(str(MANIFESTS / NAMESPACE_FOLDER))) == {("Namespace", "ome")}


@pytest.mark.parametrize("folder", OPERATOR_INSTALLS)
def test_every_built_in_object_validates_strictly(folder):
    problems = []
    for obj in kustomized(folder):
        if obj["apiVersion"].startswith(("ome.io/", "cert-manager.io/")):
            continue
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(map(str, exc.path)) or "(root)"
            problems.append(f"{obj['kind']}/{obj['metadata']['name']}: {path}: {exc.message}")
    assert problems == []


def test_the_image_is_named_once_in_the_kustomization():
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    deployment = one(kustomized(str(MANIFESTS)), "Deployment", "ome-operator")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"{image['newName']}:{image['newTag']}"


def test_the_cert_manager_overlay_swaps_the_certificate():
    base, overlay = kustomized(str(MANIFESTS)), kustomized(str(CERT_MANAGER))
    assert identities(overlay) == identities(base) | {
        ("Issuer", "ome-selfsigned"),
        ("Certificate", "ome-webhook-server-cert"),
    }
    certificate = one(overlay, "Certificate", "ome-webhook-server-cert")
    webhook = one(overlay, "ValidatingWebhookConfiguration", "ome-webhook-server")
    deployment = one(overlay, "Deployment", "ome-operator")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert {
        "secret": certificate["spec"]["secretName"],
        "inject": webhook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "cert dir": env["WEBHOOK_CERT_DIR"],
        "mounted": mounts["webhook-cert"],
        "from": volumes["webhook-cert"]["secret"]["secretName"],
        "names": certificate["spec"]["dnsNames"],
    } == {
        "secret": RunOptions().webhook_secret,
        "inject": f"ome/{RunOptions().webhook_secret}",
        "cert dir": "/etc/ome-webhook",
        "mounted": "/etc/ome-webhook",
        "from": RunOptions().webhook_secret,
        "names": ["ome-webhook-server.ome.svc", "ome-webhook-server.ome.svc.cluster.local"],
    }


# --------------------------------------------------------------- the namespace-scoped overlay


def _namespaced(grant: Grant) -> bool:
    """Whether a RoleBinding can grant ``grant``: its resource lives in a namespace, or it is
    a get of the namespace itself (the API server authorizes a get of namespace X as a request
    in namespace X)."""
    group, resource = grant[0], grant[1].split("/")[0]
    if (group, resource, grant[2]) == ("", "namespaces", "get"):
        return True
    crds = {
        (crd["spec"]["group"], crd["spec"]["names"]["plural"]): crd["spec"]["scope"] == "Namespaced"
        for crd in load_crds()
    }
    scopes = {**crds, **BUILT_IN_NAMESPACED}
    assert (group, resource) in scopes, (
        f"is {group or 'core'}/{resource} namespaced? add it to BUILT_IN_NAMESPACED"
    )
    return scopes[group, resource]


def _rules(objects, kind: str, name: str) -> set[Grant]:
    return grants(one(objects, kind, name)["rules"])


def _watched_bindings(objects) -> list[dict[str, Any]]:
    return [
        o
        for o in objects
        if o["kind"] == "RoleBinding" and o["roleRef"]["name"] == "ome-operator-namespaced"
    ]


def _namespace_flags(objects) -> list[str]:
    (container,) = one(objects, "Deployment", "ome-operator")["spec"]["template"]["spec"][
        "containers"
    ]
    return [
        match[1]
        for arg in container.get("args") or []
        if (match := re.fullmatch(r"--namespace=(.+)", arg))
    ]


def test_the_namespace_scoped_overlay_adds_the_per_namespace_rbac():
    base, overlay = kustomized(str(MANIFESTS)), kustomized(str(NAMESPACE_SCOPED))
    assert placed(overlay) == placed(base) | {
        ("ClusterRole", None, "ome-operator-namespaced"),
        ("RoleBinding", "team-a", "ome-operator"),
        ("RoleBinding", "team-b", "ome-operator"),
        ("Role", "default", "ome-operator-events"),
        ("RoleBinding", "default", "ome-operator-events"),
    }


def test_the_namespace_scoped_overlay_splits_every_grant_of_the_base_cluster_role_by_scope():
    base = _rules(kustomized(str(MANIFESTS)), "ClusterRole", "ome-operator")
    overlay = kustomized(str(NAMESPACE_SCOPED))
    assert {
        "cluster-wide": _rules(overlay, "ClusterRole", "ome-operator"),
        "per watched namespace": _rules(overlay, "ClusterRole", "ome-operator-namespaced"),
        "in default": _rules(overlay, "Role", "ome-operator-events"),
    } == {
        "cluster-wide": {g for g in base if not _namespaced(g)},
        "per watched namespace": {g for g in base if _namespaced(g)},
        "in default": {("", "events", "create", None)},
    }


@pytest.fixture(scope="module")
def scoped_secure_metrics(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A user's kustomization: the secure-metrics overlay with the namespace-scoped component."""
    folder = tmp_path_factory.mktemp("scoped-secure-metrics")
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(SECURE_METRICS, folder)],
        "components": [os.path.relpath(NAMESPACE_SCOPED / "component", folder)],
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return str(folder)


@pytest.mark.parametrize(
    "install",
    [
        pytest.param("namespace-scoped", id="the namespace-scoped overlay"),
        pytest.param("combined", id="its component over the secure-metrics overlay"),
    ],
)
def test_the_namespace_scoped_rbac_grants_cluster_wide_nothing_a_namespace_could_hold(
    install, scoped_secure_metrics
):
    folder = str(NAMESPACE_SCOPED) if install == "namespace-scoped" else scoped_secure_metrics
    overlay = kustomized(folder)
    cluster_wide = set()
    for binding in (o for o in overlay if o["kind"] == "ClusterRoleBinding"):
        cluster_wide |= _rules(overlay, "ClusterRole", binding["roleRef"]["name"])
    assert sorted(g for g in cluster_wide if _namespaced(g)) == []


def test_the_component_keeps_what_the_overlay_under_it_adds(scoped_secure_metrics):
    combined = kustomized(scoped_secure_metrics)
    base = kustomized(str(SECURE_METRICS))
    (container,) = one(combined, "Deployment", "ome-operator")["spec"]["template"]["spec"][
        "containers"
    ]
    assert {
        "objects": placed(combined) - placed(base),
        "secure": "--metrics-secure" in container["command"],
        "watched": _namespace_flags(combined),
    } == {
        "objects": {
            ("ClusterRole", None, "ome-operator-namespaced"),
            ("RoleBinding", "team-a", "ome-operator"),
            ("RoleBinding", "team-b", "ome-operator"),
            ("Role", "default", "ome-operator-events"),
            ("RoleBinding", "default", "ome-operator-events"),
        },
        "secure": True,
        "watched": ["team-a", "team-b"],
    }


def test_the_namespace_scoped_overlay_watches_exactly_the_namespaces_it_grants():
    overlay = kustomized(str(NAMESPACE_SCOPED))
    bindings = _watched_bindings(overlay)
    assert {
        "granted in": [b["metadata"]["namespace"] for b in bindings],
        "watched": _namespace_flags(overlay),
        "subjects": [b["subjects"] for b in bindings],
    } == {
        "granted in": ["team-a", "team-b"],
        "watched": ["team-a", "team-b"],
        "subjects": [[{"kind": "ServiceAccount", "name": "ome-operator", "namespace": "ome"}]] * 2,
    }
