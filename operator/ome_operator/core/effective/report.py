"""The report of ``kubectl ome runtime effective`` (docs/reference/cli.md, runtime effective),
built from evidence by pure functions.

``Evidence`` is what collection read (``effective.collect_evidence``): the InferenceService,
the runtime snapshot, the model and the pinned ControllerRevisions, each found, missing or
unreadable. ``build_report`` turns it into a ``RuntimeEffectiveReport`` (the data classes and
the small rules it applies are in ``vocabulary``); nothing here reads or prints.
Every view that lacks what it needs is ``Unavailable`` with a reason, never an error.

ControllerRevision payloads: this operator writes no revisions, so there is no writer
contract to verify. A revision found by name whose ``data.spec`` is a mapping that parses as a
runtime spec is that spec (``Resolved``; ``disabled: true`` gives ``RevisionDisabled``); any
other payload, or a spec that cannot be merged into the declared components, is
``RevisionInvalid`` (Active REASON ``MalformedPayload``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ...models import (
    InferenceService,
    InvalidResourceError,
    ModelResource,
    RuntimeRef,
    ServingRuntime,
    ServingRuntimeSpec,
    parse,
)
from ..autoscaling import bound_sources
from ..deployment_modes import (
    InvalidComponentModeError,
    ResolvedMode,
    check_component_mode,
    resolve_component_mode,
)
from ..merging import merge_component
from ..selection import ModelSpecError, RuntimeCatalog, resolve_named_runtime, select_runtime
from .vocabulary import (
    RUNTIME_KINDS,
    SYNC_ANNOTATION,
    ComponentMode,
    Inheritance,
    PinMode,
    PinState,
    Reason,
    ReplicaBound,
    RuntimeEffectiveReport,
    RuntimeId,
    SelectionInfo,
    ServiceInfo,
    Target,
    View,
    drift_of,
    inheritance_of,
    live_relation,
    pin_mode,
    runtime_spec_hash,
    status_state,
    sync_state,
)

__all__ = [
    "Evidence",
    "Lookup",
    "build_report",
    "revision_names",
]


T = TypeVar("T")


@dataclass(frozen=True)
class Lookup(Generic[T]):
    """One read: found (``value``), missing (neither field), or failed (``error``)."""

    value: T | None = None
    error: str | None = None


@dataclass(frozen=True)
class Evidence:
    isvc: InferenceService
    #: The namespace's SRs plus every CSR; not read when the ISVC names no runtime and no model.
    runtimes: Lookup[RuntimeCatalog] = Lookup()
    model: Lookup[ModelResource] = Lookup()
    #: ControllerRevision objects (as read) by name, for the names of ``revision_names``.
    revisions: Mapping[str, Lookup[Mapping[str, Any]]] = field(default_factory=dict)


def revision_names(isvc: InferenceService) -> tuple[str, ...]:
    """The ControllerRevisions a pin needs: requested (ExplicitPin), then reported."""
    mode = pin_mode(isvc.spec.runtime)
    if mode not in ("ManagedPin", "ExplicitPin"):
        return ()
    requested = isvc.spec.runtime.revision if mode == "ExplicitPin" else None
    names = (requested, _Status.of(isvc).pinned)
    return tuple(dict.fromkeys(n for n in names if n))


@dataclass(frozen=True)
class _Status:
    """The status fields ``effective`` reads, type-checked: a malformed one is
    InvalidResourceError."""

    observed: int | None
    pinned: str | None
    token: str | None
    conditions: tuple[Mapping[str, Any], ...]

    @classmethod
    def of(cls, isvc: InferenceService) -> _Status:
        status, problems = isvc.status, []

        def typed(key: str, kind: type, expected: str) -> Any:
            value = status.get(key)
            if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
                return value
            problems.append((f"status.{key}", f"must be {expected} (got {json.dumps(value)})"))
            return None

        observed = typed("observedGeneration", int, "an integer")
        pinned = typed("pinnedRevisionName", str, "a string")
        token = typed("lastRuntimeSyncToken", str, "a string")
        conditions = typed("conditions", list, "a list") or []
        for index, condition in enumerate(conditions):
            if not isinstance(condition, Mapping):
                got = json.dumps(condition)
                problems.append((f"status.conditions[{index}]", f"must be an object (got {got})"))
        if problems:
            name = f'"{isvc.namespace}/{isvc.name}"'
            raise InvalidResourceError("InferenceService", name, tuple(problems))
        return cls(observed, pinned or None, token, tuple(conditions))


def _named_ref(isvc: InferenceService) -> RuntimeRef | None:
    ref = isvc.spec.runtime
    return ref if ref is not None and ref.name else None


def _declared_id(isvc: InferenceService, ref: RuntimeRef) -> RuntimeId | None:
    if ref.kind == "ClusterServingRuntime":
        return RuntimeId(ref.kind, ref.name)
    if ref.kind == "ServingRuntime":
        return RuntimeId(ref.kind, ref.name, isvc.namespace)
    return None


def _components(isvc: InferenceService, spec: ServingRuntimeSpec) -> tuple[ComponentMode, ...]:
    """The mode of each declared component, after merging the view's runtime config
    (docs/reference/deployment-modes.md, Resolution)."""
    modes = []
    for component in isvc.declared_components():
        merged = merge_component(
            spec.config(component), isvc.spec.component(component), where=component
        )
        resolved = resolve_component_mode(isvc, component, merged)
        sources = bound_sources(isvc.spec.component(component), merged)
        low = None if sources[0] == "configuration" else merged.min_replicas
        high = None if sources[1] == "configuration" else merged.max_replicas
        bounds = ReplicaBound(low, sources[0]), ReplicaBound(high, sources[1])
        modes.append(ComponentMode(component, resolved.mode, resolved.source, *bounds))
    return tuple(modes)


def _available(
    isvc: InferenceService,
    spec: ServingRuntimeSpec,
    runtime: RuntimeId | None,
    revision: str | None = None,
) -> View:
    return View(
        "Available",
        runtime=runtime,
        revision=revision,
        full_hash=runtime_spec_hash(spec.raw()),
        components=_components(isvc, spec),
    )


@dataclass(frozen=True)
class _Live:
    view: View
    selection: SelectionInfo
    runtime: ServingRuntime | None = None  # behind an Available view
    incompatible: bool = False


def _live(evidence: Evidence) -> _Live:
    """The Live view: the named runtime, else the one auto-selection picks for the model."""
    isvc, runtimes, catalog = evidence.isvc, evidence.runtimes, evidence.runtimes.value
    candidates = len(catalog) if catalog is not None else None
    ref = _named_ref(isvc)
    if ref is None and isvc.spec.model is None:
        return _Live(View("Unavailable", "NotConfigured"), SelectionInfo("None"))
    if ref is not None:
        declared = _declared_id(isvc, ref)
        selection = SelectionInfo("Explicit", declared, candidates)
        if runtimes.error is not None or catalog is None:
            return _Live(View("Unavailable", "Unreadable", declared), selection)
        runtime = catalog.find(ref.name, ref.kind)
        if runtime is None:
            return _Live(View("Unavailable", "NotFound", declared), selection)
        found = RuntimeId.of(runtime)
        selection = SelectionInfo("Explicit", found, candidates)
        if runtime.disabled:
            return _Live(View("Unavailable", "Disabled", found), selection)
        incompatible = pin_mode(ref) == "AutoSync" and _incompatible(evidence, catalog)
        return _Live(_available(isvc, runtime.spec, found), selection, runtime, incompatible)
    selection = SelectionInfo("Selected", None, candidates)
    if runtimes.error is not None or catalog is None or evidence.model.error is not None:
        return _Live(View("Unavailable", "Unreadable"), selection)
    model = evidence.model.value
    chosen = None
    if model is not None:
        try:
            chosen = select_runtime(model.spec, model.name, isvc, catalog, isvc.namespace).chosen
        except ModelSpecError:
            chosen = None
    if chosen is None:  # no runtime qualifies (or the model is missing)
        return _Live(View("Unavailable", "NotFound"), selection)
    found = RuntimeId.of(chosen.runtime)
    selection = SelectionInfo("Selected", found, candidates)
    return _Live(_available(isvc, chosen.runtime.spec, found), selection, chosen.runtime)


def _incompatible(evidence: Evidence, catalog: RuntimeCatalog) -> bool:
    """The named runtime fails the model's pre-checks or checks 2-5 (its compatibility advisory)."""
    model = evidence.model.value
    if model is None:
        return False
    try:
        return resolve_named_runtime(evidence.isvc, catalog, model.spec).advisory is not None
    except ModelSpecError:
        return True


