"""The vocabulary of ``kubectl ome runtime effective`` (docs/reference/cli.md, Vocabulary):
report data and the pure rules.

The frozen data classes a ``RuntimeEffectiveReport`` is made of, the closed ``Literal`` sets it
prints, and the small pure functions that compute one value each (a hash, the pin mode, the
SYNC, STATUS and DRIFT states, the live relation, the inheritance chain).
``report.build_report`` assembles them; nothing here reads or prints.

Hashes: sha256 of the runtime ``spec`` as canonical JSON (sorted keys, no whitespace) after the
CRD defaults (``operator: Equal``, ``weight: 1``) are applied to every ``supportedModelFormats``
entry, so a manifest and the same object read back from an API server hash alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...models import RuntimeRef, ServingRuntime
from ..deployment_modes import DeploymentMode, ModeSource
from ..selection import RuntimeCatalog

__all__ = [
    "INHERIT_ANNOTATION",
    "MAX_CHAIN",
    "RUNTIME_KINDS",
    "SYNC_ANNOTATION",
    "ComponentMode",
    "DriftState",
    "Inheritance",
    "PinMode",
    "PinState",
    "Reason",
    "Relation",
    "ReplicaBound",
    "RuntimeEffectiveReport",
    "RuntimeId",
    "SelectionInfo",
    "SelectionMode",
    "ServiceInfo",
    "StatusState",
    "SyncState",
    "Target",
    "View",
    "ViewState",
    "drift_of",
    "inheritance_of",
    "live_relation",
    "pin_mode",
    "runtime_spec_hash",
    "status_state",
    "sync_state",
]

#: The annotation a runtime names its parent with; walked for display only.
INHERIT_ANNOTATION = "ome.io/inherit-from"
#: An inheritance chain holds at most this many runtimes, the runtime itself included.
MAX_CHAIN = 5
#: The runtime sync request the SYNC row compares with ``status.lastRuntimeSyncToken``.
SYNC_ANNOTATION = "ome.io/runtime-sync"
#: The kinds ``spec.runtime.kind`` may name; any other is an invalid pin.
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
_DRIFT_CONDITION = "RuntimeDrifted"
_DRIFT_CAUSES = frozenset(
    {"RevisionMismatch", "RevisionMissing", "SourceRuntimeMissing", "RuntimeMismatch"}
)
_SHORT_HASH = 8


#: The vocabulary. Each value is printed as is; the Literal types document the closed sets.
ViewState = Literal["Available", "Unavailable"]
#: Why a view, or the inheritance chain (Cycle, MaxDepthExceeded), is unavailable.
Reason = Literal[
    "NotConfigured",
    "NotFound",
    "Disabled",
    "MalformedPayload",
    "Forbidden",
    "UnsupportedAPI",
    "Unreadable",
    "Cycle",
    "MaxDepthExceeded",
]
SelectionMode = Literal["Explicit", "Selected", "None"]
PinMode = Literal["AutoSync", "ManagedPin", "ExplicitPin", "InvalidPin"]
PinState = Literal[
    "NotApplicable",
    "AwaitingPin",
    "Resolved",
    "DesiredReportedMismatch",
    "RevisionMissing",
    "RevisionInvalid",
    "RevisionDisabled",
    "Unavailable",
    "InvalidIntent",
]
SyncState = Literal["Absent", "StatusOnly", "Acknowledged", "Pending"]
StatusState = Literal["Unobserved", "Current", "Stale", "Invalid"]
DriftState = Literal["NotReported", "ReportedTrue", "ReportedFalse", "ReportedUnknown", "Malformed"]
Relation = Literal["Equal", "Different", "Ambiguous", "Unknown"]
_DRIFT_STATES: dict[str, DriftState] = {
    "True": "ReportedTrue",
    "False": "ReportedFalse",
    "Unknown": "ReportedUnknown",
}


@dataclass(frozen=True)
class RuntimeId:
    """A runtime by kind, namespace (ServingRuntime only) and name."""

    kind: str
    name: str
    namespace: str | None = None

    @classmethod
    def of(cls, runtime: ServingRuntime) -> RuntimeId:
        if runtime.is_cluster:
            return cls("ClusterServingRuntime", runtime.name)
        return cls("ServingRuntime", runtime.name, runtime.metadata.namespace or "default")

    @property
    def short(self) -> str:
        """``CSR/<name>`` or ``SR/<namespace>/<name>`` (the table)."""
        if self.kind == "ClusterServingRuntime":
            return f"CSR/{self.name}"
        return f"SR/{self.namespace}/{self.name}"

    @property
    def full(self) -> str:
        """``ClusterServingRuntime/<name>`` or ``ServingRuntime/<namespace>/<name>`` (-o wide)."""
        if self.kind == "ClusterServingRuntime":
            return f"{self.kind}/{self.name}"
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class ReplicaBound:
    """One replica bound of a component and where it comes from (docs/autoscaling.md); no
    value when it is the operator configuration's, which this view does not read."""

    value: int | None
    source: str

    def __str__(self) -> str:
        return f"{self.source}" if self.value is None else f"{self.value} ({self.source})"


_CONFIGURED = ReplicaBound(None, "configuration")


@dataclass(frozen=True)
class ComponentMode:
    component: str
    mode: DeploymentMode
    source: ModeSource
    min_replicas: ReplicaBound = _CONFIGURED
    max_replicas: ReplicaBound = _CONFIGURED

    @property
    def replicas_set(self) -> bool:
        """Whether the InferenceService or its runtime sets a bound (else both are the
        operator configuration's)."""
        return (self.min_replicas, self.max_replicas) != (_CONFIGURED, _CONFIGURED)

    @property
    def replicas(self) -> str:
        """``min <bound>, max <bound>``: the bounds an autoscaler scales between."""
        return f"min {self.min_replicas}, max {self.max_replicas}"


