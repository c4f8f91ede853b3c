"""The chart charts/ome-operator/ installed, upgraded and removed with Helm on a control plane of
its own: `helm install --create-namespace` creates every object `helm template` renders, owned by
the release, and the CRDs; `helm upgrade` with two values changed patches the Deployment alone;
`helm uninstall` deletes the release's objects and nothing else: the CRDs and the namespace stay.

The control plane is this module's, not the session's: the chart's cluster-scoped objects have
the names of manifests/ (one operator per cluster), which the session's cluster already holds
from its kustomize install. The operator is not run (this control plane has no node, so the
Deployment's pods stay Pending): what the chart decides is in the API objects."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.support.control_plane import ADMIN, ControlPlane, running_control_plane, user_requests
from tests.support.helm import CHART, RELEASE, Helm, helm_binary
from tests.support.installed_cluster import eventually

pytestmark = pytest.mark.controlplane

RELEASE_SECRET = f"sh.helm.release.v1.{RELEASE}"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with running_control_plane(tmp_path_factory.mktemp("helm")) as plane:
        yield plane


@pytest.fixture
def helm(plane: ControlPlane, tmp_path: pathlib.Path) -> Helm:
    return Helm(helm_binary(), tmp_path / "helm-home", plane.admin_kubeconfig)


@pytest.fixture
def release(helm: Helm, request: pytest.FixtureRequest) -> Iterator[str]:
    """The release's namespace (named after the test; Helm creates it); after the test, the
    release is gone, whatever the test left."""
    namespace = "helm-" + request.node.name.removeprefix("test_").split("_")[0]
    yield namespace
    helm.run("uninstall", RELEASE, "--namespace", namespace, "--ignore-not-found", "--wait")


def install(helm: Helm, namespace: str, *flags: str) -> None:
    helm.run("install", RELEASE, str(CHART), "--namespace", namespace, "--create-namespace", *flags)


def rendered(helm: Helm, namespace: str, *flags: str) -> str:
    """``helm template`` of the release, the YAML of its objects."""
    return helm.run("template", RELEASE, str(CHART), "--namespace", namespace, *flags).stdout


def live(plane: ControlPlane, manifest: str, *flags: str) -> list[dict[str, Any]]:
    """The stored objects of ``manifest``, in its order (``kubectl get -f -``)."""
    done = plane.kubectl("get", "-f", "-", "-o", "json", *flags, stdin=manifest)
    return json.loads(done.stdout)["items"] if done.stdout.strip() else []


def differences(expected: Any, found: Any, where: str = "") -> list[str]:
    """Where ``found`` lacks or differs from a field of ``expected`` (the API server adds
    defaults, so ``found`` may hold more)."""
    if isinstance(expected, dict) and isinstance(found, dict):
        return [
            problem
            for key, value in expected.items()
            for problem in differences(value, found.get(key), f"{where}.{key}")
        ]
    if isinstance(expected, list) and isinstance(found, list) and len(expected) == len(found):
        return [
            problem
            for index, (value, stored) in enumerate(zip(expected, found, strict=True))
            for problem in differences(value, stored, f"{where}[{index}]")
        ]
    return [] if expected == found else [f"{where}: {expected!r} != {found!r}"]


def owned_by_the_release(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """``obj`` with the annotations Helm gives what a release owns."""
    annotations = {
        **(obj["metadata"].get("annotations") or {}),
        "meta.helm.sh/release-name": RELEASE,
        "meta.helm.sh/release-namespace": namespace,
    }
    return {**obj, "metadata": {**obj["metadata"], "annotations": annotations}}


def crd_names(plane: ControlPlane) -> list[str]:
    done = plane.kubectl("get", "crds", "-o", "jsonpath={.items[*].metadata.name}")
    return sorted(done.stdout.split())


def chart_crd_names() -> list[str]:
    return sorted(
        yaml.safe_load(path.read_text(encoding="utf-8"))["metadata"]["name"]
        for path in (CHART / "crds").glob("*.yaml")
    )


def writes(plane: ControlPlane, mark: int) -> list[str]:
    """``verb resource namespace/name`` of each write of the admin (Helm) since ``mark``."""
    found = []
    for record in user_requests(plane.audit_since(mark), ADMIN, WRITE_VERBS):
        ref = record.get("objectRef") or {}
        found.append(
            f"{record['verb']} {ref.get('resource')} {ref.get('namespace')}/{ref.get('name')}"
        )
    return found


def test_install_creates_what_helm_template_renders_and_the_crds(
    plane: ControlPlane, helm: Helm, release: str
) -> None:
    install(helm, release)
    manifest = rendered(helm, release)
    expected = [owned_by_the_release(o, release) for o in yaml.safe_load_all(manifest) if o]
    stored = live(plane, manifest)
    listed = json.loads(helm.run("list", "--namespace", release, "--output", "json").stdout)
    assert {
        "objects": [differences(e, s) for e, s in zip(expected, stored, strict=True)],
        "crds": crd_names(plane),
        "releases": [(r["name"], r["status"], r["chart"], r["revision"]) for r in listed],
    } == {
        "objects": [[] for _ in expected],
        "crds": chart_crd_names(),
        "releases": [(RELEASE, "deployed", "ome-operator-0.1.0", "1")],
    }


def test_upgrade_with_a_new_log_format_and_replicas_changes_the_deployment_alone(
    plane: ControlPlane, helm: Helm, release: str
) -> None:
    install(helm, release)
    manifest = rendered(helm, release)
    before = {identity(o): as_written(o) for o in live(plane, manifest)}
    changed = ("--set-json", 'log.format="plain"', "--set-json", "replicas=3")
    helm.run("upgrade", RELEASE, str(CHART), "--namespace", release, *changed)
    after = {identity(o): o for o in live(plane, manifest)}
    deployment = after.pop(("Deployment", "ome-operator"))
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert {
        "replicas": deployment["spec"]["replicas"],
        "args": container["args"],
        "generation": deployment["metadata"]["generation"],
        "others": {key: as_written(obj) for key, obj in after.items()},
    } == {
        "replicas": 3,
        "args": ["--log-format=plain"],
        "generation": 2,
        "others": {key: obj for key, obj in before.items() if key in after},
    }


def identity(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def as_written(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored object less what controllers change without a write of Helm's (the status: the
    PodDisruptionBudget's counts the Deployment's pods) and the bookkeeping of every write."""
    metadata = {
        key: value
        for key, value in obj["metadata"].items()
        if key not in ("resourceVersion", "managedFields")
    }
    return {**{key: value for key, value in obj.items() if key != "status"}, "metadata": metadata}


