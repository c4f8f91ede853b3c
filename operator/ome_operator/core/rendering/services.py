"""Component Services and the entry Service ``<isvc>`` (docs/reference/workloads.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...models import InferenceService
from ..deployment_modes import DeploymentMode
from ..metadata_propagation import MetadataPropagation
from .context import ComponentContext
from .disruption_budgets import omenative_selector
from .metadata import (
    MANAGED_BY,
    OWNER_LABEL,
    POD_ONLY_PREFIXES,
    common_labels,
    copied,
    service_annotations,
    sorted_map,
    without_prefixes,
)
from .naming import (
    ENTRY_PORT,
    app_label,
    component_name,
    headless_service_name,
    leader_worker_set_name,
    object_name,
)
from .pod_specs import serving_ports

__all__ = [
    "DEFAULT_PORT",
    "ENTRY_PORT",
    "component_service",
    "entry_component",
    "render_component_service",
    "render_entry_service",
    "render_headless_service",
    "service_ports",
    "service_selector",
]

#: The port of a Service whose runner declares none.
DEFAULT_PORT = {"name": "http1", "port": 8080, "targetPort": 8080, "protocol": "TCP"}


#: Label keys the LeaderWorkerSet controller puts on its pods.
_LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
_LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"


def service_ports(ctx: ComponentContext) -> list[dict[str, Any]]:
    """The front runner's container ports, name kept; an unnamed port among several is
    named ``port-<number>`` because a multi-port Service needs names; none → ``DEFAULT_PORT``."""
    ports = serving_ports(ctx)
    if not ports:
        return [dict(DEFAULT_PORT)]
    out = []
    for port in ports:
        number = port["containerPort"]
        name = port.get("name") or (f"port-{number}" if len(ports) > 1 else None)
        entry = {"name": name} if name else {}
        entry |= {"port": number, "targetPort": number, "protocol": port.get("protocol", "TCP")}
        out.append(entry)
    return out


def service_selector(ctx: ComponentContext) -> dict[str, str]:
    """The pods the component Service sends traffic to, in the component's mode."""
    if ctx.mode is DeploymentMode.MULTI_NODE:
        # This LeaderWorkerSet's leaders only, never another one's.
        lws = leader_worker_set_name(ctx.isvc.name, ctx.component)
        return {_LWS_NAME: lws, _LWS_WORKER_INDEX: "0"}
    if ctx.mode is DeploymentMode.OME_NATIVE:
        selector = omenative_selector(ctx)
        if ctx.declared.worker is not None:
            # Leader-only when the ISVC itself declares a worker; a runtime-only worker
            # keeps the workers in the Service.
            selector["ome.io/runner"] = "leader"
        return dict(sorted(selector.items()))
    return {"app": app_label(ctx.isvc.name, ctx.component)}


def render_component_service(ctx: ComponentContext) -> dict[str, Any]:
    """Service ``<isvc>-<component>`` (ClusterIP)."""
    spec = {"type": "ClusterIP", "selector": service_selector(ctx), "ports": service_ports(ctx)}
    return _service(ctx, component_name(ctx.isvc.name, ctx.component), spec)


def render_headless_service(ctx: ComponentContext) -> dict[str, Any]:
    """OMENative Service ``<isvc>-<component>-headless``: every pod's DNS name, ready or not."""
    spec = {
        "type": "ClusterIP",
        "clusterIP": "None",
        "publishNotReadyAddresses": True,
        "selector": omenative_selector(ctx),
        "ports": service_ports(ctx),
    }
    return _service(ctx, headless_service_name(ctx.isvc.name, ctx.component), spec)


def entry_component(isvc: InferenceService) -> str:
    """The component the entry Service fronts: the router if declared, else the engine."""
    return "router" if isvc.spec.router is not None else "engine"


def component_service(objects: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The component Service among ``render_component``'s objects (the first Service)."""
    return next(obj for obj in objects if obj.get("kind") == "Service")


def render_entry_service(
    isvc: InferenceService,
    front_service: Mapping[str, Any],
    propagation: MetadataPropagation | None = None,
) -> dict[str, Any]:
    """Service ``<isvc>`` on port 8080 with the same selector as ``front_service`` (the component
    Service of ``entry_component(isvc)``), targeting that Service's first port; the
    InferenceService's labels and annotations as ``propagation`` copies them."""
    front_spec = front_service["spec"]
    target = front_spec["ports"][0]["targetPort"]
    propagation = propagation or MetadataPropagation()
    copied_annotations = copied(isvc, propagation, isvc.metadata.annotations)
    annotations = without_prefixes(copied_annotations, POD_ONLY_PREFIXES)
    labels = copied(isvc, propagation, isvc.metadata.labels)
    metadata: dict[str, Any] = {
        "name": object_name(isvc.name),
        "namespace": isvc.namespace,
        "labels": sorted_map(labels, {OWNER_LABEL: isvc.name}),
    }
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata,
        "spec": {
            "type": "ClusterIP",
            "selector": dict(front_spec["selector"]),
            "ports": [
                {"name": "http1", "port": ENTRY_PORT, "targetPort": target, "protocol": "TCP"}
            ],
        },
    }


def _service(ctx: ComponentContext, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    labels = common_labels(ctx)
    if ctx.mode is DeploymentMode.OME_NATIVE:
        labels = sorted_map(labels, MANAGED_BY)
    metadata: dict[str, Any] = {"name": name, "namespace": ctx.isvc.namespace, "labels": labels}
    if annotations := service_annotations(ctx):
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec}
