"""One reconcile pass of an InferenceService, as a plan (S3.5–S3.7, S4, S5, S6, S8, S2.11).

``reconcile`` decides on a snapshot and returns what to write: objects to apply in order, objects
to delete, the status, events and log records, and whether to retry with backoff. The controller
applies the plan through the API; ``ome-operator render`` prints it. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from ..models import InferenceService, InvalidResourceError, ModelResource, ServingRuntime
from .conditions import (
    COMPONENT_CONDITION,
    component_condition,
    condition,
    find_condition,
    merge_conditions,
    omenative_counts,
    ready_condition,
)
from .deployment_modes import (
    DeploymentMode,
    InvalidComponentModeError,
    ResolvedMode,
    check_component_mode,
    isvc_level_mode,
    resolve_component_mode,
)
from .merging import effective_replicas, merge_component
from .model_catalog import ModelCatalog
from .operator_config import OperatorConfig
from .rendering import (
    ComponentContext,
    ComponentRenderError,
    component_service,
    component_url,
    entry_url,
    render_component,
    render_entry_service,
)
from .rendering.naming import component_name, leader_worker_set_name
from .selection import (
    ModelSpecError,
    RuntimeCatalog,
    RuntimeDisabledError,
    RuntimeNotFoundError,
    resolve_named_runtime,
    select_runtime,
)

__all__ = ["Decisions", "Event", "LogRecord", "Outcome", "ReconcilePlan", "Snapshot", "reconcile"]

_VIRTUAL_MESSAGE = "InferenceService is in VirtualDeployment mode"


@dataclass(frozen=True)
class Snapshot:
    """What one reconcile reads: runtimes and models (watch-fed), and the objects that exist in
    the InferenceService's namespace under the names it owns, keyed by (kind, name)."""

    runtimes: RuntimeCatalog
    models: ModelCatalog
    existing: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    leader_worker_set_installed: bool = True
    now: str = "1970-01-01T00:00:00Z"


@dataclass(frozen=True)
class Event:
    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True)
class LogRecord:
    level: str  # info | error
    message: str
    fields: tuple[tuple[str, Any], ...] = ()


class Outcome(StrEnum):
    SUCCESS = "success"
    ERROR = "error"  # retried with backoff
    PARKED = "parked"  # waits for a watched change


@dataclass(frozen=True)
class Decisions:
    """What the metrics record about a pass (S10)."""

    selection: tuple[str, str] | None = None  # (outcome, scope) of auto-selection
    exclusions: tuple[str, ...] = ()  # check names of excluded runtimes
    named: str | None = None  # resolved | advisory | not_found | disabled
    modes: tuple[tuple[str, str], ...] = ()  # (component, mode)
    component_errors: tuple[tuple[str, str], ...] = ()  # (component, reason)
    runtime_unresolved: bool = False


@dataclass(frozen=True)
class ReconcilePlan:
    outcome: Outcome
    apply: tuple[dict[str, Any], ...] = ()
    delete: tuple[dict[str, Any], ...] = ()
    status: dict[str, Any] | None = None  # None: write no status in this pass
    events: tuple[Event, ...] = ()
    logs: tuple[LogRecord, ...] = ()
    decisions: Decisions = Decisions()


class _Stop(Exception):
    """Ends the pass early with a finished plan."""

    def __init__(self, plan: ReconcilePlan) -> None:
        super().__init__(plan.outcome)
        self.plan = plan


@dataclass(frozen=True)
class _Runtime:
    runtime: ServingRuntime
    selection: str  # Explicit | Selected
    events: tuple[Event, ...]
    logs: tuple[LogRecord, ...]
    decisions: Decisions


def _conditions(isvc: InferenceService) -> list[dict[str, Any]]:
    return list((isvc.status or {}).get("conditions") or [])


def _virtual(isvc: InferenceService, snap: Snapshot, config: OperatorConfig) -> ReconcilePlan:
    """S3.5 / OPEN-10: nothing is created or updated; the URL and Ready are set."""
    previous = _conditions(isvc)
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


def _model(isvc: InferenceService, snap: Snapshot) -> ModelResource | None:
    """S2.14: the referenced model, or stop (missing: log only; disabled: event)."""
    ref = isvc.spec.model
    if ref is None:
        return None
    model = snap.models.referenced(ref, isvc.namespace)
    if model is None:
        record = LogRecord(
            "error",
            f"Failed to get referenced {ref.kind}",
            (
                ("namespace", isvc.namespace),
                ("inferenceService", isvc.name),
                ("model", ref.name),
                ("error", f'{ref.kind} "{ref.name}" not found'),
            ),
        )
        raise _Stop(ReconcilePlan(Outcome.PARKED, logs=(record,)))
    if model.spec.disabled:
        event = Event(
            "Warning", "ModelReconcileError", f"specified base model {ref.name} is disabled"
        )
        raise _Stop(ReconcilePlan(Outcome.PARKED, events=(event,)))
    return model