def _revision_spec(obj: Mapping[str, Any], name: str) -> ServingRuntimeSpec | None:
    data = obj.get("data")
    spec = data.get("spec") if isinstance(data, Mapping) else None
    if not isinstance(spec, Mapping):
        return None
    try:
        return parse(ServingRuntimeSpec, spec, kind="ControllerRevision", name=name)
    except InvalidResourceError:
        return None


def _pinned(evidence: Evidence, name: str, runtime: RuntimeId | None) -> tuple[PinState, View]:
    """The Active view a pin to revision ``name`` gives."""
    lookup = evidence.revisions.get(name, Lookup(error="not read"))

    def unavailable(state: PinState, reason: Reason) -> tuple[PinState, View]:
        return state, View("Unavailable", reason, runtime, name)

    if lookup.error is not None:
        return unavailable("Unavailable", "Unreadable")
    if lookup.value is None:
        return unavailable("RevisionMissing", "NotFound")
    spec = _revision_spec(lookup.value, name)
    if spec is None:
        return unavailable("RevisionInvalid", "MalformedPayload")
    if spec.disabled is True:
        return unavailable("RevisionDisabled", "Disabled")
    try:
        return "Resolved", _available(evidence.isvc, spec, runtime, name)
    except InvalidResourceError:  # the revision's configs do not merge into the components
        return unavailable("RevisionInvalid", "MalformedPayload")


