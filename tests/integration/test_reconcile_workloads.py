"""The real operator against the emulator: the workloads each mode gets (S3, S5), their
ownership (S5.1.2), mode changes (S3.6) and orphan cleanup (S3.7)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.core.reconciling.plans import DEFAULT_AUTOSCALER
from tests.integration.observing import (
    DEPLOYMENT,
    HPA,
    ISVC,
    LWS,
    MODEL_STORAGE,
    PDB,
    REPLICA,
    RUNNER,
    SERVICE,
    make_available,
    make_pods_ready,
    owned_objects,
    patch,
    seed,
    settle,
    status_of,
    stored,
    without_times,
)
from tests.support.kube_access import apply_object, eventually

MODE = "ome.io/deploymentMode"
PORTS = [{"name": "http1", "port": 8080, "targetPort": 8080, "protocol": "TCP"}]
OMENATIVE_SELECTOR = {
    "component": "engine",
    "ome.io/inferenceservice": "chat",
    "ome.io/managed-by": "OMENative",
}
WORKER = {"name": "ome-container", "image": "vllm:1"}
MULTINODE = {
    "annotations": {MODE: "MultiNode"},
    "leader": {"runner": RUNNER},
    "worker": {"size": 2, "runner": WORKER},
}
ENGINE_HPA = ("HorizontalPodAutoscaler", "chat-engine")


def owner(created: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "name": created["metadata"]["name"],
        "uid": created["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


async def start(kube, operator, isvc: dict[str, Any], **engine_config: Any) -> dict[str, Any]:
    """Seed the runtime ``vllm`` (runner + ``engine_config``) and model ``llama``, then create
    the InferenceService and wait for its first status."""
    runtime = runtime_manifest("vllm", engineConfig={"runner": RUNNER, **engine_config})
    await seed(kube, operator, runtime, model_manifest("llama", storage=MODEL_STORAGE))
    created = await apply_object(kube, isvc)
    name, namespace = created["metadata"]["name"], created["metadata"]["namespace"]
    await eventually(lambda: status_of(kube, name, namespace).get("components"))
    return created  # the status is written last: every object of the pass is there


async def test_raw_deployment_objects_are_owned_by_the_inference_service(kube, operator):
    created = await start(kube, operator, isvc_manifest("chat"))

    assert owned_objects(kube) == {
        ("Deployment", "chat-engine"),
        ("Service", "chat-engine"),
        ("PodDisruptionBudget", "chat-engine"),
        ENGINE_HPA,
        ("Service", "chat"),
    }
    for resource, name in [
        (DEPLOYMENT, "chat-engine"),
        (SERVICE, "chat-engine"),
        (PDB, "chat-engine"),
        (HPA, "chat-engine"),
        (SERVICE, "chat"),
    ]:
        assert stored(kube, resource, "default", name)["metadata"]["ownerReferences"] == [
            owner(created)
        ], name
    deployment = stored(kube, DEPLOYMENT, "default", "chat-engine")
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "chat-engine"}}
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["template"]["metadata"]["labels"]["app"] == "chat-engine"
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert (container["image"], container["env"]) == (
        "vllm:1",
        [{"name": "MODEL_PATH", "value": "/models/llama"}],
    )
    service = {"type": "ClusterIP", "selector": {"app": "chat-engine"}, "ports": PORTS}
    assert stored(kube, SERVICE, "default", "chat-engine")["spec"] == service
    assert stored(kube, SERVICE, "default", "chat")["spec"] == service
    assert stored(kube, PDB, "default", "chat-engine")["spec"] == {
        "maxUnavailable": 1,
        "selector": {"matchLabels": {"app": "chat-engine"}},
    }
    assert stored(kube, HPA, "default", "chat-engine")["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "chat-engine"},
        "minReplicas": 1,
        "maxReplicas": 3,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ],
    }


async def test_engine_readiness_mirrors_the_deployment_available_condition(kube, operator):
    await start(kube, operator, isvc_manifest("chat"))
    await settle(kube, operator)
    initializing = {"reason": "Initializing", "message": "engine component initializing"}
    scale_target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "chat-engine"}
    runtime = {"kind": "ClusterServingRuntime", "name": "vllm", "selection": "Selected"}
    url = "http://chat.default.svc.cluster.local:8080"

    status = status_of(kube, "chat")
    assert without_times(status.pop("conditions")) == [
        {"type": "EngineReady", "status": "False", **initializing},
        {"type": "IngressReady", "status": "True", "reason": "IngressDisabled"},
        {"type": "Ready", "status": "False", **initializing},
    ]
    assert status == {
        "url": url,
        "address": {"url": url},
        "components": {
            "engine": {
                "deploymentMode": "RawDeployment",
                "deploymentModeSource": "Default",
                "scaleTargetRef": scale_target,
                # The Deployment the pass created, as the watch shows it: no status yet.
                "autoscaler": {**DEFAULT_AUTOSCALER, "desiredReplicas": 1},
            }
        },
        "runtime": runtime,
        "observedGeneration": 1,
    }

    await make_available(kube, "default", "chat-engine")
    await eventually(lambda: status_of(kube, "chat")["components"]["engine"].get("url"))

    status = status_of(kube, "chat")
    assert without_times(status.pop("conditions")) == [
        {
            "type": "EngineReady",
            "status": "True",
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability.",
        },
        {"type": "IngressReady", "status": "True", "reason": "IngressDisabled"},
        {"type": "Ready", "status": "True"},
    ]
    assert status == {
        "url": url,
        "address": {"url": url},
        "components": {
            "engine": {
                "url": "http://chat-engine.default.svc.cluster.local:8080",
                "deploymentMode": "RawDeployment",
                "deploymentModeSource": "Default",
                "scaleTargetRef": scale_target,
                "autoscaler": {**DEFAULT_AUTOSCALER, "desiredReplicas": 1, "currentReplicas": 1},
            }
        },
        "runtime": runtime,
        "observedGeneration": 1,
    }


@pytest.mark.parametrize(
    ("engine_config", "spec", "mode", "objects"),
    [
        pytest.param(
            {},
            {},
            {"deploymentMode": "RawDeployment", "deploymentModeSource": "Default"},
            {
                ("Deployment", "chat-engine"),
                ("Service", "chat-engine"),
                ("PodDisruptionBudget", "chat-engine"),
                ENGINE_HPA,
            },
            id="without a mode anywhere the engine is a Deployment",
        ),
        pytest.param(
            MULTINODE,
            {},
            {"deploymentMode": "MultiNode", "deploymentModeSource": "ComponentAnnotation"},
            {("LeaderWorkerSet", "lws-chat-engine"), ("Service", "chat-engine"), ENGINE_HPA},
            id="a MultiNode runtime engine is a LeaderWorkerSet with no PDB",
        ),
        pytest.param(
            {},
            {"deploymentMode": "OMENative"},
            {"deploymentMode": "OMENative", "deploymentModeSource": "ServiceSpec"},
            {
                ("InferenceReplica", "chat-engine"),
                ("Service", "chat-engine"),
                ("Service", "chat-engine-headless"),
                ("PodDisruptionBudget", "chat-engine"),
                ENGINE_HPA,
            },
            id="spec.deploymentMode OMENative makes the engine an InferenceReplica",
        ),
        pytest.param(
            {"leader": {"runner": RUNNER}, "worker": {"size": 1, "runner": WORKER}},
            {},
            {"deploymentMode": "OMENative", "deploymentModeSource": "LeaderWorkerShape"},
            {
                ("InferenceReplica", "chat-engine"),
                ("Service", "chat-engine"),
                ("Service", "chat-engine-headless"),
                ("PodDisruptionBudget", "chat-engine"),
                ENGINE_HPA,
            },
            id="a leader and worker without a mode make the engine OMENative",
        ),
        pytest.param(
            MULTINODE,
            {"runtime": {"name": "vllm"}, "engine": {"annotations": {MODE: "RawDeployment"}}},
            {"deploymentMode": "RawDeployment", "deploymentModeSource": "ComponentAnnotation"},
            {
                ("Deployment", "chat-engine"),
                ("Service", "chat-engine"),
                ("PodDisruptionBudget", "chat-engine"),
                ENGINE_HPA,
            },
            id="the ISVC engine annotation beats the named runtime's MultiNode",
        ),
    ],
)
async def test_the_resolved_mode_decides_the_engine_workload(
    kube, operator, engine_config, spec, mode, objects
):
    await start(kube, operator, isvc_manifest("chat", **spec), **engine_config)

    assert owned_objects(kube) == {*objects, ("Service", "chat")}
    engine = status_of(kube, "chat")["components"]["engine"]
    assert {k: engine[k] for k in ("deploymentMode", "deploymentModeSource")} == mode


async def test_multinode_engine_service_selects_only_its_own_leaders(kube, operator):
    await start(kube, operator, isvc_manifest("chat"), **MULTINODE)

    lws = stored(kube, LWS, "default", "lws-chat-engine")
    assert lws["spec"]["replicas"] == 1
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 3
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert leader["metadata"]["labels"]["app"] == "chat-engine"
    service = {
        "type": "ClusterIP",
        "selector": {
            "leaderworkerset.sigs.k8s.io/name": "lws-chat-engine",
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
        },
        "ports": PORTS,
    }
    assert stored(kube, SERVICE, "default", "chat-engine")["spec"] == service
    assert stored(kube, SERVICE, "default", "chat")["spec"] == service
    await settle(kube, operator)
    assert status_of(kube, "chat")["components"] == {
        "engine": {
            "deploymentMode": "MultiNode",
            "deploymentModeSource": "ComponentAnnotation",
            "scaleTargetRef": {
                "apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet",
                "name": "lws-chat-engine",
            },
            # The LeaderWorkerSet the pass created, as the watch shows it: no status yet.
            "autoscaler": {**DEFAULT_AUTOSCALER, "desiredReplicas": 1},
        }
    }


async def test_omenative_engine_gets_a_replica_services_and_an_integer_budget(kube, operator):
    created = await start(
        kube, operator, isvc_manifest("chat", deploymentMode="OMENative", engine={"minReplicas": 2})
    )

    replica = stored(kube, REPLICA, "default", "chat-engine")
    assert replica["metadata"]["ownerReferences"] == [owner(created)]
    assert replica["metadata"]["annotations"] == {
        "ome.io/controller-write": "true",
        "ome.io/inferenceservice-uid": created["metadata"]["uid"],  # docs/workloads.md
        "ome.io/parent-generation": "1",
    }  # no record of the write: server-side apply keeps it (tests/cluster/test_applying.py)
    assert {k: replica["spec"][k] for k in ("component", "replicas")} == {
        "component": "engine",
        "replicas": 2,
    }
    assert stored(kube, SERVICE, "default", "chat-engine")["spec"] == {
        "type": "ClusterIP",
        "selector": OMENATIVE_SELECTOR,
        "ports": PORTS,
    }
    assert stored(kube, SERVICE, "default", "chat-engine-headless")["spec"] == {
        "type": "ClusterIP",
        "clusterIP": "None",
        "publishNotReadyAddresses": True,
        "selector": OMENATIVE_SELECTOR,
        "ports": PORTS,
    }
    assert stored(kube, PDB, "default", "chat-engine")["spec"] == {
        "minAvailable": 1,  # 2 Instances × 1 pod − the default maxUnavailable 1
        "selector": {"matchLabels": OMENATIVE_SELECTOR},
    }
    # The lifecycle mirrors the InferenceReplica's counts, once its controller wrote them.
    await eventually(lambda: status_of(kube, "chat")["components"]["engine"]["lifecycle"])
    await operator.settled()
    counts = stored(kube, REPLICA, "default", "chat-engine")["status"]
    revision = counts["currentRevision"]
    assert status_of(kube, "chat")["components"]["engine"] == {
        "deploymentMode": "OMENative",
        "deploymentModeSource": "ServiceSpec",
        "lifecycle": {
            "replicas": 2,
            "readyReplicas": 0,
            "servingReplicas": 0,
            "availableReplicas": 0,
            "updatedReplicas": 2,
            "updatedReadyReplicas": 0,
            "currentRevision": revision,
            "updateRevision": revision,
            "conditions": counts["conditions"],
        },
        "scaleTargetRef": {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "name": "chat-engine",
        },
        "autoscaler": {
            **DEFAULT_AUTOSCALER,
            "minReplicas": 2,
            "minReplicasSource": "InferenceService",
            "desiredReplicas": 2,
            "currentReplicas": 2,
        },
    }


@pytest.mark.parametrize(
    "edit",
    [
        # (A second budget field set by hand is refused by the API server's validation.)
        pytest.param({"maxUnavailable": 3}, id="a changed budget is reset"),
        pytest.param(
            {"selector": {"matchLabels": {"tier": "x"}}},
            id="an added selector key is removed: a selector is one field",
        ),
    ],
)
async def test_manual_edits_of_the_budget_are_reset(kube, operator, edit):
    await start(kube, operator, isvc_manifest("chat"))
    budget = stored(kube, PDB, "default", "chat-engine")["spec"]

    await patch(kube, PDB, "default", "chat-engine", {"spec": edit})
    await eventually(lambda: stored(kube, PDB, "default", "chat-engine")["spec"] == budget)

    assert stored(kube, PDB, "default", "chat-engine")["spec"] == {
        "maxUnavailable": 1,
        "selector": {"matchLabels": {"app": "chat-engine"}},
    }


async def test_a_mode_change_keeps_the_old_workload_and_moves_the_budget_when_ready(kube, operator):
    await start(kube, operator, isvc_manifest("chat"))
    await make_available(kube, "default", "chat-engine")
    await eventually(lambda: status_of(kube, "chat")["components"]["engine"].get("url"))
    old_budget = stored(kube, PDB, "default", "chat-engine")["spec"]

    await patch(kube, ISVC, "default", "chat", {"spec": {"deploymentMode": "OMENative"}})
    # The entry Service is applied last in a pass: once it switched, the PDB was decided.
    await eventually(
        lambda: stored(kube, SERVICE, "default", "chat")["spec"]["selector"] == OMENATIVE_SELECTOR
    )

    assert owned_objects(kube) == {
        ("Deployment", "chat-engine"),
        ("InferenceReplica", "chat-engine"),
        ("Service", "chat-engine"),
        ("Service", "chat-engine-headless"),
        ("PodDisruptionBudget", "chat-engine"),
        ENGINE_HPA,
        ("Service", "chat"),
    }
    assert stored(kube, HPA, "default", "chat-engine")["spec"]["scaleTargetRef"] == {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "name": "chat-engine",
    }
    assert stored(kube, SERVICE, "default", "chat-engine")["spec"]["selector"] == (
        OMENATIVE_SELECTOR
    )
    assert stored(kube, PDB, "default", "chat-engine")["spec"] == old_budget

    await make_pods_ready(kube, "default", "chat-engine-0-default-0")
    await eventually(
        lambda: (
            stored(kube, PDB, "default", "chat-engine")["spec"]["selector"]
            == {"matchLabels": OMENATIVE_SELECTOR}
        )
    )

    assert stored(kube, PDB, "default", "chat-engine")["spec"] == {
        "minAvailable": 0,  # 1 Instance × 1 pod − the default maxUnavailable 1
        "selector": {"matchLabels": OMENATIVE_SELECTOR},
    }
    assert stored(kube, DEPLOYMENT, "default", "chat-engine") is not None


async def test_removing_the_router_deletes_its_objects(kube, operator):
    router = {"runner": {**RUNNER, "image": "router:1"}}
    await start(kube, operator, isvc_manifest("chat", router=router))
    router_objects = {
        ("Deployment", "chat-router"),
        ("Service", "chat-router"),
        ("PodDisruptionBudget", "chat-router"),
        ("HorizontalPodAutoscaler", "chat-router"),
    }
    assert router_objects <= owned_objects(kube)
    assert stored(kube, SERVICE, "default", "chat")["spec"]["selector"] == {"app": "chat-router"}

    await patch(kube, ISVC, "default", "chat", {"spec": {"router": None}})
    await eventually(lambda: "router" not in status_of(kube, "chat")["components"])

    assert owned_objects(kube) == {
        ("Deployment", "chat-engine"),
        ("Service", "chat-engine"),
        ("PodDisruptionBudget", "chat-engine"),
        ENGINE_HPA,
        ("Service", "chat"),
    }
    assert stored(kube, SERVICE, "default", "chat")["spec"]["selector"] == {"app": "chat-engine"}


async def test_multinode_engine_readiness_mirrors_the_leader_worker_set(kube, operator):
    await start(kube, operator, isvc_manifest("chat"), **MULTINODE)
    available = {
        "type": "Available",
        "status": "True",
        "reason": "AllGroupsReady",
        "message": "All replicas are ready",
    }
    await patch(
        kube,
        LWS,
        "default",
        "lws-chat-engine",
        {"status": {"conditions": [available]}},
        subresource="status",
    )
    engine = await eventually(
        lambda: [
            c
            for c in status_of(kube, "chat")["conditions"]
            if c["type"] == "EngineReady" and c["status"] == "True"
        ]
    )
    assert without_times(engine) == [
        {
            "type": "EngineReady",
            "status": "True",
            "reason": "AllGroupsReady",
            "message": "All replicas are ready",
        }
    ]
