"""The rest of the status (SPEC S16.4, S5.2, S5.4.10, OPEN-41): each component's mode, source,
URL, lifecycle and scale target, the runtime used, and observedGeneration."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.reconciling.plans import DEFAULT_AUTOSCALER as HPA
from tests.core.reconciling.plans import (
    RT,
    annotated_isvc,
    deployment_of,
    isvc_of,
    lws_of,
    plan_of,
    replica_of,
)

RAW_TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "svc-engine"}
NATIVE_TARGET = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "name": "svc-engine"}
LWS_TARGET = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "name": "lws-svc-engine",
}
ENGINE_URL = "http://svc-engine.default.svc.cluster.local:8080"
REPLICA_STATUS = {
    "observedGeneration": 7,
    "replicas": 1,
    "readyReplicas": 1,
    "servingReplicas": 1,
    "availableReplicas": 1,
    "updatedReplicas": 1,
    "updatedReadyReplicas": 1,
    "currentRevision": "abcd1234",
    "updateRevision": "abcd1234",
    "conditions": [{"type": "Ready", "status": "True", "reason": "AllInstancesReady"}],
}


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing", "expected"),
    [
        pytest.param(
            isvc_of(),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "scaleTargetRef": RAW_TARGET,
                    "autoscaler": {**HPA, "desiredReplicas": 1},
                }
            },
            id="a RawDeployment component has its Deployment as scale target and no URL yet",
        ),
        pytest.param(
            isvc_of(),
            (RT,),
            [deployment_of()],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": ENGINE_URL,
                    "scaleTargetRef": RAW_TARGET,
                    "autoscaler": HPA,
                }
            },
            id="the component URL appears once the component is ready, with the Service's port",
        ),
        pytest.param(
            isvc_of(
                engine={
                    "runner": {
                        "ports": [
                            {"containerPort": 30000, "name": "http"},
                            {"containerPort": 9400, "name": "metrics"},
                        ]
                    }
                }
            ),
            (RT,),
            [deployment_of()],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": "http://svc-engine.default.svc.cluster.local:30000",
                    "scaleTargetRef": RAW_TARGET,
                    "autoscaler": HPA,
                }
            },
            id="the component URL carries the first port the component Service listens on",
        ),
        pytest.param(
            isvc_of(deploymentMode="OMENative"),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ServiceSpec",
                    "lifecycle": {},
                    "scaleTargetRef": NATIVE_TARGET,
                    "autoscaler": {**HPA, "desiredReplicas": 1},
                }
            },
            id="an OMENative component targets its InferenceReplica and has an empty lifecycle",
        ),
        pytest.param(
            isvc_of(deploymentMode="OMENative"),
            (RT,),
            [replica_of(**REPLICA_STATUS)],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ServiceSpec",
                    "url": ENGINE_URL,
                    "lifecycle": {
                        "replicas": 1,
                        "readyReplicas": 1,
                        "servingReplicas": 1,
                        "availableReplicas": 1,
                        "updatedReplicas": 1,
                        "updatedReadyReplicas": 1,
                        "currentRevision": "abcd1234",
                        "updateRevision": "abcd1234",
                        "conditions": REPLICA_STATUS["conditions"],
                    },
                    "scaleTargetRef": NATIVE_TARGET,
                    "autoscaler": {**HPA, "currentReplicas": 1},
                }
            },
            id="an OMENative lifecycle mirrors the InferenceReplica's counts and conditions",
        ),
        pytest.param(
            isvc_of(engine={"worker": {"size": 2}}),
            (RT,),
            [replica_of(**REPLICA_STATUS)],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "LeaderWorkerShape",
                    "url": ENGINE_URL,
                    "lifecycle": {
                        "replicas": 1,
                        "readyReplicas": 1,
                        "servingReplicas": 1,
                        "availableReplicas": 1,
                        "updatedReplicas": 1,
                        "updatedReadyReplicas": 1,
                        "currentRevision": "abcd1234",
                        "updateRevision": "abcd1234",
                        "conditions": REPLICA_STATUS["conditions"],
                    },
                    "scaleTargetRef": NATIVE_TARGET,
                    "autoscaler": {**HPA, "currentReplicas": 1},
                }
            },
            id="a leader/worker shape is recorded as the mode source",
        ),
        pytest.param(
            isvc_of(),
            (make_runtime("rt", engineConfig=annotated_isvc("MultiNode")),),
            [lws_of()],
            {
                "engine": {
                    "deploymentMode": "MultiNode",
                    "deploymentModeSource": "ComponentAnnotation",
                    "url": ENGINE_URL,
                    "scaleTargetRef": LWS_TARGET,
                    "autoscaler": HPA,
                }
            },
            id="a MultiNode component targets its LeaderWorkerSet; the runtime annotation is its "
            "source",
        ),
        pytest.param(
            isvc_of(decoder={}, router=annotated_isvc("OMENative"), deploymentMode="RawDeployment"),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ServiceSpec",
                    "scaleTargetRef": RAW_TARGET,
                    "autoscaler": {**HPA, "desiredReplicas": 1},
                },
                "decoder": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ServiceSpec",
                    "scaleTargetRef": {**RAW_TARGET, "name": "svc-decoder"},
                    "autoscaler": {**HPA, "desiredReplicas": 1},
                },
                "router": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ComponentAnnotation",
                    "lifecycle": {},
                    "scaleTargetRef": {**NATIVE_TARGET, "name": "svc-router"},
                    "autoscaler": {**HPA, "maxReplicas": 2, "desiredReplicas": 1},
                },
            },
            id="every declared component is reported with its own mode and source",
        ),
    ],
)
def test_the_component_status(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    existing: list[dict[str, Any]],
    expected: dict[str, Any],
) -> None:
    assert plan_of(isvc, runtimes, existing=existing).status["components"] == expected


@pytest.mark.parametrize(
    ("isvc", "runtimes", "expected"),
    [
        pytest.param(
            isvc_of(),
            (RT,),
            {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
            id="an auto-selected ClusterServingRuntime is recorded as Selected",
        ),
        pytest.param(
            isvc_of(),
            (make_runtime("local", cluster=False),),
            {"kind": "ServingRuntime", "name": "local", "selection": "Selected"},
            id="an auto-selected ServingRuntime is recorded with its kind",
        ),
        pytest.param(
            isvc_of(runtime={"name": "rt"}),
            (RT,),
            {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Explicit"},
            id="a named runtime is recorded as Explicit",
        ),
        pytest.param(
            isvc_of(runtime={"name": "local"}),
            (make_runtime("local", cluster=False),),
            {"kind": "ServingRuntime", "name": "local", "selection": "Explicit"},
            id="a default-kind name found as a ServingRuntime is recorded as a ServingRuntime",
        ),
    ],
)
def test_the_runtime_status(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], expected: dict[str, str]
) -> None:
    assert plan_of(isvc, runtimes).status["runtime"] == expected


@pytest.mark.parametrize(
    ("isvc", "existing", "expected"),
    [
        pytest.param(
            isvc_of(generation=2),
            [deployment_of(observed_generation=4)],
            2,
            id="observedGeneration is the InferenceService generation, not the Deployment's",
        ),
        pytest.param(
            isvc_of(
                generation=5, deploymentMode="OMENative", decoder=annotated_isvc("RawDeployment")
            ),
            [replica_of(observedGeneration=9), deployment_of("decoder", observed_generation=1)],
            5,
            id="every mode sets it",
        ),
        pytest.param(
            isvc_of(generation=1, status={"observedGeneration": 3}),
            [],
            1,
            id="it is set before any workload exists",
        ),
        pytest.param(
            isvc_of(status={"observedGeneration": 3}),
            [],
            None,
            id="a manifest without a generation removes an old value",
        ),
    ],
)
def test_the_observed_generation(
    isvc: InferenceService, existing: list[dict[str, Any]], expected: int | None
) -> None:
    assert plan_of(isvc, existing=existing).status.get("observedGeneration") == expected