def _active(
    evidence: Evidence, mode: PinMode, live: View, status: _Status
) -> tuple[PinState, View]:
    """The Active view and the pin state."""
    if mode == "AutoSync":
        return ("NotApplicable" if live.available else "Unavailable"), live
    if mode == "InvalidPin":
        return "InvalidIntent", View("Unavailable", "MalformedPayload", live.runtime)
    if mode == "ManagedPin":
        if status.pinned is None:
            return ("AwaitingPin" if live.available else "Unavailable"), live
        return _pinned(evidence, status.pinned, live.runtime)
    requested = evidence.isvc.spec.runtime.revision
    state, view = _pinned(evidence, requested, live.runtime)
    if state == "Resolved" and status.pinned not in (None, requested):
        state = "DesiredReportedMismatch"
    return state, view


def _invalid_components(view: View) -> list[str]:
    """Components of the view the controller cannot run in their resolved mode."""
    invalid = []
    for component in view.components:
        try:
            check_component_mode(
                component.component, ResolvedMode(component.mode, component.source)
            )
        except InvalidComponentModeError:
            invalid.append(f"InvalidComponentMode({component.component})")
    return invalid


def build_report(evidence: Evidence) -> RuntimeEffectiveReport:
    """Everything ``effective`` prints, in every output format."""
    isvc = evidence.isvc
    status = _Status.of(isvc)
    mode = pin_mode(isvc.spec.runtime)
    live = _live(evidence)
    if live.runtime is not None and evidence.runtimes.value is not None:
        inheritance = inheritance_of(live.runtime, evidence.runtimes.value)
    else:
        inheritance = Inheritance(False, live.view.reason)
    pin_state, active = _active(evidence, mode, live.view, status)
    generation = isvc.metadata.generation
    drift, cause = drift_of(status.conditions)
    freshness = status_state(generation, status.observed)

    ref = _named_ref(isvc)
    issues = []
    if ref is not None and ref.kind not in RUNTIME_KINDS:
        issues.append("InvalidDeclaredKind")
    if live.incompatible:
        issues.append("DeclaredCompatibilityMismatch")
    if not inheritance.observed:
        issues.append("InheritanceUnavailable")
    if not live.view.available:
        issues.append("LiveRuntimeUnavailable")
    if freshness != "Current":
        issues.append(f"Status{freshness}")
    if drift == "Malformed":
        issues.append("ReportedDriftConflict")
    if pin_state == "AwaitingPin":
        issues.append("ActiveRevisionUnreported")
    if mode != "AutoSync" and not active.available:
        issues.append("ActiveRevisionUnavailable")
    for name in revision_names(isvc):
        lookup = evidence.revisions.get(name)
        if lookup is not None and lookup.value is None and lookup.error is None:
            issues.append(f"RevisionNotFound({name})")
    issues.extend(_invalid_components(live.view))

    return RuntimeEffectiveReport(
        target=Target(isvc.namespace, isvc.name, isvc.metadata.uid, generation, status.observed),
        selection=live.selection,
        inheritance=inheritance,
        live=live.view,
        active=active,
        service=ServiceInfo(
            pin_mode=mode,
            pin_state=pin_state,
            sync=sync_state(isvc.metadata.annotations.get(SYNC_ANNOTATION), status.token),
            status=freshness,
            drift=drift,
            drift_cause=cause,
            live_relation=live_relation(live.view.full_hash, active.full_hash),
            issues=tuple(issues),
        ),
    )