def _runtime_not_found(
    isvc: InferenceService, snap: Snapshot, message: str, decisions: Decisions
) -> ReconcilePlan:
    """S8.2 / OPEN-32: only RuntimeReady is written; the event follows its transitions."""
    previous = _conditions(isvc)
    before = find_condition(previous, "RuntimeReady")
    runtime_ready = condition(
        "RuntimeReady",
        "False",
        "RuntimeNotFound",
        message,
        severity="Info",
        previous=before,
        now=snap.now,
    )
    changed = before is None or before.get("status") != "False" or before.get("message") != message
    events = (Event("Warning", "RuntimeNotFound", message),) if changed else ()
    status = dict(isvc.status or {})
    status["conditions"] = merge_conditions(previous, [runtime_ready])
    decisions = replace(decisions, runtime_unresolved=True)
    return ReconcilePlan(Outcome.PARKED, status=status, events=events, decisions=decisions)


def _selection_error(
    isvc: InferenceService, error: Exception, decisions: Decisions
) -> ReconcilePlan:
    message = f"Failed to find runtime for model {isvc.spec.model.name}: {error}"
    return ReconcilePlan(
        Outcome.ERROR,
        events=(Event("Warning", "RuntimeSelectionError", message),),
        decisions=decisions,
    )


def _named(isvc: InferenceService, snap: Snapshot, model: ModelResource | None) -> _Runtime:
    try:
        named = resolve_named_runtime(isvc, snap.runtimes, model.spec if model else None)
    except RuntimeNotFoundError as exc:
        raise _Stop(
            _runtime_not_found(isvc, snap, str(exc), Decisions(named="not_found"))
        ) from None
    except RuntimeDisabledError as exc:
        event = Event("Warning", "RuntimeValidationError", str(exc))
        raise _Stop(
            ReconcilePlan(Outcome.PARKED, events=(event,), decisions=Decisions(named="disabled"))
        ) from None
    except ModelSpecError as exc:
        raise _Stop(_selection_error(isvc, exc, Decisions())) from None
    events: tuple[Event, ...] = ()
    if named.advisory is not None and isvc.spec.runtime.auto_sync:
        events = (Event("Warning", "RuntimeCompatibilityAdvisory", named.advisory.event()),)
    outcome = "advisory" if named.advisory else "resolved"
    return _Runtime(named.runtime, "Explicit", events, (), Decisions(named=outcome))


def _selected(isvc: InferenceService, snap: Snapshot, model: ModelResource) -> _Runtime:
    try:
        selection = select_runtime(model.spec, model.name, isvc, snap.runtimes, isvc.namespace)
    except ModelSpecError as exc:
        raise _Stop(_selection_error(isvc, exc, Decisions(selection=("error", "none")))) from None
    exclusions = tuple(v.exclusion.check for v in selection.verdicts if v.exclusion)
    chosen = selection.chosen
    if chosen is None:
        decisions = Decisions(selection=("no_runtime", "none"), exclusions=exclusions)
        raise _Stop(_runtime_not_found(isvc, snap, str(selection.failure), decisions))
    runtime = chosen.runtime
    scope = "cluster" if runtime.is_cluster else "namespaced"
    log = LogRecord(
        "info",
        "Selected runtime",
        (
            ("namespace", isvc.namespace),
            ("inferenceService", isvc.name),
            ("runtime", runtime.name),
            ("score", chosen.score),
            ("isCluster", runtime.is_cluster),
        ),
    )
    decisions = Decisions(selection=("selected", scope), exclusions=exclusions)
    return _Runtime(runtime, "Selected", (), (log,), decisions)


def _resolve_runtime(
    isvc: InferenceService, snap: Snapshot, model: ModelResource | None
) -> _Runtime:
    if isvc.spec.runtime is not None:
        return _named(isvc, snap, model)
    if model is None:
        # S7.2.1 denies this at admission; one that got past the webhook is logged and parked.
        record = LogRecord(
            "error",
            "at least one of spec.model or spec.runtime must be set",
            (("namespace", isvc.namespace), ("inferenceService", isvc.name)),
        )
        raise _Stop(ReconcilePlan(Outcome.PARKED, logs=(record,)))
    return _selected(isvc, snap, model)


class _LeaderWorkerSetMissing(ComponentRenderError):
    def __init__(self) -> None:
        super().__init__("the LeaderWorkerSet CRD (leaderworkerset.x-k8s.io/v1) is not installed")


@dataclass(frozen=True)
class _Component:
    name: str
    resolved: ResolvedMode
    context: ComponentContext
    objects: tuple[dict[str, Any], ...]


