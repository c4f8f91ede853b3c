"""The model and the runtime a pass reconciles with (docs/reference/selection.md): found, or the
plan that ends the pass (a missing or disabled model, no runtime, a disabled named runtime;
docs/reference/status-and-events.md, RuntimeReady and Events)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..models import InferenceService, ModelResource, ServingRuntime
from .conditions import condition, failed_status, find_condition, merge_conditions
from .isvc_status import previous_conditions
from .plans import Decisions, Event, LogRecord, Outcome, ReconcilePlan, Snapshot
from .selection import (
    ModelSpecError,
    RuntimeDisabledError,
    RuntimeNotFoundError,
    resolve_named_runtime,
    select_runtime,
)

__all__ = [
    "MODEL_NOT_FOUND",
    "ResolvedRuntime",
    "Stop",
    "resolution_manifest",
    "resolve_model",
    "resolve_runtime",
]

#: Reason of ``Ready=False`` and of the Warning event when the referenced model is not there.
MODEL_NOT_FOUND = "ModelNotFound"
#: Models are not watched: what brings the next pass once the model is there.
MODEL_ADVICE = (
    "; models are not watched: once it is fixed, change this InferenceService (or a runtime) "
    "to reconcile it"
)

#: What resolving reads of an InferenceService (and of its components' accelerator classes
#: and modes).
_RESOLUTION_ANNOTATIONS = ("ome.io/accelerator-class", "ome.io/deploymentMode")
_RESOLUTION_SPEC = ("model", "runtime", "deploymentMode", "acceleratorSelector")
_RESOLUTION_COMPONENTS = ("engine", "decoder")


def _kept(value: Any, keys: tuple[str, ...]) -> Any:
    """A mapping's entries under ``keys``; anything else as it is (it fails to parse alike)."""
    if not isinstance(value, Mapping):
        return value
    return {k: v for k, v in value.items() if k in keys}


