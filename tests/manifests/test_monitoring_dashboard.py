"""The Grafana dashboard of manifests/monitoring/: ome-operator-dashboard.json, the one source
of the ConfigMap kustomize generates from it for Grafana's dashboard sidecar. Every metric the
operator exports is on a panel, and every series a panel reads is the operator's or one the
docs name as another source's."""

from __future__ import annotations

import functools
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from tests.manifests.monitoring_files import (
    BOARD,
    DASHBOARD,
    METRIC,
    MONITORING,
    PANELS,
    metric_families,
    metric_names,
    selected,
)

#: Series of other sources the dashboard reads: kube-state-metrics, the API server.
OTHER_SOURCES = {
    "kube_deployment_status_replicas_available",
    "apiserver_admission_webhook_rejection_count",
    "apiserver_admission_webhook_fail_open_count",
}
#: The bytes ``kubectl apply`` (client side) may keep in its last-applied annotation: the whole
#: ConfigMap, the dashboard included, must fit.
LAST_APPLIED_LIMIT = 262144


@functools.cache
def kustomized() -> tuple[dict[str, Any], ...]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl (with its built-in kustomize) is needed to render the monitoring"
    done = subprocess.run(
        [kubectl, "kustomize", str(MONITORING)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def _panel(title: str) -> dict[str, Any]:
    [panel] = [panel for panel in PANELS if panel["title"] == title]
    return panel


def _exprs(panel: dict[str, Any]) -> list[str]:
    return [target["expr"] for target in panel["targets"]]


# --- the ConfigMap -----------------------------------------------------------------------------


def test_kustomize_renders_the_rule_the_monitor_and_the_dashboard_config_map() -> None:
    assert sorted((o["kind"], o["metadata"]["name"]) for o in kustomized()) == [
        ("ConfigMap", "ome-operator-dashboard"),
        ("PrometheusRule", "ome-operator"),
        ("ServiceMonitor", "ome-operator"),
    ]


def test_the_config_map_holds_the_json_file_as_is_for_the_grafana_sidecar() -> None:
    [config_map] = [o for o in kustomized() if o["kind"] == "ConfigMap"]

    assert config_map == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "ome-operator-dashboard",
            "namespace": "ome",
            "labels": {"app.kubernetes.io/name": "ome-operator", "grafana_dashboard": "1"},
        },
        "data": {"ome-operator-dashboard.json": DASHBOARD.read_text()},
    }
    assert len(yaml.safe_dump(config_map).encode()) < LAST_APPLIED_LIMIT


# --- the panels --------------------------------------------------------------------------------


def test_the_dashboard_has_these_rows_and_panels_in_order() -> None:
    assert [(panel["type"], panel["title"]) for panel in BOARD["panels"]] == [
        ("row", "Health"),
        ("stat", "Available replicas"),
        ("stat", "Build"),
        ("timeseries", "Webhook calls that failed"),
        ("row", "InferenceServices"),
        ("timeseries", "Reconciles by result"),
        ("timeseries", "Reconcile duration"),
        ("stat", "Unresolved InferenceServices"),
        ("timeseries", "Components by mode"),
        ("timeseries", "Component failures"),
        ("timeseries", "InferenceReplica passes"),
        ("row", "Runtime selection"),
        ("timeseries", "Selections by outcome"),
        ("timeseries", "Runtime exclusions"),
        ("timeseries", "Named runtime resolutions"),
        ("row", "Work queues"),
        ("timeseries", "Queue depth"),
        ("timeseries", "Queue latency"),
        ("row", "Admission webhook"),
        ("timeseries", "Webhook requests"),
        ("timeseries", "Webhook latency"),
        ("timeseries", "Webhook warnings"),
        ("timeseries", "InferenceServices moved by runtime changes"),
        ("row", "API server"),
        ("timeseries", "API requests by code"),
        ("timeseries", "Watch failures"),
    ]


