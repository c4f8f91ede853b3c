"""One reconcile pass of an InferenceService, as a plan (docs/reference/: deployment-modes.md,
merging.md, workloads.md, status-and-events.md).

``reconcile`` decides on a snapshot and returns what to write: objects to apply in order, objects
to delete, the status, events and log records, and whether to retry with backoff. The controller
applies the plan through the API; ``ome-operator render`` prints it. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..models import InferenceService, InvalidResourceError, ModelResource, ServingRuntime
from ..models.object_metadata import labels_of, metadata_of
from .autoscaling import Autoscaler, decide_autoscaling
from .conditions import (
    COMPONENT_CONDITION,
    condition,
    find_condition,
    merge_conditions,
)
from .deployment_modes import (
    DeploymentMode,
    InvalidComponentModeError,
    isvc_level_mode,
)
from .isvc_status import (
    WORKLOAD_MODES,
    cause_events,
    component_ready,
    inference_service_status,
    previous_conditions,
    workload_key,
)
from .merging import component_mode, effective_replicas
from .metadata_propagation import over_bound_message
from .missing_apis import ApiMissing, KedaMissing, LwsMissing
from .operator_config import OperatorConfig
from .ownership import is_controlled_by_it, is_ours, own_writes, split_existing
from .plans import (
    Decisions,
    Event,
    LogRecord,
    Outcome,
    ReconcilePlan,
    ResolvedComponent,
    Snapshot,
)
from .pod_policy import component_denials, effective_policy
from .rendering import (
    ComponentContext,
    ComponentRenderError,
    PdbPreflightError,
    PodPolicyDenied,
    component_service,
    render_component,
    render_entry_service,
)
from .rendering.autoscalers import autoscaler_keys, created_with
from .rendering.metadata import OWNER_LABEL
from .rendering.naming import component_name
from .resolving import Stop, resolve_model, resolve_runtime

__all__ = ["Decisions", "Event", "LogRecord", "Outcome", "ReconcilePlan", "Snapshot", "reconcile"]

_VIRTUAL_MESSAGE = "InferenceService is in VirtualDeployment mode"


def _virtual(isvc: InferenceService, snap: Snapshot, config: OperatorConfig) -> ReconcilePlan:
    """VirtualDeployment: nothing is created or updated; the URL and Ready are set."""
    previous = previous_conditions(isvc)
    ready = condition(
        "Ready",
        "True",
        "VirtualDeployment",
        _VIRTUAL_MESSAGE,
        previous=find_condition(previous, "Ready"),
        now=snap.now,
    )
    status = dict(isvc.status or {})
    status["url"] = f"http://{isvc.name}.{isvc.namespace}.svc.{config.cluster_domain}"
    status["conditions"] = merge_conditions(previous, [ready])
    return ReconcilePlan(Outcome.SUCCESS, status=status)


def _told(
    isvc: InferenceService, name: str, reason: str, message: str, plan: ReconcilePlan, now: str
) -> ReconcilePlan:
    """The failed pass ``plan`` (earlier components written, the log line: docs/troubleshooting.md,
    "Some components are never written") with ``<Component>Ready=False`` and ``Ready=False`` and
    a Warning event saying why: no silent stop."""
    previous = previous_conditions(isvc)
    updates = [
        condition(kind, "False", reason, message, previous=find_condition(previous, kind), now=now)
        for kind in (COMPONENT_CONDITION[name], "Ready")
    ]
    status = {**(isvc.status or {}), "conditions": merge_conditions(previous, updates)}
    event = Event("Warning", reason, message)
    return replace(plan, status=status, events=(*plan.events, event))


def _api_missing(
    isvc: InferenceService, name: str, exc: ApiMissing, plan: ReconcilePlan, now: str
) -> ReconcilePlan:
    """Parked: the API is looked up at start, so no retry can succeed before a restart."""
    told = _told(isvc, name, exc.reason, exc.advice(name), plan, now)
    return replace(told, outcome=Outcome.PARKED)


#: The reason of a component failure whose error names none (a merged component that does not
#: parse).
_INVALID_COMPONENT = "InvalidComponentSpec"


def _failed_component(
    isvc: InferenceService,
    name: str,
    exc: Exception,
    runtime: ServingRuntime,
    plan: ReconcilePlan,
    now: str,
) -> ReconcilePlan:
    """A component that cannot be rendered says why on the InferenceService (retried with
    backoff as before)."""
    if isinstance(exc, ComponentRenderError):
        reason, message = exc.condition_reason, exc.condition_message(name, runtime.name)
    else:
        reason = (
            exc.condition_reason
            if isinstance(exc, InvalidComponentModeError)
            else _INVALID_COMPONENT
        )
        message = f"{name} component: {exc}"
    return _told(isvc, name, reason, message, plan, now)


def _component(
    isvc: InferenceService,
    name: str,
    runtime: ServingRuntime,
    model: ModelResource | None,
    snap: Snapshot,
    config: OperatorConfig,
) -> ResolvedComponent:
    declared = isvc.spec.component(name)
    policy = effective_policy(config.pod_policy, snap.namespace_labels)
    denials = component_denials(name, declared, policy) if declared is not None else ()
    if denials:  # admitted before the policy, or past the webhook: nothing is written for it
        raise PodPolicyDenied(denials)
    merged, resolved = component_mode(isvc, name, declared, runtime.spec.config(name))
    if resolved.mode is DeploymentMode.MULTI_NODE and not snap.leader_worker_set_installed:
        raise LwsMissing()
    minimum, maximum = effective_replicas(name, merged, config.replicas)
    scaling = decide_autoscaling(isvc, declared, merged, (minimum, maximum), config.keda)
    if scaling.autoscaler is Autoscaler.KEDA and not snap.keda_installed:
        raise KedaMissing(scaling.reason)
    workload = snap.existing.get(workload_key(isvc, name, resolved.mode)) or {}
    held = (workload.get("spec") or {}).get("replicas") if scaling.owns_replicas else None
    context = ComponentContext(
        isvc=isvc,
        component=name,
        declared=declared,
        merged=merged,
        mode=resolved.mode,
        runtime=runtime,
        model=model,
        min_replicas=minimum,
        max_replicas=maximum,
        cluster_domain=config.cluster_domain,
        pdb_defaults=config.pdb,
        metadata_propagation=config.metadata_propagation,
        model_volume=config.model_volumes.source_for(isvc.namespace, model),
        autoscaling=scaling,
        held_replicas=held if isinstance(held, int) else None,
    )
    objects = tuple(render_component(context))
    pdb_name = component_name(isvc.name, name)
    existing = snap.existing.get(("PodDisruptionBudget", pdb_name))
    if existing is not None and not is_ours(existing, isvc):
        raise PdbPreflightError(name, pdb_name)
    return ResolvedComponent(name, resolved, context, objects, created_with(context))


def _failure(isvc: InferenceService, name: str, error: Exception) -> LogRecord:
    return LogRecord(
        "error",
        "Failed to reconcile component",
        (
            ("component", name),
            ("namespace", isvc.namespace),
            ("inferenceService", isvc.name),
            ("error", str(error)),
        ),
    )


def _error_reason(error: Exception) -> str:
    """The ``reason`` label of a component failure, as the error's class says."""
    if isinstance(error, InvalidComponentModeError | ComponentRenderError):
        return error.metric_reason
    return "other"