def _owned_by(obj: Mapping[str, Any], isvc: InferenceService) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(
        r.get("controller") and r.get("kind") == "InferenceService" and r.get("name") == isvc.name
        for r in refs
    )


def _component(
    isvc: InferenceService,
    name: str,
    runtime: ServingRuntime,
    model: ModelResource | None,
    snap: Snapshot,
    config: OperatorConfig,
) -> _Component:
    declared = isvc.spec.component(name)
    merged = merge_component(runtime.spec.config(name), declared, where=f"spec.{name}")
    resolved = resolve_component_mode(isvc, name, merged)
    check_component_mode(name, resolved)
    if resolved.mode is DeploymentMode.MULTI_NODE and not snap.leader_worker_set_installed:
        raise _LeaderWorkerSetMissing()
    minimum, maximum = effective_replicas(name, merged, config.replicas)
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
    )
    objects = tuple(render_component(context))
    pdb_name = component_name(isvc.name, name)
    existing = snap.existing.get(("PodDisruptionBudget", pdb_name))
    if existing is not None and not _owned_by(existing, isvc):
        raise ComponentRenderError(
            f"failed to preflight {name} PodDisruptionBudget: PodDisruptionBudget {pdb_name} "
            "exists and was not created by this InferenceService"
        )
    return _Component(name, resolved, context, objects)


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
    if isinstance(error, InvalidComponentModeError):
        return "invalid_deployment_mode"
    return "pdb" if "PodDisruptionBudget" in str(error) else "other"


def _workload_key(isvc: InferenceService, name: str, mode: DeploymentMode) -> tuple[str, str]:
    if mode is DeploymentMode.MULTI_NODE:
        return "LeaderWorkerSet", leader_worker_set_name(isvc.name, name)
    if mode is DeploymentMode.OME_NATIVE:
        return "InferenceReplica", component_name(isvc.name, name)
    return "Deployment", component_name(isvc.name, name)


#: Modes with a workload object; another mode's object left behind means a mode change (S3.6).
_WORKLOAD_MODES = (
    DeploymentMode.RAW_DEPLOYMENT,
    DeploymentMode.OME_NATIVE,
    DeploymentMode.MULTI_NODE,
)


def _desired_instances(objects: tuple[dict[str, Any], ...]) -> int:
    replica = next((o for o in objects if o["kind"] == "InferenceReplica"), {})
    return (replica.get("spec") or {}).get("replicas") or 1


def _ready(
    isvc: InferenceService, comp: _Component, snap: Snapshot, previous: list[dict[str, Any]]
) -> dict[str, Any]:
    key = _workload_key(isvc, comp.name, comp.resolved.mode)
    unavailable = (
        ((comp.context.merged.lifecycle or {}).get("updateStrategy") or {})
        .get("rollingUpdate", {})
        .get("maxUnavailable")
    )
    return component_condition(
        comp.name,
        comp.resolved.mode.value,
        snap.existing.get(key),
        desired=_desired_instances(comp.objects),
        max_unavailable=unavailable,
        previous=find_condition(previous, COMPONENT_CONDITION[comp.name]),
        now=snap.now,
    )


def _ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
    }


def _budget_moves(
    isvc: InferenceService, comp: _Component, ready: bool, snap: Snapshot
) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """S3.6: the PDB keeps protecting the old pods until the new workload is ready; without a
    mode change in flight, a PDB that differs is a manual edit, reset at once (S5.5)."""
    objects = comp.objects
    desired = next((o for o in objects if o["kind"] == "PodDisruptionBudget"), None)
    existing = snap.existing.get(("PodDisruptionBudget", component_name(isvc.name, comp.name)))
    if existing is None or not _owned_by(existing, isvc):
        return objects, ()
    same = desired is not None and (existing.get("spec") or {}).get("selector") == (
        desired["spec"].get("selector")
    )
    moving = any(
        _workload_key(isvc, comp.name, mode) in snap.existing
        for mode in _WORKLOAD_MODES
        if mode is not comp.resolved.mode
    )
    if not same and not ready and moving:
        return tuple(o for o in objects if o is not desired), ()
    return objects, (() if desired is not None else (_ref(existing),))


