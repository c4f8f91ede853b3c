"""What one reconcile pass reads and decides: the snapshot, the plan, and their parts.

Pure data. ``reconciling`` builds plans; the controller applies them, ``render`` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .deployment_modes import ResolvedMode
from .model_catalog import ModelCatalog
from .operator_config import OperatorConfig
from .rendering import ComponentContext
from .selection import RuntimeCatalog

__all__ = [
    "Decisions",
    "Event",
    "LogRecord",
    "Outcome",
    "ReconcilePlan",
    "ResolvedComponent",
    "Snapshot",
]


@dataclass(frozen=True)
class Snapshot:
    """What one reconcile reads: runtimes and models (watch-fed), the objects that exist in the
    InferenceService's namespace under the names it owns, keyed by (kind, name), and the
    operator configuration (docs/configuration.md) as it stands for this pass, and the labels of
    the InferenceService's namespace (the pod policy's exceptions select on them). ``pods``: the
    pods of each component's Deployment or LeaderWorkerSet, by component, for why they do not
    serve (an OMENative component's InferenceReplica says that itself)."""

    runtimes: RuntimeCatalog
    models: ModelCatalog
    existing: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    pods: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    leader_worker_set_installed: bool = True
    #: Whether the KEDA ScaledObject API is served (looked up at start, as LeaderWorkerSet's).
    keda_installed: bool = True
    now: str = "1970-01-01T00:00:00Z"
    config: OperatorConfig = field(default_factory=OperatorConfig)
    namespace_labels: Mapping[str, str] = field(default_factory=dict)


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
    """What the metrics record about a pass (docs/reference/metrics.md)."""

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
    #: (kind, name) -> fields an object is created with and then left to others: a scaled
    #: workload's ``replicas`` (docs/autoscaling.md).
    created_with: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ResolvedComponent:
    """A declared component after the merge, its resolved mode, and its rendered objects."""

    name: str
    resolved: ResolvedMode
    context: ComponentContext
    objects: tuple[dict[str, Any], ...]
    #: The fields the workload is created with and then left to its autoscaler (None: none).
    created_with: Mapping[str, Any] | None = None
