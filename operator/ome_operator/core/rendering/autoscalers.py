"""The autoscaler of a component (docs/autoscaling.md): a HorizontalPodAutoscaler
``<isvc>-<component>`` or a KEDA ScaledObject ``scaledobject-<isvc>-<component>``, aimed at
the component's workload through its scale subresource: the Deployment (RawDeployment), the
LeaderWorkerSet (MultiNode) or the InferenceReplica (OMENative, whole Instances).

Which one, within which bounds and on what is decided before rendering
(``core.autoscaling``); this module only writes it down. While either exists (or the class
is ``external``), the workload's ``replicas`` is what it is created with (``created_with``):
the operator never applies it afterwards.
"""

from __future__ import annotations

from typing import Any

from ..autoscaling import Autoscaler, Autoscaling, KedaTrigger
from ..deployment_modes import DeploymentMode
from .context import ComponentContext, scaled_by_others
from .inference_replicas import INFERENCE_REPLICA_API_VERSION
from .leader_worker_sets import LWS_API_VERSION
from .metadata import object_metadata
from .naming import component_name, leader_worker_set_name

__all__ = [
    "HPA_API_VERSION",
    "KEDA_API_VERSION",
    "autoscaler_keys",
    "created_with",
    "hpa_name",
    "render_autoscaler",
    "scale_target",
    "scaled_object_name",
]

HPA_API_VERSION = "autoscaling/v2"
KEDA_API_VERSION = "keda.sh/v1alpha1"
#: OME keeps this many characters of the component's name after ``scaledobject-``.
_SCALED_OBJECT_KEPT = 50


def hpa_name(isvc: str, component: str) -> str:
    return component_name(isvc, component)


def scaled_object_name(isvc: str, component: str) -> str:
    """``scaledobject-`` and the last 50 characters of ``<isvc>-<component>``, as OME names it."""
    return f"scaledobject-{component_name(isvc, component)[-_SCALED_OBJECT_KEPT:]}"


def autoscaler_keys(isvc: str, component: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """(kind, name) of the two objects that may scale a component."""
    return (
        ("HorizontalPodAutoscaler", hpa_name(isvc, component)),
        ("ScaledObject", scaled_object_name(isvc, component)),
    )


def scale_target(ctx: ComponentContext) -> dict[str, str]:
    """The workload an autoscaler scales, as ``scaleTargetRef`` names it."""
    isvc, component = ctx.isvc.name, ctx.component
    if ctx.mode is DeploymentMode.MULTI_NODE:
        name = leader_worker_set_name(isvc, component)
        return {"apiVersion": LWS_API_VERSION, "kind": "LeaderWorkerSet", "name": name}
    if ctx.mode is DeploymentMode.OME_NATIVE:
        name = component_name(isvc, component)
        return {
            "apiVersion": INFERENCE_REPLICA_API_VERSION,
            "kind": "InferenceReplica",
            "name": name,
        }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": component_name(isvc, component)}


def _scaler(
    ctx: ComponentContext, api_version: str, kind: str, name: str, spec: dict[str, Any]
) -> dict[str, Any]:
    """An autoscaler of the component's workload: its metadata, ``scaleTargetRef``, ``spec``."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": object_metadata(ctx, name),
        "spec": {"scaleTargetRef": scale_target(ctx), **spec},
    }


def _hpa(ctx: ComponentContext, scaling: Autoscaling) -> dict[str, Any]:
    metric = {
        "type": "Resource",
        "resource": {
            "name": scaling.metric,
            "target": {"type": "Utilization", "averageUtilization": scaling.target},
        },
    }
    spec = {
        "minReplicas": scaling.min_replicas,
        "maxReplicas": scaling.max_replicas,
        "metrics": [metric],
    }
    name = hpa_name(ctx.isvc.name, ctx.component)
    return _scaler(ctx, HPA_API_VERSION, "HorizontalPodAutoscaler", name, spec)


def _trigger(keda: KedaTrigger) -> dict[str, Any]:
    metadata = {
        "serverAddress": keda.server_address,
        "metricName": keda.metric_name,
        "query": keda.query,
        "threshold": keda.threshold,
        "operator": keda.operator,
    }
    trigger: dict[str, Any] = {"type": "prometheus", "metadata": metadata}
    if keda.authentication_ref is not None:
        name, kind = keda.authentication_ref
        trigger["authenticationRef"] = {"name": name, "kind": kind}
        if keda.auth_modes:
            metadata["authModes"] = keda.auth_modes
    return trigger


def _scaled_object(ctx: ComponentContext, scaling: Autoscaling) -> dict[str, Any]:
    assert scaling.keda is not None  # decided with the class
    spec = {
        "minReplicaCount": scaling.min_replicas,
        "maxReplicaCount": scaling.max_replicas,
        "triggers": [_trigger(scaling.keda)],
    }
    name = scaled_object_name(ctx.isvc.name, ctx.component)
    return _scaler(ctx, KEDA_API_VERSION, "ScaledObject", name, spec)


def render_autoscaler(ctx: ComponentContext) -> dict[str, Any] | None:
    """The component's HorizontalPodAutoscaler or ScaledObject; None for ``external`` and
    ``none`` (no object of the operator scales it)."""
    scaling = ctx.autoscaling
    if scaling is None:
        return None
    if scaling.autoscaler is Autoscaler.HPA:
        return _hpa(ctx, scaling)
    if scaling.autoscaler is Autoscaler.KEDA:
        return _scaled_object(ctx, scaling)
    return None


def created_with(ctx: ComponentContext) -> dict[str, Any] | None:
    """The fields the workload is created with and then left to its autoscaler: ``replicas``,
    the autoscaler's minimum (``external``: the effective minimum, at least 1), as rendered."""
    if not scaled_by_others(ctx):
        return None
    assert ctx.autoscaling is not None
    return {"spec": {"replicas": ctx.autoscaling.min_replicas}}