def _component_writes(
    isvc: InferenceService, components: list[_Component], ready: dict[str, dict], snap: Snapshot
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The reconciled components' objects to apply and budgets to delete, in component order."""
    apply: list[dict[str, Any]] = []
    delete: list[dict[str, Any]] = []
    for comp in components:
        objects, removed = _budget_moves(isvc, comp, ready[comp.name]["status"] == "True", snap)
        apply.extend(objects)
        delete.extend(removed)
    return apply, delete


def _component_status(
    isvc: InferenceService, comp: _Component, ready: bool, snap: Snapshot, config: OperatorConfig
) -> dict[str, Any]:
    name, mode = comp.name, comp.resolved.mode
    found: dict[str, Any] = {
        "deploymentMode": mode.value,
        "deploymentModeSource": comp.resolved.source.value,
    }
    if ready:
        found["url"] = component_url(isvc, name, config.cluster_domain)
    if mode is DeploymentMode.RAW_DEPLOYMENT:
        found["scaleTargetRef"] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": component_name(isvc.name, name),
        }
    if mode is DeploymentMode.OME_NATIVE:
        replica = snap.existing.get(("InferenceReplica", component_name(isvc.name, name)))
        lifecycle = omenative_counts(replica)
        conditions = ((replica or {}).get("status") or {}).get("conditions")
        if conditions:
            lifecycle["conditions"] = conditions
        found["lifecycle"] = lifecycle
        found["scaleTargetRef"] = {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "name": component_name(isvc.name, name),
        }
    return found


def _observed_generation(
    isvc: InferenceService, components: list[_Component], snap: Snapshot
) -> int | None:
    """OPEN-41: the first RawDeployment component's Deployment observedGeneration."""
    for comp in components:
        if comp.resolved.mode is DeploymentMode.RAW_DEPLOYMENT:
            deployment = snap.existing.get(("Deployment", component_name(isvc.name, comp.name)))
            return ((deployment or {}).get("status") or {}).get("observedGeneration")
    return None


def _orphans(isvc: InferenceService, snap: Snapshot) -> tuple[dict[str, Any], ...]:
    """S3.7: owned objects of a component that is no longer declared."""
    declared = set(isvc.declared_components())
    found = []
    for (_, _), obj in sorted(snap.existing.items()):
        labels = (obj.get("metadata") or {}).get("labels") or {}
        component = labels.get("component")
        if (
            component
            and component not in declared
            and _owned_by(obj, isvc)
            and labels.get("ome.io/inferenceservice") == isvc.name
        ):
            found.append(_ref(obj))
    return tuple(found)


def _status(
    isvc: InferenceService,
    components: list[_Component],
    ready: dict[str, dict],
    chosen: _Runtime,
    snap: Snapshot,
    config: OperatorConfig,
) -> dict[str, Any]:
    previous = _conditions(isvc)
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
                "kind": chosen.runtime.kind,
                "name": chosen.runtime.name,
                "selection": chosen.selection,
            },
        }
    )
    generation = _observed_generation(isvc, components, snap)
    status.pop("observedGeneration", None)
    if generation is not None:
        status["observedGeneration"] = generation
    return status


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
    model = _model(isvc, snap)
    chosen = _resolve_runtime(isvc, snap, model)
    previous = _conditions(isvc)
    components: list[_Component] = []
    for name in isvc.declared_components():
        try:
            comp = _component(isvc, name, chosen.runtime, model, snap, config)
        except (InvalidComponentModeError, ComponentRenderError, InvalidResourceError) as exc:
            # S6: the earlier components are reconciled in full, their budget moves included.
            ready = {c.name: _ready(isvc, c, snap, previous) for c in components}
            apply, delete = _component_writes(isvc, components, ready, snap)
            decisions = replace(chosen.decisions, component_errors=((name, _error_reason(exc)),))
            return ReconcilePlan(
                Outcome.ERROR,
                apply=tuple(apply),
                delete=tuple(delete),
                logs=(*chosen.logs, _failure(isvc, name, exc)),
                decisions=decisions,
            )
        components.append(comp)
    ready = {c.name: _ready(isvc, c, snap, previous) for c in components}
    apply, delete = _component_writes(isvc, components, ready, snap)
    front = components[-1] if components[-1].name == "router" else components[0]
    apply.append(render_entry_service(isvc, component_service(front.objects)))
    delete.extend(_orphans(isvc, snap))
    decisions = replace(
        chosen.decisions, modes=tuple((c.name, c.resolved.mode.value) for c in components)
    )
    return ReconcilePlan(
        Outcome.SUCCESS,
        apply=tuple(apply),
        delete=tuple(delete),
        status=_status(isvc, components, ready, chosen, snap, config),
        events=chosen.events,
        logs=chosen.logs,
        decisions=decisions,
    )


def reconcile(isvc: InferenceService, snap: Snapshot, config: OperatorConfig) -> ReconcilePlan:
    """One pass: what to write for ``isvc`` given the snapshot (see the module docstring)."""
    if isvc_level_mode(isvc) is DeploymentMode.VIRTUAL_DEPLOYMENT:
        return _virtual(isvc, snap, config)
    try:
        return _reconcile(isvc, snap, config)
    except _Stop as stop:
        return stop.plan