@pytest.mark.parametrize(
    ("title", "metrics"),
    [
        pytest.param(
            "Available replicas",
            {"kube_deployment_status_replicas_available"},
            id="available replicas from kube-state-metrics",
        ),
        pytest.param("Build", {"ome_build_info"}, id="build"),
        pytest.param(
            "Webhook calls that failed",
            {
                "apiserver_admission_webhook_rejection_count",
                "apiserver_admission_webhook_fail_open_count",
            },
            id="failed webhook calls from the API server",
        ),
        pytest.param(
            "Reconciles by result", {"ome_inferenceservice_reconcile_total"}, id="reconciles"
        ),
        pytest.param(
            "Reconcile duration",
            {"ome_inferenceservice_reconcile_duration_seconds_bucket"},
            id="reconcile duration",
        ),
        pytest.param(
            "Unresolved InferenceServices",
            {"ome_runtime_unresolved_inferenceservices"},
            id="unresolved",
        ),
        pytest.param("Components by mode", {"ome_components_by_mode"}, id="modes"),
        pytest.param(
            "Component failures", {"ome_component_reconcile_errors_total"}, id="component failures"
        ),
        pytest.param(
            "InferenceReplica passes",
            {"ome_inferencereplica_reconcile_total"},
            id="inference replica passes",
        ),
        pytest.param("Selections by outcome", {"ome_runtime_selection_total"}, id="selections"),
        pytest.param("Runtime exclusions", {"ome_runtime_exclusions_total"}, id="exclusions"),
        pytest.param(
            "Named runtime resolutions",
            {"ome_runtime_named_resolution_total"},
            id="named resolutions",
        ),
        pytest.param("Queue depth", {"ome_workqueue_depth"}, id="queue depth"),
        pytest.param(
            "Queue latency", {"ome_workqueue_queue_duration_seconds_bucket"}, id="queue latency"
        ),
        pytest.param("Webhook requests", {"ome_webhook_requests_total"}, id="webhook requests"),
        pytest.param(
            "Webhook latency",
            {"ome_webhook_request_duration_seconds_bucket"},
            id="webhook latency",
        ),
        pytest.param("Webhook warnings", {"ome_webhook_warnings_total"}, id="webhook warnings"),
        pytest.param(
            "InferenceServices moved by runtime changes",
            {"ome_runtime_change_moved_inferenceservices_sum"},
            id="moved by runtime changes",
        ),
        pytest.param("API requests by code", {"ome_api_requests_total"}, id="api requests"),
        pytest.param("Watch failures", {"ome_watch_failures_total"}, id="watch failures"),
    ],
)
def test_each_panel_reads_these_series(title: str, metrics: set[str]) -> None:
    exprs = _exprs(_panel(title))
    used = set().union(*(selected(expr) for expr in exprs))

    assert used == metrics
    assert {name for expr in exprs for name in METRIC.findall(expr)} <= metric_names()
    assert used - metric_names() <= OTHER_SOURCES


def test_every_metric_the_operator_exports_is_on_a_panel() -> None:
    shown = {name for panel in PANELS for expr in _exprs(panel) for name in selected(expr)}

    assert sorted(family for family, names in metric_families().items() if not names & shown) == []


def test_panel_ids_are_unique_and_panels_do_not_overlap() -> None:
    ids = [panel["id"] for panel in BOARD["panels"]]
    cells = [
        (panel["id"], x, y)
        for panel in BOARD["panels"]
        for x in range(panel["gridPos"]["x"], panel["gridPos"]["x"] + panel["gridPos"]["w"])
        for y in range(panel["gridPos"]["y"], panel["gridPos"]["y"] + panel["gridPos"]["h"])
    ]

    assert len(ids) == len(set(ids))
    assert len({(x, y) for _, x, y in cells}) == len(cells)
    assert max(x for _, x, _ in cells) < 24


def test_the_namespace_variable_reads_a_metric_the_operator_exposes() -> None:
    variables = BOARD["templating"]["list"]
    queries = {v["name"]: v["query"] for v in variables}

    assert queries == {
        "datasource": "prometheus",
        "namespace": {"query": "label_values(ome_build_info, namespace)", "refId": "namespace"},
    }
    assert set(METRIC.findall(queries["namespace"]["query"])) <= metric_names()
