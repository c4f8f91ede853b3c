"""With nodes and a resource-metrics API on loopback: kube-controller-manager's HPA controller
scales what the operator made (docs/autoscaling.md), and the operator never fights it: it sends
nothing to ``replicas`` while the HPA scales, a runtime change keeps the scaled count, a workload
it scaled itself keeps its count when an autoscaler takes it over, and it takes ``replicas``
back when the autoscaler goes. With the KEDA CRDs installed, a ScaledObject is created and
accepted by KEDA's schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.controlplane.scenarios import converged, isvc, runtime, seed, status
from tests.support.installed_cluster import DEPLOYMENT, ISVC, Cluster, eventually
from tests.support.resource_metrics import LoopbackMetrics, running_loopback_metrics

pytestmark = pytest.mark.controlplane

HPA = "autoscaling/v2/horizontalpodautoscalers"
SCALED_OBJECTS = "keda.sh/v1alpha1/scaledobjects"
IR = "ome.io/v1beta1/inferencereplicas"
SCALED = {"minReplicas": 1, "maxReplicas": 3}


@pytest.fixture(scope="module")
def metrics(cluster: Cluster) -> Iterator[LoopbackMetrics]:
    with running_loopback_metrics(cluster, cluster.folder / "resource-metrics") as served:
        yield served


def replicas(cluster: Cluster, resource: str, namespace: str, name: str) -> int:
    return cluster.stored(resource, namespace, name)["spec"].get("replicas", -1)


def replica_writes(cluster: Cluster, mark: int, namespace: str) -> list[str]:
    """The operator's writes to the workloads (not their status) since ``mark``."""
    return [
        w
        for w in cluster.operator_writes(mark, namespace)
        if w.split()[1] in ("deployments", "inferencereplicas", "deployments/scale")
    ]


def owns_replicas(obj: dict[str, Any]) -> bool:
    """Whether the operator's apply record holds ``spec.replicas`` (its create's ``Update``
    entry may: applies never remove what that entry holds, and an autoscaler's first change
    takes it from there)."""
    for entry in obj["metadata"].get("managedFields") or []:
        if entry.get("manager") == "ome-operator" and entry.get("operation") == "Apply":
            if "f:replicas" in (entry.get("fieldsV1") or {}).get("f:spec", {}):
                return True
    return False


def test_the_hpa_scales_a_raw_deployment_up_and_down_and_the_operator_never_fights_it(
    cluster, namespace, operator, nodes, metrics
):
    seed(cluster, namespace, isvc(namespace, engine=SCALED))
    nodes.label_for_model("llama", namespace)
    hpa = eventually(lambda: cluster.get(HPA, namespace, "chat-engine"))
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "chat-engine",
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3)
    eventually(lambda: len(nodes.pods(namespace)) == 1, timeout=60)
    mark = cluster.plane.audit_mark()

    metrics.set_usage(namespace, cpu_millis=1800, memory_mib=64)  # 180% of the 1000m request
    eventually(lambda: replicas(cluster, DEPLOYMENT, namespace, "chat-engine") >= 2, 60)
    autoscaler = eventually(
        lambda: (
            (s := status(cluster, namespace, "chat")["components"]["engine"]["autoscaler"])
            and s.get("desiredReplicas", 0) >= 2
            and s
        )
    )
    assert autoscaler["class"] == "hpa"
    assert replica_writes(cluster, mark, namespace) == []

    scaled = replicas(cluster, DEPLOYMENT, namespace, "chat-engine")
    changed = runtime(namespace)
    changed["spec"]["engineConfig"]["runner"]["image"] = "vllm:2"
    metrics.set_usage(namespace, cpu_millis=800, memory_mib=64)  # within the tolerance band
    cluster.apply(changed)

    def rolled() -> bool:
        stored = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
        return stored["spec"]["template"]["spec"]["containers"][0]["image"] == "vllm:2"

    eventually(rolled, 30)
    assert replicas(cluster, DEPLOYMENT, namespace, "chat-engine") == scaled
    assert not owns_replicas(cluster.stored(DEPLOYMENT, namespace, "chat-engine"))

    metrics.set_usage(namespace, cpu_millis=10, memory_mib=64)
    eventually(lambda: replicas(cluster, DEPLOYMENT, namespace, "chat-engine") == 1, 60)
    scale_writes = [
        w for w in replica_writes(cluster, mark, namespace) if w.split()[1].endswith("/scale")
    ]
    assert scale_writes == []


