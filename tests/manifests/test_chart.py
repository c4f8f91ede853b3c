"""The Helm chart charts/ome-operator/ is the kustomize install in another form: `helm lint
--strict` passes, and `helm template` renders the objects `kubectl kustomize` builds from
manifests/, its overlays and manifests/monitoring/, whole, kind by kind and name by name. The
differences, by design, are two: every object the chart renders carries Helm's labels
(HELM_LABELS) besides its own, and the operator ConfigMap's entries are the same JSON written
another way (compared parsed). The chart adds no annotation of its own."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import pytest
import yaml

from ome_operator import __version__
from tests.manifests.manifest_files import MANIFESTS, ROOT
from tests.manifests.test_kustomization import kustomized
from tests.support.helm import BUILD_TIMEOUT, CHART, RELEASE, Helm, offline_helm, value_flags

#: The first test may build Helm (tests/controlplane/helm/build.sh), unless the run built it first.
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT)

Key = tuple[str, str | None, str]

#: The labels the chart gives every object, over its own.
HELM_LABELS = {
    "app.kubernetes.io/name": "ome-operator",
    "app.kubernetes.io/instance": RELEASE,
    "app.kubernetes.io/version": __version__,
    "app.kubernetes.io/managed-by": "Helm",
    "helm.sh/chart": f"ome-operator-{__version__}",
}
CERT_MANAGER = ROOT / "overlays" / "cert-manager"
NAMESPACE_SCOPED = ROOT / "overlays" / "namespace-scoped"
MONITORING = MANIFESTS / "monitoring"
#: The namespaces overlays/namespace-scoped/ watches as shipped.
WATCHED = '["team-a", "team-b"]'
METRICS = {
    "metrics.serviceMonitor.enabled": "true",
    "metrics.prometheusRule.enabled": "true",
    "metrics.dashboard.enabled": "true",
}
EVERY_SWITCH = {"webhook.certManager.enabled": "true", "watchNamespaces": WATCHED, **METRICS}


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return offline_helm(tmp_path_factory.mktemp("helm-home"))


def by_key(objects: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> dict[Key, Any]:
    """Objects by (kind, namespace, name); the operator ConfigMap's JSON entries parsed."""
    found = {}
    for obj in objects:
        meta = obj["metadata"]
        found[(obj["kind"], meta.get("namespace"), meta["name"])] = _config_parsed(obj)
    return found


def _config_parsed(obj: dict[str, Any]) -> dict[str, Any]:
    if (obj["kind"], obj["metadata"]["name"]) != ("ConfigMap", "inferenceservice-config"):
        return obj
    data = {
        key: value if key == "clusterDomain" else json.loads(value)
        for key, value in obj["data"].items()
    }
    return {**obj, "data": data}


def with_helm_labels(obj: dict[str, Any]) -> dict[str, Any]:
    """A kustomize object as the chart renders it: Helm's labels added to its own."""
    labels = {**(obj["metadata"].get("labels") or {}), **HELM_LABELS}
    return {**obj, "metadata": {**obj["metadata"], "labels": labels}}


def kustomize_objects(*folders: pathlib.Path) -> dict[Key, Any]:
    """What ``kubectl kustomize`` builds from each folder, as the chart renders it."""
    return {
        key: with_helm_labels(obj)
        for folder in folders
        for key, obj in by_key(kustomized(str(folder))).items()
    }


def every_overlay(folder: pathlib.Path) -> pathlib.Path:
    """A user's kustomization: the cert-manager overlay, the namespace-scoped component and
    manifests/monitoring/ together."""
    folder.mkdir(parents=True, exist_ok=True)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(CERT_MANAGER, folder), os.path.relpath(MONITORING, folder)],
        "components": [os.path.relpath(NAMESPACE_SCOPED / "component", folder)],
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(kustomization), encoding="utf-8")
    return folder


