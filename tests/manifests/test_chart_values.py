"""What each value of charts/ome-operator/values.yaml changes in `helm template`: exactly the
fields it names, every other object and field as the default render has them; the values the
chart refuses, with Helm's message; and docs/install.md's table of values, one row per value."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import yaml

from tests.manifests.manifest_files import ROOT
from tests.manifests.test_chart import by_key
from tests.support.helm import BUILD_TIMEOUT, CHART, Helm, offline_helm, value_flags

#: The first test may build Helm (tests/controlplane/helm/build.sh), unless the run built it first.
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT)

DEPLOYMENT = ("Deployment", "ome", "ome-operator")
CONFIG = ("ConfigMap", "ome", "inferenceservice-config")
POD = ("spec", "template", "spec")
CONTAINER = (*POD, "containers", 0)
#: A field the value removes.
REMOVED = object()
#: The default render's entries of the operator ConfigMap, parsed.
DEPLOY = {
    "defaultDeploymentMode": "RawDeployment",
    "replicas": {
        "defaultMinReplicas": 1,
        "defaultMaxReplicas": {"engine": 3, "decoder": 3, "router": 2},
    },
}
DIGEST = "sha256:" + "0123456789abcdef" * 4
ISSUER = {"kind": "ClusterIssuer", "name": "corporate-ca"}


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return offline_helm(tmp_path_factory.mktemp("helm-home"))


def changed(objects: dict[Any, Any], changes: dict[Any, Any]) -> dict[Any, Any]:
    """``objects`` with each field of ``changes`` (by object, then path) set, or removed; an
    object whose changes are REMOVED is left out."""
    result = copy.deepcopy(objects)
    for key, fields in changes.items():
        if fields is REMOVED:
            del result[key]
            continue
        for path, value in fields.items():
            *parents, last = path
            target = result[key]
            for step in parents:
                target = target[step]
            if value is REMOVED:
                del target[last]
            else:
                target[last] = value
    return result


@pytest.mark.parametrize(
    ("base", "values", "changes"),
    [
        pytest.param(
            {},
            {"image.tag": '"0.2.0"'},
            {DEPLOYMENT: {(*CONTAINER, "image"): "ome-operator:0.2.0"}},
            id="image.tag is the image's tag",
        ),
        pytest.param(
            {},
            {"image.digest": json.dumps(DIGEST)},
            {DEPLOYMENT: {(*CONTAINER, "image"): f"ome-operator@{DIGEST}"}},
            id="image.digest pins the image by digest instead of its tag",
        ),
        pytest.param(
            {},
            {"image.repository": '"registry.example/ome-operator"', "image.pullPolicy": '"Always"'},
            {
                DEPLOYMENT: {
                    (*CONTAINER, "image"): "registry.example/ome-operator:0.1.0",
                    (*CONTAINER, "imagePullPolicy"): "Always",
                }
            },
            id="image.repository and image.pullPolicy are the container's",
        ),
        pytest.param(
            {},
            {"imagePullSecrets": '[{"name": "registry"}]'},
            {DEPLOYMENT: {(*POD, "imagePullSecrets"): [{"name": "registry"}]}},
            id="imagePullSecrets are the pod's",
        ),
        pytest.param(
            {},
            {"replicas": "3"},
            {DEPLOYMENT: {("spec", "replicas"): 3}},
            id="replicas is the Deployment's",
        ),
        pytest.param(
            {},
            {"replicas": "1", "leaderElection.enabled": "false"},
            {
                DEPLOYMENT: {
                    ("spec", "replicas"): 1,
                    (*CONTAINER, "command"): ["ome-operator", "run"],
                }
            },
            id="one replica without leader election runs without --leader-elect",
        ),
        pytest.param(
            {},
            {"log.format": '"plain"', "log.verbose": "true"},
            {DEPLOYMENT: {(*CONTAINER, "args"): ["--log-format=plain", "--verbose"]}},
            id="log.format and log.verbose are flags",
        ),
        pytest.param(
            {},
            {"allowOtherController": "true"},
            {DEPLOYMENT: {(*CONTAINER, "args"): ["--allow-other-controller"]}},
            id="allowOtherController lets the operator start beside OME",
        ),
        pytest.param(
            {},
            {"gangPlacement": '"off"'},
            {DEPLOYMENT: {(*CONTAINER, "args"): ["--gang-placement=off"]}},
            id="gangPlacement off places the pods of an Instance one by one",
        ),
        pytest.param(
            {"watchNamespaces": '["team-a"]'},
            {"extraArgs": '["--workers=8"]'},
            {DEPLOYMENT: {(*CONTAINER, "args"): ["--namespace=team-a", "--workers=8"]}},
            id="extraArgs come after the flags of the other values",
        ),
        pytest.param(
            {},
            {"resources": '{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": null}'},
            {DEPLOYMENT: {(*CONTAINER, "resources"): {"requests": {"cpu": "1", "memory": "1Gi"}}}},
            id="resources are merged into the default's and null removes a default",
        ),
        pytest.param(
            {},
            {
                "nodeSelector": '{"pool": "system"}',
                "tolerations": '[{"key": "system", "operator": "Exists"}]',
                "priorityClassName": '"system-cluster-critical"',
                "affinity": "null",
            },
            {
                DEPLOYMENT: {
                    (*POD, "nodeSelector"): {"pool": "system"},
                    (*POD, "tolerations"): [{"key": "system", "operator": "Exists"}],
                    (*POD, "priorityClassName"): "system-cluster-critical",
                    (*POD, "affinity"): REMOVED,
                }
            },
            id="the scheduling values are the pod's and a null affinity drops the default",
        ),
        pytest.param(
            {},
            {"config.deploy.replicas.defaultMinReplicas": "2"},
            {CONFIG: {("data", "deploy", "replicas", "defaultMinReplicas"): 2}},
            id="a config setting changes its entry and keeps the entry's other defaults",
        ),
        pytest.param(
            {},
            {"config.kedaConfig": '{"promServerAddress": "http://prometheus.monitoring:9090"}'},
            {
                CONFIG: {
                    ("data", "kedaConfig"): {
                        "promServerAddress": "http://prometheus.monitoring:9090"
                    }
                }
            },
            id="config.kedaConfig adds the kedaConfig entry",
        ),
        pytest.param(
            {},
            {"config.clusterDomain": '"example.internal"'},
            {CONFIG: {("data", "clusterDomain"): "example.internal"}},
            id="config.clusterDomain adds the clusterDomain entry as a plain string",
        ),
        pytest.param(
            {},
            {"config.podPolicy": "null"},
            {CONFIG: {("data", "podPolicy"): REMOVED}},
            id="a config entry set to null is left out",
        ),
        *[
            pytest.param(
                {f"metrics.{switch}.enabled": "true"},
                {f"metrics.{switch}.labels": '{"release": "prometheus"}'},
                {key: {("metadata", "labels", "release"): "prometheus"}},
                id=f"metrics.{switch}.labels are added to its object's",
            )
            for switch, key in (
                ("serviceMonitor", ("ServiceMonitor", "ome", "ome-operator")),
                ("prometheusRule", ("PrometheusRule", "ome", "ome-operator")),
                ("dashboard", ("ConfigMap", "ome", "ome-operator-dashboard")),
            )
        ],
        pytest.param(
            {"webhook.certManager.enabled": "true"},
            {"webhook.certManager.issuerRef": json.dumps(ISSUER)},
            {
                ("Certificate", "ome", "ome-webhook-server-cert"): {("spec", "issuerRef"): ISSUER},
                ("Issuer", "ome", "ome-selfsigned"): REMOVED,
            },
            id="an issuer of one's own replaces the self-signed Issuer",
        ),
    ],
)
def test_a_value_changes_the_fields_it_names_and_nothing_else(
    helm: Helm, base: dict[str, str], values: dict[str, str], changes: dict[Any, Any]
) -> None:
    expected = changed(by_key(helm.render(base)), changes)
    assert by_key(helm.render({**base, **values})) == expected


def test_the_default_deploy_entry_is_that_of_the_shipped_configmap(helm: Helm) -> None:
    assert by_key(helm.render())[CONFIG]["data"]["deploy"] == DEPLOY


def test_a_config_entry_is_written_as_compact_json_with_sorted_keys(helm: Helm) -> None:
    (config,) = [o for o in helm.render() if o["kind"] == "ConfigMap"]
    assert (
        config["data"]["deploy"] == json.dumps(DEPLOY, sort_keys=True, separators=(",", ":")) + "\n"
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param(
            {"leaderElection.enabled": "false"},
            "Error: execution error at (ome-operator/templates/deployment.yaml:6:4): replicas is "
            "2 but leaderElection.enabled is false: without --leader-elect every replica "
            "reconciles, so run exactly one\n\nUse --debug flag to render out invalid YAML\n",
            id="several replicas without leader election",
        ),
        pytest.param(
            {"log.format": '"xml"'},
            "Error: values don't meet the specifications of the schema(s) in the following "
            "chart(s):\nome-operator:\n- at '/log/format': value must be one of 'json', "
            "'plain', 'full'\n\n",
            id="a log format the operator does not know",
        ),
        pytest.param(
            {"replica": "3"},
            "Error: values don't meet the specifications of the schema(s) in the following "
            "chart(s):\nome-operator:\n- at '': additional properties 'replica' not allowed\n\n",
            id="a value the chart does not have",
        ),
        pytest.param(
            {"replicas": "0"},
            "Error: values don't meet the specifications of the schema(s) in the following "
            "chart(s):\nome-operator:\n- at '/replicas': minimum: got 0, want 1\n\n",
            id="no replica",
        ),
    ],
)
def test_a_value_the_chart_refuses_fails_the_render_with_its_reason(
    helm: Helm, values: dict[str, str], message: str
) -> None:
    done = helm.run("template", "ome-operator", str(CHART), *value_flags(values), check=False)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message)


# ----------------------------------------------------------------- docs/install.md's table


def value_paths(values: Any, prefix: str = "") -> set[str]:
    """The dotted path of every leaf of ``values`` (an empty mapping or list is a leaf)."""
    if isinstance(values, dict) and values:
        return {p for key, item in values.items() for p in value_paths(item, f"{prefix}{key}.")}
    return {prefix.removesuffix(".")}


def documented_values() -> list[str]:
    """The first column of docs/install.md's table of values (Install with Helm)."""
    page = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    section = page.split("## Install with Helm", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE)


def test_docs_install_has_a_row_for_each_value_and_each_row_is_a_value() -> None:
    values = value_paths(yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8")))
    documented = documented_values()
    uncovered = sorted(
        p for p in values if not any(p == d or p.startswith(f"{d}.") for d in documented)
    )
    unknown = sorted(
        d for d in documented if not any(p == d or p.startswith(f"{d}.") for p in values)
    )
    assert (uncovered, unknown, len(documented) == len(set(documented))) == ([], [], True)
