"""The real KEDA CRDs on a real API server: a ScaledObject like the one the operator writes is
accepted and read back as written, and the CRD's schema refuses a malformed one, as a cluster
that runs KEDA would."""

from __future__ import annotations

import copy
import pathlib

import pytest

from tests.support.installed_cluster import path
from tests.support.keda_crds import SCALED_OBJECT

pytestmark = pytest.mark.controlplane

SHIPPED = {
    "keda.sh_scaledobjects.yaml",
    "keda.sh_scaledjobs.yaml",
    "keda.sh_triggerauthentications.yaml",
    "keda.sh_clustertriggerauthentications.yaml",
}
PROMETHEUS = "http://prometheus-operated.monitoring.svc.cluster.local:9090"
QUERY = 'sum(rate(vllm:request_success_total{ome_io_inferenceservice="demo"}[1m]))'


def _scaled_object(name: str = "scaledobject-demo-engine") -> dict:
    """The ScaledObject the operator renders for the InferenceService ``demo``."""
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "demo-engine",
            },
            "minReplicaCount": 1,
            "maxReplicaCount": 3,
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": PROMETHEUS,
                        "metricName": "tps",
                        "query": QUERY,
                        "threshold": "10",
                        "operator": "LessThanOrEqual",
                    },
                }
            ],
        },
    }


def test_the_pinned_module_ships_the_keda_crds(keda: pathlib.Path) -> None:
    assert SHIPPED <= {f.name for f in (keda / "crds").glob("*.yaml")}


def test_a_scaled_object_is_accepted_and_read_back_intact(cluster, keda, namespace) -> None:
    wanted = _scaled_object()
    status, created = cluster.plane.raw("POST", path(SCALED_OBJECT, namespace), wanted)
    assert status == 201, created
    stored = cluster.stored(SCALED_OBJECT, namespace, "scaledobject-demo-engine")
    for answer in (created, stored):
        assert answer["apiVersion"] == "keda.sh/v1alpha1"
        assert answer["kind"] == "ScaledObject"
        assert answer["metadata"]["name"] == "scaledobject-demo-engine"
        assert answer["metadata"]["namespace"] == namespace
        assert answer["spec"] == wanted["spec"]
    listed = cluster.list(SCALED_OBJECT, namespace)
    assert [o["metadata"]["name"] for o in listed] == ["scaledobject-demo-engine"]


def _with(change: str, value: object) -> dict:
    """The operator's ScaledObject with one field (a dotted path under ``spec``) replaced."""
    obj = copy.deepcopy(_scaled_object("scaledobject-malformed"))
    *parents, last = change.split(".")
    node = obj["spec"]
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    node[last] = value
    return obj


@pytest.mark.parametrize(
    ("change", "value", "reported"),
    [
        ("minReplicaCount", "one", "spec.minReplicaCount"),
        ("triggers.0.metadata.threshold", 10, "spec.triggers[0].metadata.threshold"),
        ("minReplicaCount", 5, "minReplicaCount must be less than or equal to maxReplicaCount"),
    ],
    ids=["replicas-as-text", "threshold-as-number", "min-above-max"],
)
def test_the_schema_refuses_a_malformed_scaled_object(
    cluster, keda, namespace, change: str, value: object, reported: str
) -> None:
    status, answer = cluster.plane.raw("POST", path(SCALED_OBJECT, namespace), _with(change, value))
    assert status == 422, answer
    assert answer["reason"] == "Invalid"
    assert reported in answer["message"], answer["message"]
    assert cluster.get(SCALED_OBJECT, namespace, "scaledobject-malformed") is None
