"""Who scales a component, within which bounds, on what (docs/autoscaling.md).

The autoscaler class comes from the annotation ``ome.io/autoscalerClass`` (the component's,
else the InferenceService's), else from ``kedaConfig.enableKeda`` (the component's, else the
InferenceService's), else it is ``hpa``, as in OME. The bounds are the effective replica bounds
(docs/reference/merging.md) as an autoscaler takes them: the minimum at least 1, the maximum at
least the minimum. Where they are equal there is nothing to scale: no autoscaler, and the
operator keeps ``replicas`` itself. ``external`` leaves ``replicas`` to someone else and makes
no object.

The HorizontalPodAutoscaler scales on one resource metric (``scaleMetric``, ``cpu`` unless
set) to a utilization target (the annotation ``ome.io/targetUtilizationPercentage``, else
``scaleTarget``, else 80). A KEDA ScaledObject has one Prometheus trigger: each setting from
the InferenceService's ``autoscaling.keda.sh/*`` annotation, else ``kedaConfig`` (the
component's, else the InferenceService's), else the ConfigMap's ``kedaConfig``, else OME's
default. Pure: the caller passes the component, its bounds and the configured defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from ..models import ComponentSpec, InferenceService, KedaConfig

__all__ = [
    "CLASSES",
    "CLASS_ANNOTATION",
    "DEFAULT_TARGET",
    "KEDA_ANNOTATIONS",
    "MAX_REPLICAS",
    "METRICS",
    "TARGET_ANNOTATION",
    "Autoscaler",
    "Autoscaling",
    "KedaConfigError",
    "KedaDefaults",
    "KedaTrigger",
    "annotation_problem",
    "bound_sources",
    "decide_autoscaling",
    "parse_keda_defaults",
    "replica_range_problem",
    "scaling_problem",
]

CLASS_ANNOTATION = "ome.io/autoscalerClass"
TARGET_ANNOTATION = "ome.io/targetUtilizationPercentage"
#: The resource metrics a HorizontalPodAutoscaler scales on.
METRICS = ("cpu", "memory")
#: Replica counts become a Deployment's, LeaderWorkerSet's or InferenceReplica's
#: ``spec.replicas``: an int32.
MAX_REPLICAS = 2**31 - 1
#: The utilization target (percent of the pods' requests) when none is set.
DEFAULT_TARGET = 80


class Autoscaler(StrEnum):
    HPA = "hpa"
    KEDA = "keda"
    EXTERNAL = "external"
    #: Nothing to scale (the bounds are equal): the operator keeps ``replicas``.
    NONE = "none"


#: The classes an InferenceService may ask for (``none`` is decided, never asked for).
CLASSES = (Autoscaler.HPA.value, Autoscaler.KEDA.value, Autoscaler.EXTERNAL.value)

#: The trigger setting each KEDA annotation overrides.
KEDA_ANNOTATIONS = {
    "threshold": "autoscaling.keda.sh/threshold",
    "operator": "autoscaling.keda.sh/operator",
    "server_address": "autoscaling.keda.sh/prometheus.serverAddress",
    "query": "autoscaling.keda.sh/prometheus.query",
}

_DEFAULT_QUERY = (
    'sum(avg_over_time(vllm:avg_generation_throughput_toks_per_s{{ome_io_inferenceservice="{0}"}}'
    "[5m]) < bool 10) * sum(rate(vllm:request_success_total"
    '{{ome_io_inferenceservice="{0}"}}[1m]) > bool 0.50)'
)


class KedaConfigError(ValueError):
    """The ConfigMap's ``kedaConfig`` cannot be used."""


@dataclass(frozen=True)
class KedaDefaults:
    """The ConfigMap's ``kedaConfig``, else OME's defaults: what a trigger asks when neither
    the InferenceService nor its component says."""

    server_address: str = "http://prometheus-operated.monitoring.svc.cluster.local:9090"
    #: A query with ``%s`` where the InferenceService's name goes; empty: OME's vLLM query.
    query: str = ""
    threshold: str = "10"
    operator: str = "LessThanOrEqual"


_DEFAULT_KEDA = KedaDefaults()
_CONFIG_FIELDS = {
    "promServerAddress": "server_address",
    "customPromQuery": "query",
    "scalingThreshold": "threshold",
    "scalingOperator": "operator",
}