def in_namespace(value: Any, namespace: str) -> Any:
    """``value`` with manifests' namespace ``ome`` replaced by ``namespace`` wherever it names
    it: a namespace field or list entry, a Service's DNS name, a ``namespace/name`` reference."""
    if isinstance(value, dict):
        return {key: in_namespace(item, namespace) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(in_namespace(item, namespace) for item in value)
    if value == "ome":
        return namespace
    if isinstance(value, str) and value.startswith("ome/"):
        return namespace + value[len("ome") :]
    if isinstance(value, str):
        return value.replace(".ome.svc", f".{namespace}.svc")
    return value


@pytest.mark.parametrize(
    ("values", "folders"),
    [
        pytest.param({}, (MANIFESTS,), id="the default values render manifests/"),
        pytest.param(
            {"webhook.certManager.enabled": "true"},
            (CERT_MANAGER,),
            id="webhook.certManager renders overlays/cert-manager/",
        ),
        pytest.param(
            {"watchNamespaces": WATCHED},
            (NAMESPACE_SCOPED,),
            id="watchNamespaces renders overlays/namespace-scoped/",
        ),
        pytest.param(
            METRICS, (MANIFESTS, MONITORING), id="the metrics switches add manifests/monitoring/"
        ),
    ],
)
def test_the_chart_renders_what_kustomize_builds(
    helm: Helm, values: dict[str, str], folders: tuple[pathlib.Path, ...]
) -> None:
    assert by_key(helm.render(values)) == kustomize_objects(*folders)


def test_every_switch_at_once_renders_the_overlays_and_the_monitoring_together(
    helm: Helm, tmp_path: pathlib.Path
) -> None:
    expected = kustomize_objects(every_overlay(tmp_path / "every-overlay"))
    assert by_key(helm.render(EVERY_SWITCH)) == expected


def test_in_another_release_namespace_each_place_manifests_name_ome_names_it(
    helm: Helm, tmp_path: pathlib.Path
) -> None:
    expected = kustomize_objects(every_overlay(tmp_path / "every-overlay"))
    assert by_key(helm.render(EVERY_SWITCH, namespace="ome-system")) == {
        in_namespace(key, "ome-system"): in_namespace(obj, "ome-system")
        for key, obj in expected.items()
    }


@pytest.mark.parametrize(
    ("switch", "kind"),
    [
        pytest.param(
            "serviceMonitor", "ServiceMonitor", id="serviceMonitor adds the ServiceMonitor"
        ),
        pytest.param("prometheusRule", "PrometheusRule", id="prometheusRule adds the alerts"),
        pytest.param("dashboard", "ConfigMap", id="dashboard adds the dashboard's ConfigMap"),
    ],
)
def test_each_metrics_switch_adds_its_objects_of_manifests_monitoring_and_no_other(
    helm: Helm, switch: str, kind: str
) -> None:
    monitoring = kustomize_objects(MONITORING)
    added = {key: obj for key, obj in monitoring.items() if key[0] == kind}
    assert added, f"manifests/monitoring/ builds no {kind}"
    values = {f"metrics.{switch}.enabled": "true"}
    assert by_key(helm.render(values)) == kustomize_objects(MANIFESTS) | added


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({}, id="the default values"),
        pytest.param({"webhook.certManager.enabled": "true"}, id="the cert-manager certificate"),
        pytest.param({"watchNamespaces": WATCHED}, id="watched namespaces"),
        pytest.param(EVERY_SWITCH, id="every switch on"),
    ],
)
def test_helm_lint_strict_finds_nothing(helm: Helm, values: dict[str, str]) -> None:
    done = helm.run("lint", "--strict", str(CHART), *value_flags(values), check=False)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"==> Linting {CHART}\n[INFO] Chart.yaml: icon is recommended\n\n"
        "1 chart(s) linted, 0 chart(s) failed\n",
        "",
    )


def test_the_chart_and_its_app_are_the_package_version_and_so_is_the_image() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    (image,) = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())["images"]
    assert (chart["apiVersion"], chart["version"], chart["appVersion"], image["newTag"]) == (
        "v2",
        __version__,
        __version__,
        __version__,
    )


def test_the_chart_makes_no_namespace(helm: Helm) -> None:
    rendered = helm.render(EVERY_SWITCH)
    assert [obj["metadata"]["name"] for obj in rendered if obj["kind"] == "Namespace"] == []
