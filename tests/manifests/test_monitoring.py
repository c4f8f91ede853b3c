"""The monitoring assets of manifests/monitoring/: a ServiceMonitor and a PrometheusRule
(Prometheus operator kinds) and ome-operator-dashboard.json (Grafana). Every metric their queries
name is one the operator exposes; the ServiceMonitor scrapes the metrics Service, on its metrics
port."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from ome_operator.metrics import Metrics
from tests.manifests.manifest_files import MANIFESTS, ROOT, find

MONITORING = MANIFESTS / "monitoring"
DASHBOARD = ROOT / "manifests" / "monitoring" / "ome-operator-dashboard.json"
#: A metric name in a PromQL expression: every one of the operator's starts with ``ome_``.
METRIC = re.compile(r"\bome_[a-z0-9_]+")


def load(name: str) -> dict[str, Any]:
    [document] = list(yaml.safe_load_all((MONITORING / name).read_text()))
    return document


@functools.cache
def metric_names() -> frozenset[str]:
    """Every sample name a fresh ``Metrics`` can expose, by the type of each family (a
    counter's family drops its ``_total``)."""
    registry = CollectorRegistry()
    Metrics(registry)
    suffixes = {
        "counter": ("_total",),
        "gauge": ("",),
        "histogram": ("_bucket", "_sum", "_count"),
    }
    return frozenset(
        family.name + suffix for family in registry.collect() for suffix in suffixes[family.type]
    )


RULES = load("prometheusrule.yaml")
ALERTS = {rule["alert"]: rule for group in RULES["spec"]["groups"] for rule in group["rules"]}
PANELS = [panel for panel in json.loads(DASHBOARD.read_text())["panels"] if panel["type"] != "row"]


def test_the_exposed_names_are_the_operators_metrics() -> None:
    assert metric_names() == {
        "ome_api_requests_total",
        "ome_build_info",
        "ome_component_reconcile_errors_total",
        "ome_components_by_mode",
        "ome_inferencereplica_reconcile_total",
        "ome_inferenceservice_reconcile_duration_seconds_bucket",
        "ome_inferenceservice_reconcile_duration_seconds_count",
        "ome_inferenceservice_reconcile_duration_seconds_sum",
        "ome_inferenceservice_reconcile_total",
        "ome_runtime_change_moved_inferenceservices_bucket",
        "ome_runtime_change_moved_inferenceservices_count",
        "ome_runtime_change_moved_inferenceservices_sum",
        "ome_runtime_exclusions_total",
        "ome_runtime_named_resolution_total",
        "ome_runtime_selection_total",
        "ome_runtime_unresolved_inferenceservices",
        "ome_watch_failures_total",
        "ome_webhook_request_duration_seconds_bucket",
        "ome_webhook_request_duration_seconds_count",
        "ome_webhook_request_duration_seconds_sum",
        "ome_webhook_requests_total",
        "ome_webhook_warnings_total",
        "ome_workqueue_depth",
        "ome_workqueue_queue_duration_seconds_bucket",
        "ome_workqueue_queue_duration_seconds_count",
        "ome_workqueue_queue_duration_seconds_sum",
    }


# --- the PrometheusRule ------------------------------------------------------------------------


def test_the_rule_defines_these_alerts_with_their_severity_and_wait() -> None:
    assert (RULES["apiVersion"], RULES["kind"], RULES["metadata"]["namespace"]) == (
        "monitoring.coreos.com/v1",
        "PrometheusRule",
        "ome",
    )
    assert {name: (rule["labels"], rule["for"]) for name, rule in ALERTS.items()} == {
        "OmeReconcileErrors": ({"severity": "warning"}, "15m"),
        "OmeRuntimeNotFound": ({"severity": "warning"}, "10m"),
        "OmeWebhookFailures": ({"severity": "critical"}, "10m"),
        "OmeWebhookSlow": ({"severity": "warning"}, "10m"),
        "OmeWebhookDenials": ({"severity": "info"}, "15m"),
        "OmeWatchFailures": ({"severity": "warning"}, "10m"),
    }


@pytest.mark.parametrize(
    ("alert", "metrics"),
    [
        pytest.param("OmeReconcileErrors", {"ome_inferenceservice_reconcile_total"}, id="errors"),
        pytest.param(
            "OmeRuntimeNotFound", {"ome_runtime_unresolved_inferenceservices"}, id="no runtime"
        ),
        pytest.param(
            "OmeWebhookFailures",
            {"ome_webhook_request_duration_seconds_count", "ome_webhook_requests_total"},
            id="reviews without a verdict: timed minus counted",
        ),
        pytest.param(
            "OmeWebhookSlow", {"ome_webhook_request_duration_seconds_bucket"}, id="slow reviews"
        ),
        pytest.param("OmeWebhookDenials", {"ome_webhook_requests_total"}, id="most denied"),
        pytest.param("OmeWatchFailures", {"ome_watch_failures_total"}, id="failed watches"),
    ],
)
def test_each_alert_reads_metrics_the_operator_exposes(alert: str, metrics: set[str]) -> None:
    used = set(METRIC.findall(ALERTS[alert]["expr"]))

    assert used == metrics
    assert used <= metric_names()


@pytest.mark.parametrize("alert", [pytest.param(name, id=name) for name in ALERTS])
def test_each_alert_has_a_summary_and_a_description(alert: str) -> None:
    annotations = ALERTS[alert]["annotations"]

    assert sorted(annotations) == ["description", "summary"]
    assert all(text.strip() for text in annotations.values())


# --- the ServiceMonitor ------------------------------------------------------------------------


def test_the_service_monitor_scrapes_the_metrics_service_on_its_metrics_port() -> None:
    monitor = load("servicemonitor.yaml")
    service = find("Service", "ome-operator-metrics").body
    spec = monitor["spec"]
    selected = {
        doc.name: [port["name"] for port in doc.body["spec"]["ports"]]
        for doc in [find("Service", "ome-operator-metrics"), find("Service", "ome-webhook-server")]
        if spec["selector"]["matchLabels"].items() <= doc.body["metadata"]["labels"].items()
        and doc.namespace in spec["namespaceSelector"]["matchNames"]
    }

    assert (monitor["apiVersion"], monitor["kind"]) == (
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
    )
    assert spec["endpoints"] == [
        {"port": "metrics", "path": "/metrics", "scheme": "http", "interval": "30s"}
    ]
    assert service["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"
    # Both Services carry the name label; only the metrics one has a port of that name.
    assert selected == {"ome-operator-metrics": ["metrics"], "ome-webhook-server": ["webhook"]}
    targets = [name for name, ports in selected.items() if spec["endpoints"][0]["port"] in ports]
    assert targets == ["ome-operator-metrics"]


# --- the Grafana dashboard ---------------------------------------------------------------------


def test_the_dashboard_has_these_panels() -> None:
    assert [panel["title"] for panel in PANELS] == [
        "Reconciles by result",
        "Reconcile duration",
        "Unresolved InferenceServices",
        "Components by mode",
        "Build",
        "Queue depth",
        "Queue latency",
        "Webhook requests",
        "Webhook latency",
        "API requests by code",
        "Watch failures",
    ]


@pytest.mark.parametrize(
    ("title", "metrics"),
    [
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
        pytest.param("Build", {"ome_build_info"}, id="build"),
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
        pytest.param("API requests by code", {"ome_api_requests_total"}, id="api requests"),
        pytest.param("Watch failures", {"ome_watch_failures_total"}, id="watch failures"),
    ],
)
def test_each_panel_queries_metrics_the_operator_exposes(title: str, metrics: set[str]) -> None:
    [panel] = [panel for panel in PANELS if panel["title"] == title]
    used = {name for target in panel["targets"] for name in METRIC.findall(target["expr"])}

    assert used == metrics
    assert used <= metric_names()


def test_the_namespace_variable_reads_a_metric_the_operator_exposes() -> None:
    variables = json.loads(DASHBOARD.read_text())["templating"]["list"]
    queries = {v["name"]: v["query"] for v in variables}

    assert queries == {
        "datasource": "prometheus",
        "namespace": {"query": "label_values(ome_build_info, namespace)", "refId": "namespace"},
    }
    assert set(METRIC.findall(queries["namespace"]["query"])) <= metric_names()
