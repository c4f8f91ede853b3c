"""The one-command install (`kubectl apply -k manifests/`) and its cert-manager variant
(`kubectl apply -k overlays/cert-manager/`), rendered offline by the machine's kubectl: they
hold exactly the install folders' objects and the operator configuration, every built-in object
validates strictly, the image is named in one place, and the overlay swaps the operator's own
certificate for cert-manager's."""

from __future__ import annotations

import functools
import shutil
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml

from ome_operator.settings import RunOptions
from tests.manifests.manifest_files import KUBERNETES_VERSION, MANIFESTS, ROOT, install_documents

OVERLAY = ROOT / "overlays" / "cert-manager"


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


def one(objects, kind: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objects if (o["kind"], o["metadata"]["name"]) == (kind, name)]
    return found


def test_the_install_is_the_install_folders_and_the_configuration():
    expected = {(d.kind, d.name) for d in install_documents()}
    assert identities(kustomized(str(MANIFESTS))) == expected | {
        ("ConfigMap", "inferenceservice-config")
    }


@pytest.mark.parametrize(
    "folder",
    [pytest.param(str(MANIFESTS), id="manifests"), pytest.param(str(OVERLAY), id="cert-manager")],
)
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
    base, overlay = kustomized(str(MANIFESTS)), kustomized(str(OVERLAY))
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