def _ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = metadata_of(obj)
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
    }


def _budget_moves(
    isvc: InferenceService, comp: ResolvedComponent, ready: bool, snap: Snapshot
) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """Mode changes (docs/reference/deployment-modes.md): the PDB keeps protecting the old pods
    until the new workload is ready; without a mode change in flight, a PDB that differs is a
    manual edit, reset at once."""
    objects = comp.objects
    desired = next((o for o in objects if o["kind"] == "PodDisruptionBudget"), None)
    existing = snap.existing.get(("PodDisruptionBudget", component_name(isvc.name, comp.name)))
    if existing is None or not is_ours(existing, isvc):
        return objects, ()
    same = desired is not None and (existing.get("spec") or {}).get("selector") == (
        desired["spec"].get("selector")
    )
    moving = any(
        workload_key(isvc, comp.name, mode) in snap.existing
        for mode in WORKLOAD_MODES
        if mode is not comp.resolved.mode
    )
    if not same and not ready and moving:
        return tuple(o for o in objects if o is not desired), ()
    return objects, (() if desired is not None else (_ref(existing),))


@dataclass(frozen=True)
class _Writes:
    """The reconciled components' objects to apply (in component order), to delete, and the
    fields their workloads are created with."""

    apply: list[dict[str, Any]]
    delete: list[dict[str, Any]]
    created_with: dict[tuple[str, str], Mapping[str, Any]]


def _stale_autoscalers(
    isvc: InferenceService, comp: ResolvedComponent, snap: Snapshot
) -> list[dict[str, Any]]:
    """The component's HorizontalPodAutoscaler or ScaledObject it no longer renders (class
    changed, bounds now equal): deleted, as OME deletes the other class's object."""
    rendered = {(o["kind"], o["metadata"]["name"]) for o in comp.objects}
    return [
        _ref(found)
        for key in autoscaler_keys(isvc.name, comp.name)
        if key not in rendered
        and (found := snap.existing.get(key)) is not None
        and is_ours(found, isvc)
    ]


def _component_writes(
    isvc: InferenceService,
    components: list[ResolvedComponent],
    ready: dict[str, dict],
    snap: Snapshot,
) -> _Writes:
    writes = _Writes([], [], {})
    for comp in components:
        objects, removed = _budget_moves(isvc, comp, ready[comp.name]["status"] == "True", snap)
        writes.apply.extend(objects)
        writes.delete.extend(removed)
        writes.delete.extend(_stale_autoscalers(isvc, comp, snap))
        if comp.created_with is not None:
            key = workload_key(isvc, comp.name, comp.resolved.mode)
            writes.created_with[key] = comp.created_with
    return writes


