"""The real HPA controller scales on resource metrics a test serves: ``resource_metrics`` serves
``metrics.k8s.io`` on a loopback ClusterIP through the API server's aggregation layer, and
kube-controller-manager's HPA controller reads it and scales a plain Deployment up and back
down. No operator runs here: this proves the tier's infrastructure."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.installed_cluster import APISERVICE, DEPLOYMENT, Cluster, eventually, path
from tests.support.kwok_nodes import KwokNodes, condition
from tests.support.resource_metrics import (
    API_SERVICE,
    GROUP_VERSION,
    LoopbackMetrics,
    running_loopback_metrics,
)

pytestmark = pytest.mark.controlplane

HPA = "autoscaling/v2/horizontalpodautoscalers"
APP = {"app": "web"}


@pytest.fixture(scope="module")
def metrics(cluster: Cluster) -> Iterator[LoopbackMetrics]:
    with running_loopback_metrics(cluster, cluster.folder / "resource-metrics") as served:
        yield served
    assert cluster.get(APISERVICE, None, API_SERVICE) is None


def deployment(namespace: str) -> dict[str, Any]:
    """One replica of one container asking for 100m of CPU; the KWOK nodes run it."""
    container = {
        "name": "web",
        "image": "registry.test/ome/web:1",
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": APP},
            "template": {"metadata": {"labels": APP}, "spec": {"containers": [container]}},
        },
    }


def autoscaler(namespace: str, metric: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [{"type": "Resource", "resource": metric}],
        },
    }


def running(nodes: KwokNodes, namespace: str) -> list[dict[str, Any]]:
    """The namespace's pods, once every one is Ready on a KWOK node."""
    found = nodes.pods(namespace)
    ok = found and all(
        condition(p, "Ready").get("status") == "True" and p["spec"].get("nodeName") in nodes.names
        for p in found
    )
    return found if ok else []


def replicas(cluster: Cluster, namespace: str) -> int:
    return cluster.stored(DEPLOYMENT, namespace, "web")["spec"]["replicas"]


def scaling_active(cluster: Cluster, namespace: str) -> dict[str, Any]:
    """The HPA, once its ScalingActive condition is True (it computed from the metrics)."""
    hpa = cluster.stored(HPA, namespace, "web")
    return hpa if condition(hpa, "ScalingActive").get("status") == "True" else {}


def start(cluster: Cluster, nodes: KwokNodes, namespace: str) -> None:
    """The Deployment applied with kubectl (which validates it against the API server's OpenAPI,
    the aggregated one included), until its pod runs."""
    cluster.apply(deployment(namespace))
    eventually(lambda: running(nodes, namespace), timeout=60)


def test_the_hpa_controller_scales_a_deployment_up_and_down_on_served_cpu(
    cluster, namespace, nodes, metrics
):
    start(cluster, nodes, namespace)
    metrics.set_usage(namespace, cpu_millis=90, memory_mib=32, labels=APP)
    target = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}
    began = time.monotonic()
    cluster.plane.request("POST", path(HPA, namespace), autoscaler(namespace, target))

    eventually(lambda: replicas(cluster, namespace) >= 2, timeout=60, interval=0.1)
    up = time.monotonic() - began
    hpa = eventually(lambda: scaling_active(cluster, namespace), timeout=30)
    assert condition(hpa, "ScalingActive")["reason"] == "ValidMetricFound"
    assert condition(hpa, "AbleToScale")["status"] == "True"
    current = eventually(
        lambda: [
            m["resource"]["current"]
            for m in cluster.stored(HPA, namespace, "web")["status"].get("currentMetrics") or []
            if m["resource"]["current"].get("averageUtilization") == 90
        ],
        timeout=30,
    )
    assert current[0]["averageValue"] == "90m"
    eventually(lambda: len(running(nodes, namespace)) >= 2, timeout=60)

    metrics.set_usage(namespace, cpu_millis=10, memory_mib=32, labels=APP)
    began = time.monotonic()
    eventually(lambda: replicas(cluster, namespace) == 1, timeout=60, interval=0.1)
    down = time.monotonic() - began
    hpa = eventually(lambda: scaling_active(cluster, namespace), timeout=30)
    assert hpa["status"]["desiredReplicas"] == 1
    asked = f"GET /apis/{GROUP_VERSION}/namespaces/{namespace}/pods?labelSelector=app%3Dweb 200"
    assert asked in metrics.requests  # the HPA controller's question, through the aggregator
    print(f"scaled up in {up:.1f} s, down in {down:.1f} s")