def parse_keda_defaults(text: str | None) -> KedaDefaults:
    """The ConfigMap's ``kedaConfig`` JSON; absent or empty: OME's defaults. ``enableKeda``
    is read by OME and ignored here: a component's class is its own (see the module)."""
    if not text or not text.strip():
        return _DEFAULT_KEDA
    try:
        data = json.loads(text)
    except ValueError:
        raise KedaConfigError("unable to parse kedaConfig config json") from None
    if not isinstance(data, dict):
        raise KedaConfigError("unable to parse kedaConfig config json")
    values: dict[str, str] = {}
    for key, name in _CONFIG_FIELDS.items():
        value = data.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise KedaConfigError(f"invalid kedaConfig config, {key} must be a string")
        values[name] = value
    return KedaDefaults(**values)


@dataclass(frozen=True)
class KedaTrigger:
    """The Prometheus trigger of a ScaledObject."""

    server_address: str
    metric_name: str
    query: str
    threshold: str
    operator: str
    authentication_ref: tuple[str, str] | None = None  # (name, kind)
    auth_modes: str | None = None


@dataclass(frozen=True)
class Autoscaling:
    """What scales one component (``autoscaler``), and why."""

    autoscaler: Autoscaler
    #: Why this class: where it was asked for, or why there is none.
    reason: str
    min_replicas: int
    max_replicas: int
    #: Where each bound came from: ``InferenceService``, ``runtime`` or ``configuration``.
    bounds_source: tuple[str, str] = ("configuration", "configuration")
    metric: str = "cpu"
    target: int = DEFAULT_TARGET
    keda: KedaTrigger | None = field(default=None)

    @property
    def owns_replicas(self) -> bool:
        """Whether someone other than the operator sets the workload's ``replicas``."""
        return self.autoscaler is not Autoscaler.NONE


def _annotation(isvc: InferenceService, merged: ComponentSpec, key: str) -> str | None:
    found = merged.annotations.get(key)
    return found if found is not None else isvc.metadata.annotations.get(key)


def _keda_config(isvc: InferenceService, merged: ComponentSpec) -> KedaConfig:
    return merged.keda_config or isvc.spec.keda_config or KedaConfig()


def _asked(isvc: InferenceService, merged: ComponentSpec) -> tuple[Autoscaler, str]:
    asked = _annotation(isvc, merged, CLASS_ANNOTATION)
    if asked in CLASSES:
        return Autoscaler(asked), f"annotation {CLASS_ANNOTATION}: {asked}"
    if _keda_config(isvc, merged).enable_keda:
        return Autoscaler.KEDA, "kedaConfig.enableKeda: true"
    return Autoscaler.HPA, "the default autoscaler class"


def _source(own: int | None, merged: int | None, *, zero_is_unset: bool) -> str:
    """Where a bound came from: the InferenceService's component, else its runtime's config,
    else the operator configuration (``maxReplicas: 0`` is unset, ``minReplicas: 0`` is not)."""

    def is_set(value: int | None) -> bool:
        return value is not None and not (zero_is_unset and value == 0)

    if is_set(own):
        return "InferenceService"
    return "runtime" if is_set(merged) else "configuration"


def bound_sources(declared: ComponentSpec | None, merged: ComponentSpec) -> tuple[str, str]:
    """Where ``minReplicas`` and ``maxReplicas`` come from: ``InferenceService``, ``runtime``
    or ``configuration`` (the operator configuration's ``deploy.replicas``)."""
    own = declared or ComponentSpec()
    return (
        _source(own.min_replicas, merged.min_replicas, zero_is_unset=False),
        _source(own.max_replicas, merged.max_replicas, zero_is_unset=True),
    )


def _target(isvc: InferenceService, merged: ComponentSpec) -> int:
    text = _annotation(isvc, merged, TARGET_ANNOTATION)
    if text is not None and text.strip().isdigit():
        return int(text)
    return merged.scale_target if merged.scale_target is not None else DEFAULT_TARGET


