"""Every mode's workloads on a real API server, owned by their InferenceService, and a converged
operator that writes nothing (the server normalises quantities; the comparison must too)."""

from __future__ import annotations

import pytest

from tests.controlplane.scenarios import (
    MULTINODE,
    converged,
    isvc,
    owned,
    owned_workloads,
    seed,
    status,
)
from tests.support.installed_cluster import DEPLOYMENT, ISVC, SR, eventually

pytestmark = pytest.mark.controlplane


@pytest.mark.parametrize(
    ("engine_config", "spec", "mode", "source"),
    [
        pytest.param({}, {}, "RawDeployment", "Default", id="RawDeployment: a Deployment"),
        pytest.param(
            MULTINODE,
            {},
            "MultiNode",
            "ComponentAnnotation",
            id="MultiNode: a LeaderWorkerSet and no budget",
        ),
        pytest.param(
            {},
            {"deploymentMode": "OMENative"},
            "OMENative",
            "ServiceSpec",
            id="OMENative: an InferenceReplica, a headless Service",
        ),
    ],
)
def test_each_mode_gets_its_workloads_owned_by_the_inference_service(
    cluster, namespace, operator, engine_config, spec, mode, source
):
    (created,) = seed(cluster, namespace, isvc(namespace, **spec), engine_config=engine_config)

    objects = eventually(lambda: owned_workloads(cluster, namespace, "chat", mode))
    reference = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "name": "chat",
        "uid": created["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert {o["metadata"]["name"]: o["metadata"]["ownerReferences"] for o in objects} == {
        o["metadata"]["name"]: [reference] for o in objects
    }
    engine = eventually(lambda: status(cluster, namespace, "chat")["components"]["engine"])
    assert (engine["deploymentMode"], engine["deploymentModeSource"]) == (mode, source)


def test_a_converged_operator_writes_nothing_when_re_queued(cluster, namespace, operator):
    seed(
        cluster,
        namespace,
        isvc(namespace, "chat"),
        isvc(namespace, "native", deploymentMode="OMENative"),
        isvc(namespace, "multi", engine=MULTINODE),
    )
    for name, count in (("chat", 4), ("native", 5), ("multi", 3)):
        eventually(lambda name=name, count=count: len(owned(cluster, namespace, name)) == count)
    converged(cluster, namespace)

    # A label on the runtime re-queues every InferenceService of the namespace: each pass must
    # find the stored objects (quantities normalised, defaults added) already as rendered.
    cluster.patch(SR, namespace, "vllm", {"metadata": {"labels": {"touched": "yes"}}})

    assert cluster.quiet_writes(namespace, 5.0) == []


def test_quantities_are_stored_normalised_and_left_alone(cluster, namespace, operator, nodes):
    nodes.label_for_model("llama", namespace)  # its pods serve through the roll below
    seed(cluster, namespace, isvc(namespace))
    deployment = eventually(lambda: cluster.get(DEPLOYMENT, namespace, "chat-engine"))
    converged(cluster, namespace)

    limits = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "1", "cpu": "2", "memory": "1Gi"}
    mark = cluster.plane.audit_mark()
    cluster.patch(ISVC, namespace, "chat", {"metadata": {"labels": {"team": "a"}}})
    assert cluster.quiet_writes(namespace, 4.0, since=mark) == [
        f"patch deployments {namespace}/chat-engine",
        f"patch services {namespace}/chat-engine",
        f"patch poddisruptionbudgets {namespace}/chat-engine",
        f"patch services {namespace}/chat",
    ]


def test_observed_generation_is_the_inference_service_generation(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace))
    eventually(lambda: status(cluster, namespace, "chat").get("observedGeneration") == 1)
    converged(cluster, namespace)

    # A label is metadata: the InferenceService stays at generation 1, while the Deployment's
    # pod template changes and the Deployment controller observes its generation 2.
    cluster.patch(ISVC, namespace, "chat", {"metadata": {"labels": {"team": "a"}}})
    eventually(
        lambda: (
            cluster.stored(DEPLOYMENT, namespace, "chat-engine")["status"].get("observedGeneration")
            == 2
        )
    )
    converged(cluster, namespace)
    stored = cluster.stored(ISVC, namespace, "chat")
    assert (stored["metadata"]["generation"], stored["status"]["observedGeneration"]) == (1, 1)

    cluster.patch(ISVC, namespace, "chat", {"spec": {"engine": {"minReplicas": 2}}})

    eventually(lambda: status(cluster, namespace, "chat").get("observedGeneration") == 2)
    assert cluster.stored(ISVC, namespace, "chat")["metadata"]["generation"] == 2


def test_a_router_in_multinode_fails_its_component_with_a_log_line_a_condition_and_an_event(
    cluster, namespace, operator
):
    router = {"annotations": {"ome.io/deploymentMode": "MultiNode"}, "runner": {"image": "r:1"}}
    seed(cluster, namespace, isvc(namespace, router=router))

    records = eventually(
        lambda: [
            r
            for r in operator.records()
            if r.get("message") == "Failed to reconcile component"
            and r.get("namespace") == namespace
        ]
    )
    assert records[0]["component"] == "router"
    said = "router component: invalid deployment mode for router"
    eventually(
        lambda: (
            [
                (e["type"], e["reason"], e["message"])
                for e in cluster.list("v1/events", namespace)
                if e["involvedObject"]["kind"] == "InferenceService"
            ]
            == [("Warning", "InvalidDeploymentMode", said)]
        )
    )

    def told() -> bool:
        # The pass posts its events before it writes the status: wait for the status too.
        conditions = {c["type"]: c for c in status(cluster, namespace, "chat")["conditions"]}
        got = [
            (conditions[kind]["status"], conditions[kind]["reason"], conditions[kind]["message"])
            for kind in ("RouterReady", "Ready")
        ]
        assert got == [("False", "InvalidDeploymentMode", said)] * 2, got
        return True

    eventually(told)