def test_the_hpa_controller_scales_on_served_memory(cluster, namespace, nodes, metrics):
    start(cluster, nodes, namespace)
    metrics.set_usage(namespace, cpu_millis=10, memory_mib=200, labels=APP)
    target = {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}
    cluster.plane.request("POST", path(HPA, namespace), autoscaler(namespace, target))
    eventually(lambda: replicas(cluster, namespace) >= 2, timeout=60, interval=0.1)
    assert condition(cluster.stored(HPA, namespace, "web"), "ScalingActive")["status"] == "True"


def test_the_api_server_answers_what_the_test_serves(cluster, namespace, nodes, metrics):
    start(cluster, nodes, namespace)
    (pod,) = nodes.pods(namespace)
    name = pod["metadata"]["name"]
    root = f"/apis/{GROUP_VERSION}/namespaces/{namespace}/pods"
    assert cluster.plane.request("GET", root)["items"] == []  # no usage served: no metrics

    metrics.set_usage(namespace, cpu_millis=250, memory_mib=512, labels=APP)
    metrics.set_usage(namespace, cpu_millis=5, memory_mib=1, labels={"app": "other"})
    listed = cluster.plane.request("GET", f"{root}?labelSelector=app%3Dweb")
    assert [item["metadata"]["name"] for item in listed["items"]] == [name]
    usage = listed["items"][0]["containers"][0]["usage"]
    assert usage == {"cpu": "250m", "memory": "512Mi"}
    assert listed["items"][0]["window"] == "1s"

    metrics.set_usage(namespace, cpu_millis=700, memory_mib=64, pod=name)  # by name wins
    one = cluster.plane.request("GET", f"{root}/{name}")
    assert one["kind"] == "PodMetrics"
    assert one["containers"][0]["usage"] == {"cpu": "700m", "memory": "64Mi"}
    assert cluster.plane.raw("GET", f"{root}?labelSelector=app%3Dnone")[1]["items"] == []
    assert cluster.plane.raw("GET", f"{root}/absent")[0] == 404

    top = cluster.plane.kubectl("top", "pod", "-n", namespace, "--no-headers").stdout.split()
    assert top[:3] == [name, "700m", "64Mi"]
    node = pod["spec"]["nodeName"]
    nodes_listed = cluster.plane.request("GET", f"/apis/{GROUP_VERSION}/nodes/{node}")
    assert nodes_listed["usage"]["cpu"] != "0m"
    assert cluster.service_references() == []


def test_an_api_service_whose_service_is_not_on_loopback_is_a_service_reference(cluster):
    """The session's network check lists an APIService whose Service it cannot place on
    loopback (here: there is none, so nothing is dialled meanwhile), not the loopback one."""
    name = "v1alpha1.probe.ome.test"
    probe = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {
            "group": "probe.ome.test",
            "version": "v1alpha1",
            "service": {"namespace": "default", "name": "absent", "port": 443},
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 10,
            "versionPriority": 10,
        },
    }
    cluster.plane.request("POST", path(APISERVICE), probe)
    try:
        found = cluster.service_references()
    finally:
        cluster.delete(APISERVICE, None, name)
    assert found == [f"{name} -> default/absent (no such Service)"]
    assert cluster.service_references() == []