def _orphans(isvc: InferenceService, snap: Snapshot) -> tuple[dict[str, Any], ...]:
    """Owned objects of a component that is no longer declared."""
    declared = set(isvc.declared_components())
    found = []
    for (_, _), obj in sorted(snap.existing.items()):
        labels = labels_of(obj)
        component = labels.get("component")
        if (
            component
            and component not in declared
            and is_controlled_by_it(obj, isvc)
            and labels.get(OWNER_LABEL) == isvc.name
        ):
            found.append(_ref(obj))
    return tuple(found)


def _reconcile(isvc: InferenceService, snap: Snapshot, config: OperatorConfig) -> ReconcilePlan:
    if config.problem is not None:
        record = LogRecord(
            "error",
            str(config.problem),
            (("namespace", isvc.namespace), ("inferenceService", isvc.name)),
        )
        return ReconcilePlan(Outcome.ERROR, logs=(record,))
    if isvc.spec.engine is None:
        event = Event("Warning", "DeploymentModeError", "engine component is required")
        return ReconcilePlan(Outcome.PARKED, events=(event,))
    model = resolve_model(isvc, snap)
    chosen = resolve_runtime(isvc, snap, model)
    previous = previous_conditions(isvc)
    components: list[ResolvedComponent] = []
    for name in isvc.declared_components():
        try:
            comp = _component(isvc, name, chosen.runtime, model, snap, config)
        except (InvalidComponentModeError, ComponentRenderError, InvalidResourceError) as exc:
            # A component failure: the earlier components are reconciled in full, their budget moves
            # included (docs/reference/status-and-events.md, Component failures).
            ready = {c.name: component_ready(isvc, c, snap, previous) for c in components}
            writes = _component_writes(isvc, components, ready, snap)
            decisions = replace(chosen.decisions, component_errors=((name, _error_reason(exc)),))
            failed = ReconcilePlan(
                Outcome.ERROR,
                apply=tuple(writes.apply),
                delete=tuple(writes.delete),
                created_with=writes.created_with,
                logs=(*chosen.logs, _failure(isvc, name, exc)),
                decisions=decisions,
            )
            if isinstance(exc, ApiMissing):
                return _api_missing(isvc, name, exc, failed, snap.now)
            return _failed_component(isvc, name, exc, chosen.runtime, failed, snap.now)
        components.append(comp)
    ready = {c.name: component_ready(isvc, c, snap, previous) for c in components}
    writes = _component_writes(isvc, components, ready, snap)
    apply, delete = writes.apply, writes.delete
    front = components[-1] if components[-1].name == "router" else components[0]
    propagation = config.metadata_propagation
    apply.append(render_entry_service(isvc, component_service(front.objects), propagation))
    delete.extend(_orphans(isvc, snap))
    decisions = replace(
        chosen.decisions, modes=tuple((c.name, c.resolved.mode.value) for c in components)
    )
    return ReconcilePlan(
        Outcome.SUCCESS,
        apply=tuple(apply),
        delete=tuple(delete),
        status=inference_service_status(
            isvc, components, ready, chosen.runtime, chosen.selection, snap, config
        ),
        events=(*chosen.events, *cause_events(ready, previous), *_not_copied(isvc, config)),
        logs=chosen.logs,
        decisions=decisions,
        created_with=writes.created_with,
    )


#: Reason of the Warning event of an InferenceService over the bound of copied metadata.
METADATA_NOT_COPIED = "MetadataNotCopied"


def _not_copied(isvc: InferenceService, config: OperatorConfig) -> tuple[Event, ...]:
    """An InferenceService stored over the bound (admitted before it, or past the webhook) has
    none of its labels and annotations copied, and is told so (docs/configuration.md)."""
    problem = over_bound_message(isvc, config.metadata_propagation)
    if not problem:
        return ()
    return (Event("Warning", METADATA_NOT_COPIED, f"labels and annotations not copied: {problem}"),)


def reconcile(isvc: InferenceService, snap: Snapshot) -> ReconcilePlan:
    """One pass: what to write for ``isvc`` given the snapshot (see the module docstring)."""
    config = snap.config
    if isvc.metadata.deletion_timestamp is not None:
        # Being deleted: the garbage collector removes (or, for --cascade=orphan, releases) the
        # owned objects; writing anything now would re-create or re-adopt them.
        return ReconcilePlan(Outcome.PARKED)
    if isvc_level_mode(isvc) is DeploymentMode.VIRTUAL_DEPLOYMENT:
        return _virtual(isvc, snap, config)
    ours, foreign = split_existing(isvc, snap.existing)
    try:
        plan = _reconcile(isvc, replace(snap, existing=ours), config)
    except Stop as stop:
        plan = stop.plan
    return own_writes(isvc, plan, foreign, now=snap.now)
