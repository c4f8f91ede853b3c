"""The rest of the status (SPEC S16.4, S5.2, S5.4.10, OPEN-41): each component's mode, source,
URL, lifecycle and scale target, the runtime used, and observedGeneration."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_runtime
from tests.core.reconciling.plans import RT, _annotated, _deployment, _isvc, _lws, _plan, _replica

RAW_TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "svc-engine"}
NATIVE_TARGET = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "name": "svc-engine"}
ENGINE_URL = "http://svc-engine.default.svc.cluster.local"
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
            _isvc(),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "scaleTargetRef": RAW_TARGET,
                }
            },
            id="a RawDeployment component has its Deployment as scale target and no URL yet",
        ),
        pytest.param(
            _isvc(),
            (RT,),
            [_deployment()],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": ENGINE_URL,
                    "scaleTargetRef": RAW_TARGET,
                }
            },
            id="the component URL appears once the component is ready",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ServiceSpec",
                    "lifecycle": {},
                    "scaleTargetRef": NATIVE_TARGET,
                }
            },
            id="an OMENative component targets its InferenceReplica and has an empty lifecycle",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            (RT,),
            [_replica(**REPLICA_STATUS)],
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
                }
            },
            id="an OMENative lifecycle mirrors the InferenceReplica's counts and conditions",
        ),
        pytest.param(
            _isvc(engine={"worker": {"size": 2}}),
            (RT,),
            [_replica(**REPLICA_STATUS)],
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
                }
            },
            id="a leader/worker shape is recorded as the mode source",
        ),
        pytest.param(
            _isvc(),
            (make_runtime("rt", engineConfig=_annotated("MultiNode")),),
            [_lws()],
            {
                "engine": {
                    "deploymentMode": "MultiNode",
                    "deploymentModeSource": "ComponentAnnotation",
                    "url": ENGINE_URL,
                }
            },
            id="a MultiNode component has no scale target; the runtime annotation is its source",
        ),
        pytest.param(
            _isvc(decoder={}, router=_annotated("OMENative"), deploymentMode="RawDeployment"),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ServiceSpec",
                    "scaleTargetRef": RAW_TARGET,
                },
                "decoder": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ServiceSpec",
                    "scaleTargetRef": {**RAW_TARGET, "name": "svc-decoder"},
                },
                "router": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ComponentAnnotation",
                    "lifecycle": {},
                    "scaleTargetRef": {**NATIVE_TARGET, "name": "svc-router"},
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
    assert _plan(isvc, runtimes, existing=existing).status["components"] == expected


@pytest.mark.parametrize(
    ("isvc", "runtimes", "expected"),
    [
        pytest.param(
            _isvc(),
            (RT,),
            {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
            id="an auto-selected ClusterServingRuntime is recorded as Selected",
        ),
        pytest.param(
            _isvc(),
            (make_runtime("local", cluster=False),),
            {"kind": "ServingRuntime", "name": "local", "selection": "Selected"},
            id="an auto-selected ServingRuntime is recorded with its kind",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            (RT,),
            {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Explicit"},
            id="a named runtime is recorded as Explicit",
        ),
        pytest.param(
            _isvc(runtime={"name": "local"}),
            (make_runtime("local", cluster=False),),
            {"kind": "ServingRuntime", "name": "local", "selection": "Explicit"},
            id="a default-kind name found as a ServingRuntime is recorded as a ServingRuntime",
        ),
    ],
)
def test_the_runtime_status(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], expected: dict[str, str]
) -> None:
    assert _plan(isvc, runtimes).status["runtime"] == expected


@pytest.mark.parametrize(
    ("isvc", "existing", "expected"),
    [
        pytest.param(
            _isvc(generation=2),
            [_deployment(observed_generation=4)],
            2,
            id="observedGeneration is the InferenceService generation, not the Deployment's",
        ),
        pytest.param(
            _isvc(generation=5, deploymentMode="OMENative", decoder=_annotated("RawDeployment")),
            [_replica(observedGeneration=9), _deployment("decoder", observed_generation=1)],
            5,
            id="every mode sets it",
        ),
        pytest.param(
            _isvc(generation=1, status={"observedGeneration": 3}),
            [],
            1,
            id="it is set before any workload exists",
        ),
        pytest.param(
            _isvc(status={"observedGeneration": 3}),
            [],
            None,
            id="a manifest without a generation removes an old value",
        ),
    ],
)
def test_the_observed_generation(
    isvc: InferenceService, existing: list[dict[str, Any]], expected: int | None
) -> None:
    assert _plan(isvc, existing=existing).status.get("observedGeneration") == expected
