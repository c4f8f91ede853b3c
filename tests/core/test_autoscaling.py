"""Who scales a component and the object that does it (docs/autoscaling.md), against OME's
HPA and KEDA reconcilers: the class (annotation, kedaConfig.enableKeda, else hpa), the bounds
(at least 1, the maximum at least the minimum; equal bounds: nothing to scale), the metric and
target, the ScaledObject's trigger settings and where each comes from, what a pass writes and
deletes, and what admission refuses."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.admission import review_inference_service, review_serving_runtime
from ome_operator.core.autoscaling import KedaConfigError, KedaDefaults, parse_keda_defaults
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.core.reconciling import Outcome
from ome_operator.core.selection import RuntimeCatalog
from tests.builders import make_runtime
from tests.core.reconciling.plans import (
    CONFIG,
    LLAMA,
    RT,
    isvc_of,
    names_of,
    owned_object,
    plan_of,
    replica_of,
)

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "svc-engine"}
LABELS = {
    "base-model-name": "llama",
    "base-model-size": "SMALL",
    "base-model-type": "Serving",
    "component": "engine",
    "fine-tuned-serving": "false",
    "ome.io/inferenceservice": "svc",
    "serving-runtime": "rt",
}
DEFAULT_QUERY = (
    'sum(avg_over_time(vllm:avg_generation_throughput_toks_per_s{ome_io_inferenceservice="svc"}'
    "[5m]) < bool 10) * sum(rate(vllm:request_success_total"
    '{ome_io_inferenceservice="svc"}[1m]) > bool 0.50)'
)


def _scaler(plan: Any) -> dict[str, Any] | None:
    found = [o for o in plan.apply if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")]
    assert len(found) <= 1
    if not found:
        return None
    obj = dict(found[0])
    meta = dict(obj["metadata"])
    meta.pop("annotations", None)  # copied as on every object, pinned by tests/core/rendering
    return {**obj, "metadata": meta}


def hpa(minimum: int, maximum: int, metric: str = "cpu", target: int = 80) -> dict[str, Any]:
    resource = {"name": metric, "target": {"type": "Utilization", "averageUtilization": target}}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "svc-engine", "namespace": "default", "labels": LABELS},
        "spec": {
            "scaleTargetRef": DEPLOYMENT,
            "minReplicas": minimum,
            "maxReplicas": maximum,
            "metrics": [{"type": "Resource", "resource": resource}],
        },
    }


def scaled_object(trigger: dict[str, Any], minimum: int = 1, maximum: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "scaledobject-svc-engine", "namespace": "default", "labels": LABELS},
        "spec": {
            "scaleTargetRef": DEPLOYMENT,
            "minReplicaCount": minimum,
            "maxReplicaCount": maximum,
            "triggers": [trigger],
        },
    }


def prometheus(**metadata: str) -> dict[str, Any]:
    base = {
        "serverAddress": "http://prometheus-operated.monitoring.svc.cluster.local:9090",
        "metricName": "tps",
        "query": DEFAULT_QUERY,
        "threshold": "10",
        "operator": "LessThanOrEqual",
    }
    return {"type": "prometheus", "metadata": {**base, **metadata}}


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(isvc_of(), hpa(1, 3), id="by default an HPA scales from 1 to the default max"),
        pytest.param(
            isvc_of(engine={"minReplicas": 2, "maxReplicas": 4}),
            hpa(2, 4),
            id="the HPA takes the component's bounds",
        ),
        pytest.param(
            isvc_of(engine={"minReplicas": 0, "maxReplicas": 4}),
            hpa(1, 4),
            id="an HPA's minimum is at least 1, as OME's",
        ),
        pytest.param(
            isvc_of(engine={"minReplicas": 2, "maxReplicas": 2}),
            None,
            id="equal bounds leave nothing to scale: no HPA",
        ),
        pytest.param(
            isvc_of(engine={"minReplicas": 0, "maxReplicas": 1}),
            None,
            id="bounds equal once the minimum is raised to 1: no HPA",
        ),
        pytest.param(
            isvc_of(engine={"maxReplicas": 4, "scaleMetric": "memory", "scaleTarget": 60}),
            hpa(1, 4, "memory", 60),
            id="scaleMetric and scaleTarget choose the metric and its target",
        ),
        pytest.param(
            isvc_of(
                annotations={"ome.io/targetUtilizationPercentage": "55"},
                engine={"maxReplicas": 4, "scaleTarget": 60},
            ),
            hpa(1, 4, target=55),
            id="the target utilization annotation wins over scaleTarget, as in OME",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/autoscalerClass": "external"}),
            None,
            id="the external class makes no autoscaler",
        ),
        pytest.param(
            isvc_of(engine={"annotations": {"ome.io/autoscalerClass": "hpa"}, "maxReplicas": 5}),
            hpa(1, 5),
            id="the component's class annotation is read too",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/autoscalerClass": "keda"}),
            scaled_object(prometheus()),
            id="the keda class makes a ScaledObject with OME's default trigger",
        ),
        pytest.param(
            isvc_of(kedaConfig={"enableKeda": True, "customPromQuery": 'sum(up{svc="%s"})'}),
            scaled_object(prometheus(query='sum(up{svc="svc"})')),
            id="kedaConfig.enableKeda asks for KEDA; %s in a custom query is the service's name",
        ),
        pytest.param(
            isvc_of(
                annotations={"autoscaling.keda.sh/threshold": "5"},
                kedaConfig={"scalingThreshold": "7", "scalingOperator": "GreaterThanOrEqual"},
                engine={
                    "kedaConfig": {
                        "enableKeda": True,
                        "promServerAddress": "http://prom.monitoring:9090",
                        "authenticationRef": {"name": "prom-auth"},
                        "authModes": "bearer",
                    },
                    "scaleMetric": "cpu",
                },
            ),
            {
                **scaled_object({}),
                "spec": {
                    **scaled_object({})["spec"],
                    "triggers": [
                        {
                            **prometheus(
                                serverAddress="http://prom.monitoring:9090",
                                metricName="cpu",
                                threshold="5",
                                operator="LessThanOrEqual",
                                authModes="bearer",
                            ),
                            "authenticationRef": {
                                "name": "prom-auth",
                                "kind": "TriggerAuthentication",
                            },
                        }
                    ],
                },
            },
            id="annotation over the component's kedaConfig over the service's; the component's "
            "kedaConfig replaces the service's whole",
        ),
    ],
)
def test_the_autoscaler_of_a_component(isvc: Any, expected: dict[str, Any] | None) -> None:
    assert _scaler(plan_of(isvc)) == expected


def test_the_configured_keda_defaults_fill_what_the_service_leaves_unset() -> None:
    config = OperatorConfig(keda=KedaDefaults(threshold="3", query="q{%s}"))
    plan = plan_of(isvc_of(annotations={"ome.io/autoscalerClass": "keda"}), config=config)
    assert _scaler(plan) == scaled_object(prometheus(threshold="3", query="q{svc}"))


def test_a_runtime_sets_the_bounds_and_the_service_the_class() -> None:
    runtime = make_runtime("rt", engineConfig={"minReplicas": 2, "maxReplicas": 6})
    plan = plan_of(isvc_of(), runtimes=(runtime,))
    assert _scaler(plan) == hpa(2, 6)
    assert plan.status["components"]["engine"]["autoscaler"] == {
        "class": "hpa",
        "reason": "the default autoscaler class",
        "minReplicas": 2,
        "maxReplicas": 6,
        "minReplicasSource": "runtime",
        "maxReplicasSource": "runtime",
        "metric": "cpu",
        "target": 80,
        "desiredReplicas": 2,
    }


@pytest.mark.parametrize(
    ("isvc", "created_with"),
    [
        pytest.param(
            isvc_of(engine={"minReplicas": 2, "maxReplicas": 4}),
            {("Deployment", "svc-engine"): {"spec": {"replicas": 2}}},
            id="a scaled workload is created with the autoscaler's minimum, then left to it",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/autoscalerClass": "external"}),
            {("Deployment", "svc-engine"): {"spec": {"replicas": 1}}},
            id="an externally scaled workload is created with the minimum, then left alone",
        ),
        pytest.param(
            isvc_of(engine={"minReplicas": 2, "maxReplicas": 2}),
            {},
            id="without an autoscaler the operator keeps replicas",
        ),
    ],
)
def test_who_keeps_the_replicas(isvc: Any, created_with: dict[Any, Any]) -> None:
    assert plan_of(isvc).created_with == created_with


@pytest.mark.parametrize(
    ("isvc", "existing", "deleted"),
    [
        pytest.param(
            isvc_of(engine={"minReplicas": 2, "maxReplicas": 2}),
            [owned_object("HorizontalPodAutoscaler", "svc-engine")],
            [("HorizontalPodAutoscaler", "svc-engine")],
            id="bounds made equal delete the HPA",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/autoscalerClass": "keda"}),
            [owned_object("HorizontalPodAutoscaler", "svc-engine")],
            [("HorizontalPodAutoscaler", "svc-engine")],
            id="switching to KEDA deletes the HPA",
        ),
        pytest.param(
            isvc_of(),
            [owned_object("ScaledObject", "scaledobject-svc-engine")],
            [("ScaledObject", "scaledobject-svc-engine")],
            id="switching to the HPA deletes the ScaledObject",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/autoscalerClass": "external"}),
            [owned_object("HorizontalPodAutoscaler", "svc-engine", owner=None)],
            [],
            id="an HPA that is not the service's own is never deleted",
        ),
    ],
)
def test_an_autoscaler_no_longer_rendered_is_deleted(
    isvc: Any, existing: list[dict[str, Any]], deleted: list[tuple[str, str]]
) -> None:
    assert names_of(plan_of(isvc, existing=existing).delete) == deleted


def test_a_keda_class_without_the_keda_api_says_what_to_install() -> None:
    isvc = isvc_of(annotations={"ome.io/autoscalerClass": "keda"})
    plan = plan_of(isvc, keda=False)
    message = (
        "engine component is scaled by KEDA (annotation ome.io/autoscalerClass: keda), which "
        "needs the ScaledObject CRD (keda.sh/v1alpha1); it is not installed: install KEDA and "
        "restart the operator, or set the annotation ome.io/autoscalerClass to hpa"
    )
    assert plan.outcome is Outcome.PARKED
    assert [(e.type, e.reason, e.message) for e in plan.events][-1] == (
        "Warning",
        "KEDANotInstalled",
        message,
    )
    engine = next(c for c in plan.status["conditions"] if c["type"] == "EngineReady")
    assert (engine["status"], engine["reason"], engine["message"]) == (
        "False",
        "KEDANotInstalled",
        message,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(None, KedaDefaults(), id="absent: OME's defaults"),
        pytest.param(
            '{"enableKeda": true, "promServerAddress": "http://p:9090", "customPromQuery": "",'
            ' "scalingThreshold": "10", "scalingOperator": "GreaterThanOrEqual"}',
            KedaDefaults(server_address="http://p:9090", operator="GreaterThanOrEqual"),
            id="OME's sample ConfigMap entry; an empty query keeps the default",
        ),
    ],
)
def test_the_configmap_keda_defaults(text: str | None, expected: KedaDefaults) -> None:
    assert parse_keda_defaults(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{", "unable to parse kedaConfig config json", id="not JSON"),
        pytest.param(
            '{"scalingThreshold": 10}',
            "invalid kedaConfig config, scalingThreshold must be a string",
            id="a threshold that is not a string",
        ),
    ],
)
def test_a_bad_configmap_keda_entry_is_refused(text: str, message: str) -> None:
    with pytest.raises(KedaConfigError) as raised:
        parse_keda_defaults(text)
    assert str(raised.value) == message


def test_the_configmap_entry_is_read_with_the_others() -> None:
    assert CONFIG.keda == KedaDefaults()


@pytest.mark.parametrize(
    ("isvc", "message"),
    [
        pytest.param(
            isvc_of(engine={"scaleTarget": 0}),
            "spec.engine.scaleTarget must be from 1 to 100 (got 0)",
            id="a target below 1 is refused",
        ),
        pytest.param(
            isvc_of(decoder={"scaleTarget": 101}),
            "spec.decoder.scaleTarget must be from 1 to 100 (got 101)",
            id="a target above 100 is refused",
        ),
        pytest.param(
            isvc_of(engine={"scaleMetric": "gpu"}),
            'spec.engine.scaleMetric must be one of cpu, memory (got "gpu")',
            id="an unknown metric is refused",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/autoscalerClass": "kpa"}),
            "metadata.annotations[ome.io/autoscalerClass] must be one of hpa, keda, external "
            '(got "kpa")',
            id="an unknown class on the service is refused",
        ),
        pytest.param(
            isvc_of(router={"annotations": {"ome.io/autoscalerClass": "none"}}),
            "spec.router.annotations[ome.io/autoscalerClass] must be one of hpa, keda, external "
            '(got "none")',
            id="an unknown class on a component is refused",
        ),
        pytest.param(
            isvc_of(annotations={"ome.io/targetUtilizationPercentage": "high"}),
            "metadata.annotations[ome.io/targetUtilizationPercentage] must be an integer from 1 "
            'to 100 (got "high")',
            id="a target annotation that is not a percentage is refused",
        ),
        pytest.param(
            isvc_of(engine={"minReplicas": 3, "maxReplicas": 2}),
            "spec.engine.minReplicas (3) must not be greater than spec.engine.maxReplicas (2)",
            id="the bounds rule of before still holds",
        ),
    ],
)
def test_admission_names_the_autoscaling_field(isvc: Any, message: str) -> None:
    verdict = review_inference_service(isvc, ModelCatalog.of([LLAMA]), RuntimeCatalog.of([RT]))
    assert (verdict.allowed, verdict.message) == (False, message)


def test_admission_refuses_a_runtime_with_a_bad_metric() -> None:
    runtime = make_runtime("rt", engineConfig={"scaleMetric": "qps"})
    verdict = review_serving_runtime(runtime, frozenset())
    assert (verdict.allowed, verdict.message) == (
        False,
        'spec.engineConfig.scaleMetric must be one of cpu, memory (got "qps")',
    )


@pytest.mark.parametrize(
    ("held", "min_available"),
    [
        pytest.param(None, 0, id="before the InferenceReplica exists: its minimum, one Instance"),
        pytest.param(3, 2, id="scaled to 3 Instances: the budget counts the pods of all three"),
    ],
)
def test_an_omenative_budget_counts_the_instances_an_autoscaler_made(
    held: int | None, min_available: int
) -> None:
    """The status's desired replicas: as created (1), else as the autoscaler set them."""
    isvc = isvc_of(deploymentMode="OMENative", engine={"maxReplicas": 4})
    existing = [] if held is None else [{**replica_of(), "spec": {"replicas": held}}]
    plan = plan_of(isvc, existing=existing)
    budget = next(o for o in plan.apply if o["kind"] == "PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == min_available
    autoscaler = plan.status["components"]["engine"]["autoscaler"]
    assert autoscaler.get("desiredReplicas") == (held or 1)