def resolution_manifest(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What of an InferenceService manifest the resolution of its model and runtime reads
    (``resolve_model``, ``resolve_runtime``: the accelerator classes, the modes, the named runtime
    and the model), and its ``RuntimeReady`` condition: parsed, it resolves as the whole one
    does, for a fraction of the memory of the whole parsed."""
    found = {k: v for k, v in manifest.items() if k in ("apiVersion", "kind")}
    meta = manifest.get("metadata")
    if isinstance(meta, Mapping):
        meta = {k: v for k, v in meta.items() if k in ("name", "namespace")} | {
            "annotations": _kept(meta.get("annotations") or {}, _RESOLUTION_ANNOTATIONS)
        }
    found["metadata"] = meta
    spec = manifest.get("spec")
    if isinstance(spec, Mapping):
        kept = _kept(spec, _RESOLUTION_SPEC)
        for component in _RESOLUTION_COMPONENTS:
            if component in spec:
                declared = _kept(spec[component], ("annotations", "acceleratorOverride"))
                if isinstance(declared, dict) and "annotations" in declared:
                    declared["annotations"] = _kept(
                        declared["annotations"], ("ome.io/deploymentMode",)
                    )
                kept[component] = declared
        spec = kept
    found["spec"] = spec
    status = manifest.get("status")
    if isinstance(status, Mapping) and isinstance(status.get("conditions"), list):
        ready = [
            c
            for c in status["conditions"]
            if isinstance(c, Mapping) and c.get("type") == "RuntimeReady"
        ]
        if ready:
            found["status"] = {"conditions": ready}
    return found


class Stop(Exception):
    """Ends the pass early with a finished plan."""

    def __init__(self, plan: ReconcilePlan) -> None:
        super().__init__(plan.outcome)
        self.plan = plan


@dataclass(frozen=True)
class ResolvedRuntime:
    runtime: ServingRuntime
    selection: str  # Explicit | Selected
    events: tuple[Event, ...]
    logs: tuple[LogRecord, ...]
    decisions: Decisions


def resolve_model(isvc: InferenceService, snap: Snapshot) -> ModelResource | None:
    """The referenced model, or stop (missing: ``ModelNotFound``; disabled: an event)."""
    ref = isvc.spec.model
    if ref is None:
        return None
    model = snap.models.referenced(ref, isvc.namespace)
    if model is None:
        message = _model_not_found(isvc, snap)
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
        status = failed_status(isvc.status, message, now=snap.now, reason=MODEL_NOT_FOUND)
        event = Event("Warning", MODEL_NOT_FOUND, message)
        raise Stop(ReconcilePlan(Outcome.PARKED, status=status, events=(event,), logs=(record,)))
    if model.spec.disabled:
        event = Event(
            "Warning", "ModelReconcileError", f"specified base model {ref.name} is disabled"
        )
        raise Stop(ReconcilePlan(Outcome.PARKED, events=(event,)))
    return model


def _model_not_found(isvc: InferenceService, snap: Snapshot) -> str:
    """What the author reads of a model that is not there: which, where the same name is, and
    that models are not watched (the pass comes again with a change to the InferenceService
    or a runtime)."""
    ref = isvc.spec.model
    assert ref is not None
    where = f" in namespace {isvc.namespace}" if ref.kind == "BaseModel" else ""
    message = f'{ref.kind} "{ref.name}" not found{where}'
    if ref.kind != "BaseModel" and (isvc.namespace, ref.name) in snap.models.base_models:
        message += (
            f'; a BaseModel "{ref.name}" is in namespace {isvc.namespace}: set spec.model.kind '
            "to BaseModel to use it"
        )
    elif ref.kind == "BaseModel" and ref.name in snap.models.cluster_base_models:
        message += (
            f'; a ClusterBaseModel "{ref.name}" exists: set spec.model.kind to '
            "ClusterBaseModel to use it"
        )
    return message + MODEL_ADVICE


def _runtime_not_found(
    isvc: InferenceService, snap: Snapshot, message: str, decisions: Decisions
) -> ReconcilePlan:
    """Only RuntimeReady is written, and the event decided (the controller posts it once per
    message while the condition stands: docs/reference/status-and-events.md)."""
    previous = previous_conditions(isvc)
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
    events = (Event("Warning", "RuntimeNotFound", message),)
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


def _named(isvc: InferenceService, snap: Snapshot, model: ModelResource | None) -> ResolvedRuntime:
    try:
        named = resolve_named_runtime(isvc, snap.runtimes, model.spec if model else None)
    except RuntimeNotFoundError as exc:
        raise Stop(_runtime_not_found(isvc, snap, str(exc), Decisions(named="not_found"))) from None
    except RuntimeDisabledError as exc:
        event = Event("Warning", "RuntimeValidationError", str(exc))
        raise Stop(
            ReconcilePlan(Outcome.PARKED, events=(event,), decisions=Decisions(named="disabled"))
        ) from None
    except ModelSpecError as exc:
        raise Stop(_selection_error(isvc, exc, Decisions())) from None
    events: tuple[Event, ...] = ()
    if named.advisory is not None and isvc.spec.runtime.auto_sync:
        events = (Event("Warning", "RuntimeCompatibilityAdvisory", named.advisory.event()),)
    outcome = "advisory" if named.advisory else "resolved"
    return ResolvedRuntime(named.runtime, "Explicit", events, (), Decisions(named=outcome))


def _selected(isvc: InferenceService, snap: Snapshot, model: ModelResource) -> ResolvedRuntime:
    try:
        selection = select_runtime(model.spec, model.name, isvc, snap.runtimes, isvc.namespace)
    except ModelSpecError as exc:
        raise Stop(_selection_error(isvc, exc, Decisions(selection=("error", "none")))) from None
    exclusions = selection.exclusion_checks
    chosen = selection.chosen
    if chosen is None:
        decisions = Decisions(selection=("no_runtime", "none"), exclusions=exclusions)
        raise Stop(_runtime_not_found(isvc, snap, str(selection.failure), decisions))
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
    return ResolvedRuntime(runtime, "Selected", (), (log,), decisions)


def resolve_runtime(
    isvc: InferenceService, snap: Snapshot, model: ModelResource | None
) -> ResolvedRuntime:
    if isvc.spec.runtime is not None:
        return _named(isvc, snap, model)
    if model is None:
        # The webhook denies this at admission; one that got past the webhook is logged and parked.
        record = LogRecord(
            "error",
            "at least one of spec.model or spec.runtime must be set",
            (("namespace", isvc.namespace), ("inferenceService", isvc.name)),
        )
        raise Stop(ReconcilePlan(Outcome.PARKED, logs=(record,)))
    return _selected(isvc, snap, model)