def _trigger(isvc: InferenceService, merged: ComponentSpec, defaults: KedaDefaults) -> KedaTrigger:
    config = _keda_config(isvc, merged)
    annotations = isvc.metadata.annotations

    def pick(name: str, own: str | None, default: str) -> str:
        return annotations.get(KEDA_ANNOTATIONS[name]) or own or default

    template = config.custom_prom_query or defaults.query
    query = template.replace("%s", isvc.name) if template else _DEFAULT_QUERY.format(isvc.name)
    ref = config.authentication_ref
    named = ref.name if ref is not None else None
    return KedaTrigger(
        server_address=pick("server_address", config.prom_server_address, defaults.server_address),
        metric_name=merged.scale_metric or "tps",
        query=pick("query", None, query),
        threshold=pick("threshold", config.scaling_threshold, defaults.threshold),
        operator=pick("operator", config.scaling_operator, defaults.operator),
        authentication_ref=(
            (named, ref.kind or "TriggerAuthentication") if ref is not None and named else None
        ),
        auth_modes=(config.auth_modes or None) if named else None,
    )


def decide_autoscaling(
    isvc: InferenceService,
    declared: ComponentSpec | None,
    merged: ComponentSpec,
    bounds: tuple[int, int],
    keda_defaults: KedaDefaults = _DEFAULT_KEDA,
) -> Autoscaling:
    """Who scales the component whose effective bounds are ``bounds`` (see the module)."""
    low = max(bounds[0], 1)
    high = max(bounds[1], low)
    sources = bound_sources(declared, merged)
    asked, why = _asked(isvc, merged)
    common = {"min_replicas": low, "max_replicas": high, "bounds_source": sources}
    if asked is Autoscaler.EXTERNAL:
        return Autoscaling(asked, why, **common)
    if low == high:
        reason = f"minReplicas equals maxReplicas ({low}): nothing to scale"
        return Autoscaling(Autoscaler.NONE, reason, **common)
    if asked is Autoscaler.KEDA:
        trigger = _trigger(isvc, merged, keda_defaults)
        return Autoscaling(asked, why, metric=trigger.metric_name, keda=trigger, **common)
    metric = merged.scale_metric or "cpu"
    return Autoscaling(asked, why, metric=metric, target=_target(isvc, merged), **common)


def _class_problem(place: str, annotations: Mapping[str, str]) -> str:
    asked = annotations.get(CLASS_ANNOTATION)
    if asked is None or asked in CLASSES:
        return ""
    return f'{place}[{CLASS_ANNOTATION}] must be one of {", ".join(CLASSES)} (got "{asked}")'


def _target_problem(place: str, annotations: Mapping[str, str]) -> str:
    text = annotations.get(TARGET_ANNOTATION)
    if text is None or (text.isdigit() and 1 <= int(text) <= 100):
        return ""
    return f'{place}[{TARGET_ANNOTATION}] must be an integer from 1 to 100 (got "{text}")'


def annotation_problem(place: str, annotations: Mapping[str, str]) -> str:
    """Why the autoscaling annotations at ``place`` (``metadata.annotations``,
    ``spec.engine.annotations``...) cannot be used; "" when they can."""
    return _class_problem(place, annotations) or _target_problem(place, annotations)


def scaling_problem(place: str, spec: ComponentSpec) -> str:
    """Why the autoscaling fields of the component at ``place`` (``spec.engine``,
    ``spec.engineConfig``...) cannot be used; "" when they can."""
    if spec.scale_target is not None and not 1 <= spec.scale_target <= 100:
        return f"{place}.scaleTarget must be from 1 to 100 (got {spec.scale_target})"
    if spec.scale_metric is not None and spec.scale_metric not in METRICS:
        return (
            f'{place}.scaleMetric must be one of {", ".join(METRICS)} (got "{spec.scale_metric}")'
        )
    return annotation_problem(f"{place}.annotations", spec.annotations)


def replica_range_problem(place: str, spec: ComponentSpec) -> str:
    """Why ``spec``'s replica bounds or autoscaling fields cannot be written (``place``:
    ``spec.engine``, ...); "" when they can. ``maxReplicas: 0`` is unset."""
    for bound, value in (("minReplicas", spec.min_replicas), ("maxReplicas", spec.max_replicas)):
        if value is not None and not 0 <= value <= MAX_REPLICAS:
            return f"{place}.{bound} must be from 0 to {MAX_REPLICAS} (got {value})"
    low, high = spec.min_replicas, spec.max_replicas
    if low is not None and high and low > high:
        return f"{place}.minReplicas ({low}) must not be greater than {place}.maxReplicas ({high})"
    return scaling_problem(place, spec)