def test_uninstall_deletes_the_release_and_leaves_the_crds_and_the_namespace(
    plane: ControlPlane, helm: Helm, release: str
) -> None:
    install(helm, release)
    manifest = rendered(helm, release)
    objects = [o for o in yaml.safe_load_all(manifest) if o]
    mark = plane.audit_mark()
    helm.run("uninstall", RELEASE, "--namespace", release, "--wait")
    eventually(lambda: live(plane, manifest, "--ignore-not-found") == [], timeout=30)
    namespace = json.loads(plane.kubectl("get", "namespace", release, "-o", "json").stdout)
    deleted = sorted(w for w in writes(plane, mark) if w.startswith("delete "))
    assert {
        "deleted": deleted,
        "crds": crd_names(plane),
        "namespace": namespace["status"]["phase"],
    } == {
        "deleted": sorted(
            [
                f"delete {plural(o)} {o['metadata'].get('namespace')}/{o['metadata']['name']}"
                for o in objects
            ]
            + [f"delete secrets {release}/{RELEASE_SECRET}.v1"]
        ),
        "crds": chart_crd_names(),
        "namespace": "Active",
    }


def plural(obj: dict[str, Any]) -> str:
    """The resource of a kind the chart renders (lower case, plural)."""
    kind = obj["kind"].lower()
    return kind + ("es" if kind.endswith("s") else "s")
