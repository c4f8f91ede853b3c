"""The InferenceService status a successful pass writes (docs/reference/status-and-events.md,
InferenceService conditions and Status fields).

Conditions come from the workloads each component's mode runs; the rest records the decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import InferenceService, ServingRuntime
from .autoscaling import Autoscaler, Autoscaling
from .conditions import (
    COMPONENT_CONDITION,
    component_condition,
    condition,
    find_condition,
    merge_conditions,
    omenative_counts,
    ready_condition,
)
from .deployment_modes import DeploymentMode
from .operator_config import OperatorConfig
from .plans import Event, ResolvedComponent, Snapshot
from .pod_health import CAUSES, workload_cause
from .rendering import component_service, component_url, entry_url
from .rendering.autoscalers import scale_target
from .rendering.naming import component_name, leader_worker_set_name

__all__ = [
    "WORKLOAD_MODES",
    "cause_events",
    "component_ready",
    "inference_service_status",
    "previous_conditions",
    "workload_key",
]


def previous_conditions(isvc: InferenceService) -> list[dict[str, Any]]:
    """The conditions of the status last written: the entries that are maps with a string
    ``type``. A hand-edited ``status.conditions`` that is not a list of maps reads as no
    conditions, so the pass rewrites them instead of failing every time."""
    found = (isvc.status or {}).get("conditions")
    if not isinstance(found, list):
        return []
    return [c for c in found if isinstance(c, dict) and isinstance(c.get("type"), str)]


def workload_key(isvc: InferenceService, name: str, mode: DeploymentMode) -> tuple[str, str]:
    if mode is DeploymentMode.MULTI_NODE:
        return "LeaderWorkerSet", leader_worker_set_name(isvc.name, name)
    if mode is DeploymentMode.OME_NATIVE:
        return "InferenceReplica", component_name(isvc.name, name)
    return "Deployment", component_name(isvc.name, name)


#: The kinds of the workload a component's autoscaler scales.
WORKLOAD_KINDS = frozenset({"Deployment", "LeaderWorkerSet", "InferenceReplica"})

#: Modes with a workload object; another mode's object left behind means a mode change.
WORKLOAD_MODES = (
    DeploymentMode.RAW_DEPLOYMENT,
    DeploymentMode.OME_NATIVE,
    DeploymentMode.MULTI_NODE,
)


def _replicas(obj: Mapping[str, Any] | None, part: str) -> int | None:
    """``<part>.replicas`` of ``obj`` (``spec`` or ``status``), when it is an integer."""
    found = ((obj or {}).get(part) or {}).get("replicas")
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def _desired_instances(comp: ResolvedComponent, existing: Mapping[str, Any] | None) -> int:
    """The Instances wanted: as the InferenceReplica holds them when someone else scales it,
    else as rendered."""
    rendered = next((o for o in comp.objects if o["kind"] == "InferenceReplica"), None)
    held = _replicas(existing, "spec") if comp.created_with is not None else None
    return held or _replicas(rendered, "spec") or 1


def component_ready(
    isvc: InferenceService, comp: ResolvedComponent, snap: Snapshot, previous: list[dict[str, Any]]
) -> dict[str, Any]:
    key = workload_key(isvc, comp.name, comp.resolved.mode)
    unavailable = (
        ((comp.context.merged.lifecycle or {}).get("updateStrategy") or {})
        .get("rollingUpdate", {})
        .get("maxUnavailable")
    )
    mode = comp.resolved.mode
    pods = () if mode is DeploymentMode.OME_NATIVE else snap.pods.get(comp.name, ())
    return component_condition(
        comp.name,
        mode.value,
        snap.existing.get(key),
        desired=_desired_instances(comp, snap.existing.get(key)),
        max_unavailable=unavailable,
        cause=workload_cause(snap.existing.get(key), pods),
        previous=find_condition(previous, COMPONENT_CONDITION[comp.name]),
        now=snap.now,
    )


def cause_events(
    ready: dict[str, dict[str, Any]], previous: list[dict[str, Any]]
) -> tuple[Event, ...]:
    """A Warning event for each component whose condition has just taken a cause its pods
    show (a reason it did not have): one per cause, not one per pass."""
    found = []
    for name, now in ready.items():
        before = find_condition(previous, COMPONENT_CONDITION[name]) or {}
        reason = now.get("reason")
        if reason in CAUSES and before.get("reason") != reason:
            found.append(Event("Warning", reason, f"{name} component: {now.get('message', '')}"))
    return tuple(found)


def _desired_replicas(comp: ResolvedComponent, workload: Mapping[str, Any] | None) -> int | None:
    """The workload's ``spec.replicas`` once this pass is written: as the autoscaler set it,
    else as rendered (the operator keeps it, or creates the workload with it now)."""
    if comp.created_with is not None and workload is not None:
        return _replicas(workload, "spec")
    rendered = next((o for o in comp.objects if o["kind"] in WORKLOAD_KINDS), None)
    return _replicas(rendered, "spec")


def autoscaler_status(
    scaling: Autoscaling, desired: int | None, current: int | None
) -> dict[str, Any]:
    """``status.components.<c>.autoscaler`` (docs/autoscaling.md): the class and why, the
    bounds and where they came from, what it scales on, and the workload's desired replicas
    (its ``spec.replicas`` as this pass leaves it) and current ones (its ``status.replicas``)."""
    found: dict[str, Any] = {
        "class": scaling.autoscaler.value,
        "reason": scaling.reason,
        "minReplicas": scaling.min_replicas,
        "maxReplicas": scaling.max_replicas,
        "minReplicasSource": scaling.bounds_source[0],
        "maxReplicasSource": scaling.bounds_source[1],
    }
    if scaling.autoscaler is Autoscaler.HPA:
        found.update({"metric": scaling.metric, "target": scaling.target})
    elif scaling.autoscaler is Autoscaler.KEDA:
        found["metric"] = scaling.metric
    if desired is not None:
        found["desiredReplicas"] = desired
    if current is not None:
        found["currentReplicas"] = current
    return found


def _component_status(
    isvc: InferenceService,
    comp: ResolvedComponent,
    ready: bool,
    snap: Snapshot,
    config: OperatorConfig,
) -> dict[str, Any]:
    name, mode = comp.name, comp.resolved.mode
    found: dict[str, Any] = {
        "deploymentMode": mode.value,
        "deploymentModeSource": comp.resolved.source.value,
    }
    if ready:
        port = component_service(comp.objects)["spec"]["ports"][0]["port"]
        found["url"] = component_url(isvc, name, port, config.cluster_domain)
    if mode is DeploymentMode.OME_NATIVE:
        replica = snap.existing.get(("InferenceReplica", component_name(isvc.name, name)))
        lifecycle = omenative_counts(replica)
        conditions = ((replica or {}).get("status") or {}).get("conditions")
        if conditions:
            lifecycle["conditions"] = conditions
        found["lifecycle"] = lifecycle
    found["scaleTargetRef"] = scale_target(comp.context)
    scaling = comp.context.autoscaling
    if scaling is not None:
        # The replicas only while someone else scales them: a fixed count is the workload's
        # own, and a roll would rewrite the status twice for nothing.
        workload = snap.existing.get(workload_key(isvc, name, mode))
        scaled = scaling.owns_replicas
        desired = _desired_replicas(comp, workload) if scaled else None
        current = _replicas(workload, "status") if scaled else None
        found["autoscaler"] = autoscaler_status(scaling, desired, current)
    return found


def inference_service_status(
    isvc: InferenceService,
    components: list[ResolvedComponent],
    ready: dict[str, dict],
    runtime: ServingRuntime,
    selection: str,
    snap: Snapshot,
    config: OperatorConfig,
) -> dict[str, Any]:
    """The whole status of a successful pass; keys the operator does not own are kept."""
    previous = previous_conditions(isvc)
    updates = [ready[c.name] for c in components]
    updates.append(
        condition(
            "IngressReady",
            "True",
            "IngressDisabled",
            previous=find_condition(previous, "IngressReady"),
            now=snap.now,
        )
    )
    runtime_ready = find_condition(previous, "RuntimeReady")
    if runtime_ready is not None:
        updates.append(
            condition(
                "RuntimeReady",
                "True",
                "RuntimeResolved",
                severity="Info",
                previous=runtime_ready,
                now=snap.now,
            )
        )
    stale = {COMPONENT_CONDITION[c] for c in COMPONENT_CONDITION} - {
        COMPONENT_CONDITION[c.name] for c in components
    }
    kept = [c for c in previous if c.get("type") not in stale]
    updates.append(
        ready_condition(
            merge_conditions(kept, updates),
            previous=find_condition(previous, "Ready"),
            now=snap.now,
        )
    )
    status = dict(isvc.status or {})
    url = entry_url(isvc, config.cluster_domain)
    status.update(
        {
            "conditions": merge_conditions(kept, updates),
            "url": url,
            "address": {"url": url},
            "components": {
                c.name: _component_status(isvc, c, ready[c.name]["status"] == "True", snap, config)
                for c in components
            },
            "runtime": {
                "kind": runtime.kind,
                "name": runtime.name,
                "selection": selection,
            },
        }
    )
    # The generation this status was computed from (the Kubernetes convention; the Deployment's
    # own observedGeneration counts its own spec changes and can run ahead of ours).
    status.pop("observedGeneration", None)
    if isvc.metadata.generation is not None:
        status["observedGeneration"] = isvc.metadata.generation
    return status