@dataclass(frozen=True)
class View:
    """The Live or the Active view. Only an Available view has a hash and components."""

    state: ViewState
    reason: Reason | None = None
    runtime: RuntimeId | None = None
    revision: str | None = None
    full_hash: str | None = None
    components: tuple[ComponentMode, ...] = ()

    @property
    def hash(self) -> str | None:
        return self.full_hash[:_SHORT_HASH] if self.full_hash else None

    @property
    def available(self) -> bool:
        return self.state == "Available"


@dataclass(frozen=True)
class Target:
    namespace: str
    name: str
    uid: str | None
    generation: int | None
    observed_generation: int | None


@dataclass(frozen=True)
class SelectionInfo:
    mode: SelectionMode
    runtime: RuntimeId | None = None
    #: Runtimes in the snapshot (the namespace's SRs plus all CSRs); None when not read.
    candidates: int | None = None


@dataclass(frozen=True)
class Inheritance:
    observed: bool
    reason: Reason | None = None
    #: Root first, ending with the runtime itself; empty when unavailable.
    chain: tuple[RuntimeId, ...] = ()

    @property
    def state(self) -> str:
        return "Observed" if self.observed else "Unavailable"


@dataclass(frozen=True)
class ServiceInfo:
    pin_mode: PinMode
    pin_state: PinState
    sync: SyncState
    status: StatusState
    drift: DriftState
    drift_cause: str | None
    live_relation: Relation
    issues: tuple[str, ...]

    @property
    def drift_text(self) -> str:
        return f"{self.drift}/{self.drift_cause}" if self.drift_cause else str(self.drift)


@dataclass(frozen=True)
class RuntimeEffectiveReport:
    target: Target
    selection: SelectionInfo
    inheritance: Inheritance
    live: View
    active: View
    service: ServiceInfo


def runtime_spec_hash(spec: Mapping[str, Any]) -> str:
    """The full sha256 hex digest of a runtime spec, CRD defaults applied."""
    canonical = json.dumps(
        _with_crd_defaults(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _with_crd_defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    defaulted = dict(spec)
    entries = spec.get("supportedModelFormats")
    if isinstance(entries, list):
        defaulted["supportedModelFormats"] = [_default_entry(e) for e in entries]
    return defaulted


def _default_entry(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return entry
    defaulted = dict(entry)
    for key in ("modelFormat", "modelFramework"):
        if isinstance(entry.get(key), Mapping):
            defaulted[key] = {"operator": "Equal", "weight": 1, **entry[key]}
    return defaulted


def pin_mode(ref: RuntimeRef | None) -> PinMode:
    """The PIN mode from ``spec.runtime``."""
    if ref is None or not ref.name or ref.auto_sync:
        return "AutoSync"
    if ref.kind not in RUNTIME_KINDS:
        return "InvalidPin"
    return "ExplicitPin" if ref.revision else "ManagedPin"


def sync_state(annotation: str | None, token: str | None) -> SyncState:
    """SYNC: the ``ome.io/runtime-sync`` annotation against the status token."""
    if not annotation:
        return "StatusOnly" if token else "Absent"
    return "Acknowledged" if annotation == token else "Pending"


def status_state(generation: int | None, observed: int | None) -> StatusState:
    """STATUS; 0 is unset, as the API omits it."""
    if not observed:
        return "Unobserved"
    if observed == (generation or 0):
        return "Current"
    return "Stale" if observed < (generation or 0) else "Invalid"


def drift_of(conditions: Sequence[Mapping[str, Any]]) -> tuple[DriftState, str | None]:
    """The DRIFT state and cause from the ``RuntimeDrifted`` condition(s)."""
    found = [c for c in conditions if c.get("type") == _DRIFT_CONDITION]
    if not found:
        return "NotReported", None
    if len(found) > 1:
        return "Malformed", None
    condition = found[0]
    reason = condition.get("reason")
    cause = reason if reason in _DRIFT_CAUSES else "Other"
    status = condition.get("status")
    return _DRIFT_STATES.get(status if isinstance(status, str) else "", "Malformed"), cause


def live_relation(live_hash: str | None, active_hash: str | None) -> Relation:
    """LIVE-RELATION between two full hashes."""
    if not live_hash or not active_hash:
        return "Unknown"
    if live_hash == active_hash:
        return "Equal"
    if live_hash[:_SHORT_HASH] == active_hash[:_SHORT_HASH]:
        return "Ambiguous"
    return "Different"


def inheritance_of(runtime: ServingRuntime, catalog: RuntimeCatalog) -> Inheritance:
    """Walk ``ome.io/inherit-from`` through the snapshot's CSRs, root first."""
    chain = [runtime]
    while (parent_name := chain[-1].metadata.annotations.get(INHERIT_ANNOTATION)) is not None:
        parent = next((r for r in catalog.cluster if r.name == parent_name), None)
        if parent is None:
            return Inheritance(False, "NotFound")
        if any(RuntimeId.of(r) == RuntimeId.of(parent) for r in chain):
            return Inheritance(False, "Cycle")
        if len(chain) == MAX_CHAIN:
            return Inheritance(False, "MaxDepthExceeded")
        chain.append(parent)
    return Inheritance(True, None, tuple(RuntimeId.of(r) for r in reversed(chain)))
