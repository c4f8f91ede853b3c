"""The PrometheusRule and the ServiceMonitor of manifests/monitoring/ (Prometheus operator
kinds), and the runbooks of docs/runbooks/. Every metric of the operator an alert reads is one it
exposes; the two alerts on what the cluster sees of the operator name its Deployment, the
ServiceMonitor's job and the shipped webhooks; every alert has a runbook_url whose page exists;
the ServiceMonitor scrapes the metrics Service, on its metrics port."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.manifests.manifest_files import MANIFESTS, find
from tests.manifests.monitoring_files import (
    ALERTS,
    METRIC,
    RULES,
    RUNBOOKS,
    load,
    matchers,
    metric_names,
    selected,
)

#: The project's home, as the krew manifest names it: the runbook URLs live under it.
HOME = yaml.safe_load((MANIFESTS / "krew" / "ome.yaml").read_text())["spec"]["homepage"]


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
        "OmeOperatorDown": ({"severity": "critical"}, "5m"),
        "OmeWebhookCallsFailing": ({"severity": "critical"}, "5m"),
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
        pytest.param(
            "OmeOperatorDown",
            {"kube_deployment_status_replicas_available", "up"},
            id="operator down: kube-state-metrics and the scrapes",
        ),
        pytest.param(
            "OmeWebhookCallsFailing",
            {"apiserver_admission_webhook_rejection_count"},
            id="webhook calls failing: the API server's own count",
        ),
    ],
)
def test_each_alert_reads_these_series(alert: str, metrics: set[str]) -> None:
    expr = ALERTS[alert]["expr"]

    assert selected(expr) == metrics
    assert set(METRIC.findall(expr)) <= metric_names()


def test_operator_down_names_the_deployment_and_the_service_monitors_job() -> None:
    deployment = find("Deployment", "ome-operator")
    # The Prometheus operator names a ServiceMonitor target's job after its Service.
    service = find("Service", "ome-operator-metrics")

    assert matchers(ALERTS["OmeOperatorDown"]["expr"]) == {
        ("namespace", "=", deployment.namespace),
        ("deployment", "=", deployment.name),
        ("job", "=", service.name),
        ("namespace", "=", service.namespace),
    }
    assert load("servicemonitor.yaml")["spec"]["namespaceSelector"]["matchNames"] == [
        service.namespace
    ]


def test_webhook_calls_failing_counts_the_failed_calls_of_every_shipped_webhook() -> None:
    found = matchers(ALERTS["OmeWebhookCallsFailing"]["expr"])
    [pattern] = [value for label, op, value in found if (label, op) == ("name", "=~")]
    configuration = find("ValidatingWebhookConfiguration", "ome-webhook-server").body
    names = [webhook["name"] for webhook in configuration["webhooks"]]

    assert found == {
        ("type", "=", "validating"),
        ("error_type", "=", "calling_webhook_error"),
        ("name", "=~", pattern),
    }
    assert [name for name in names if re.fullmatch(pattern, name)] == names
    assert not re.fullmatch(pattern, "inferenceservice.other-webhook.validator")


# --- the runbooks ------------------------------------------------------------------------------


@pytest.mark.parametrize("alert", [pytest.param(name, id=name) for name in ALERTS])
def test_each_alert_has_a_summary_a_description_and_its_runbook(alert: str) -> None:
    annotations = ALERTS[alert]["annotations"]
    page = RUNBOOKS / f"{alert}.md"

    assert sorted(annotations) == ["description", "runbook_url", "summary"]
    assert all(text.strip() for text in annotations.values())
    assert annotations["runbook_url"] == f"{HOME}docs/runbooks/{alert}.md"
    assert page.read_text().splitlines()[0] == f"# {alert}"


def test_the_runbooks_are_the_alerts_pages_and_their_index() -> None:
    pages = sorted(path.name for path in RUNBOOKS.iterdir())
    index = (RUNBOOKS / "README.md").read_text()

    assert pages == sorted(["README.md", *(f"{alert}.md" for alert in ALERTS)])
    assert [alert for alert in ALERTS if f"]({alert}.md)" not in index] == []


def test_the_project_home_is_an_https_url_ending_in_a_slash() -> None:
    assert (HOME.startswith("https://"), HOME.endswith("/")) == (True, True)


# --- the ServiceMonitor ------------------------------------------------------------------------


def test_the_service_monitor_scrapes_the_metrics_service_on_its_metrics_port() -> None:
    monitor = load("servicemonitor.yaml")
    service = find("Service", "ome-operator-metrics").body
    spec = monitor["spec"]
    selected_services = {
        doc.name: [port["name"] for port in doc.body["spec"]["ports"]]
        for doc in [find("Service", "ome-operator-metrics"), find("Service", "ome-webhook-server")]
        if spec["selector"]["matchLabels"].items() <= doc.body["metadata"]["labels"].items()
        and doc.namespace in spec["namespaceSelector"]["matchNames"]
    }

    assert (monitor["apiVersion"], monitor["kind"]) == (
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
    )
    assert "jobLabel" not in spec  # the job is the Service's name, as OmeOperatorDown reads it
    assert spec["endpoints"] == [
        {"port": "metrics", "path": "/metrics", "scheme": "http", "interval": "30s"}
    ]
    assert service["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"
    # Both Services carry the name label; only the metrics one has a port of that name.
    assert selected_services == {
        "ome-operator-metrics": ["metrics"],
        "ome-webhook-server": ["webhook"],
    }
    targets = [
        name for name, ports in selected_services.items() if spec["endpoints"][0]["port"] in ports
    ]
    assert targets == ["ome-operator-metrics"]