def test_the_hpa_scales_whole_omenative_instances(cluster, namespace, operator, nodes, metrics):
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative", engine=SCALED))
    nodes.label_for_model("llama", namespace)
    hpa = eventually(lambda: cluster.get(HPA, namespace, "chat-engine"))
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "name": "chat-engine",
    }
    eventually(lambda: len(nodes.pods(namespace)) == 1, timeout=60)
    mark = cluster.plane.audit_mark()

    metrics.set_usage(namespace, cpu_millis=1800, memory_mib=64)
    eventually(lambda: replicas(cluster, IR, namespace, "chat-engine") >= 2, 60)
    eventually(lambda: len(nodes.pods(namespace)) >= 2, 60)  # an Instance more, made whole

    metrics.set_usage(namespace, cpu_millis=10, memory_mib=64)
    eventually(lambda: replicas(cluster, IR, namespace, "chat-engine") == 1, 60)
    eventually(lambda: len(nodes.pods(namespace)) == 1, 60)
    assert [w for w in replica_writes(cluster, mark, namespace) if "status" not in w] == []


def test_an_autoscaler_takes_over_the_count_and_gives_it_back(cluster, namespace, operator):
    """Fixed at 2, then 2 to 4: the HPA starts from 2 (never reset to 1); fixed at 2 again: the
    HPA is deleted and the operator applies 2 again, over a hand-made 3; 2 to 4 again: the
    operator hands the field it now holds over, its value kept."""
    fixed, scaled = {"minReplicas": 2, "maxReplicas": 2}, {"minReplicas": 2, "maxReplicas": 4}
    seed(cluster, namespace, isvc(namespace, engine=fixed))
    eventually(lambda: replicas(cluster, DEPLOYMENT, namespace, "chat-engine") == 2)
    converged(cluster, namespace)

    mark = cluster.plane.audit_mark()
    cluster.apply(isvc(namespace, engine=scaled))
    eventually(lambda: cluster.get(HPA, namespace, "chat-engine"))
    converged(cluster, namespace)
    assert replicas(cluster, DEPLOYMENT, namespace, "chat-engine") == 2

    cluster.apply(isvc(namespace, engine=fixed))
    eventually(lambda: cluster.get(HPA, namespace, "chat-engine") is None)
    cluster.patch(DEPLOYMENT, namespace, "chat-engine", {"spec": {"replicas": 3}})
    eventually(lambda: owns_replicas(cluster.stored(DEPLOYMENT, namespace, "chat-engine")))
    eventually(lambda: replicas(cluster, DEPLOYMENT, namespace, "chat-engine") == 2)

    cluster.apply(isvc(namespace, engine=scaled))
    eventually(lambda: cluster.get(HPA, namespace, "chat-engine"))
    eventually(lambda: not owns_replicas(cluster.stored(DEPLOYMENT, namespace, "chat-engine")))
    converged(cluster, namespace)
    assert replicas(cluster, DEPLOYMENT, namespace, "chat-engine") == 2
    assert [w for w in cluster.operator_writes(mark, namespace) if "/scale " in w] == []


def test_keda_gets_a_scaled_object_its_schema_accepts(cluster, namespace, keda, operator):
    seed(
        cluster,
        namespace,
        isvc(namespace, engine=SCALED, kedaConfig={"enableKeda": True, "scalingThreshold": "5"}),
    )
    found = eventually(lambda: cluster.get(SCALED_OBJECTS, namespace, "scaledobject-chat-engine"))
    assert found["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "chat-engine",
    }
    assert (found["spec"]["minReplicaCount"], found["spec"]["maxReplicaCount"]) == (1, 3)
    assert found["spec"]["triggers"][0]["metadata"]["threshold"] == "5"
    assert cluster.get(HPA, namespace, "chat-engine") is None

    cluster.apply(isvc(namespace, engine=SCALED))  # back to the default class
    eventually(lambda: cluster.get(HPA, namespace, "chat-engine"))
    eventually(lambda: cluster.get(SCALED_OBJECTS, namespace, "scaledobject-chat-engine") is None)
    assert cluster.stored(ISVC, namespace, "chat")["status"]["components"]["engine"]["autoscaler"][
        "class"
    ] == ("hpa")
