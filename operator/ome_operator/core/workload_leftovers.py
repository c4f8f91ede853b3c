"""Workloads of another mode beside the one an InferenceService is about to get: a warning of
the webhook (docs/troubleshooting.md, "A workload of another mode is still there").

A component's workload is named by its mode (docs/reference/deployment-modes.md): Deployment
``<isvc>-<component>``, InferenceReplica ``<isvc>-<component>`` or LeaderWorkerSet
``lws-<isvc>-<component>``. When the mode changes, the operator writes the new workload and
never deletes the old one; OME's manager, before ome-operator took over, leaves its own the same
way. Both run (and hold their GPUs) until someone deletes the old one, which is what the warning
says to do, once the new one serves.

The mode is resolved as the controller resolves it, from the InferenceService and the runtime
the review found (named or auto-selected; None: the InferenceService alone). The existing
workloads come from ``lookup``, the controller's caches in the webhook: no request per review.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..models import InferenceService, InvalidResourceError, ServingRuntime
from ..models.object_metadata import metadata_of
from .conditions import COMPONENT_CONDITION
from .deployment_modes import DeploymentMode, InvalidComponentModeError
from .isvc_status import WORKLOAD_MODES, workload_key
from .merging import component_mode

__all__ = ["WorkloadLookup", "leftover_workload_warnings"]

#: The object of a kind and name in the InferenceService's namespace, or None.
WorkloadLookup = Callable[[str, str], Mapping[str, Any] | None]


def _standing(lookup: WorkloadLookup, key: tuple[str, str]) -> bool:
    """Whether the workload exists and is not being deleted."""
    found = lookup(*key)
    return found is not None and not metadata_of(found).get("deletionTimestamp")


def _resolved_mode(
    isvc: InferenceService, component: str, runtime: ServingRuntime | None
) -> DeploymentMode | None:
    """The component's mode after the merge (None: it cannot run one; the controller says so)."""
    declared = isvc.spec.component(component)
    config = runtime.spec.config(component) if runtime is not None else None
    try:
        _, resolved = component_mode(isvc, component, declared, config)
    except (InvalidResourceError, InvalidComponentModeError):
        return None
    return resolved.mode if resolved.mode in WORKLOAD_MODES else None


def _warning(
    isvc: InferenceService, component: str, mode: DeploymentMode, old: tuple[str, str]
) -> str:
    new_kind, new_name = workload_key(isvc, component, mode)
    kind, name = old
    return (
        f"{component} resolves to {mode.value} ({new_kind} {new_name}), but the {kind} {name} "
        f"of another mode (an earlier mode, or OME) is in namespace {isvc.namespace}: both run "
        f"until it is deleted; once {COMPONENT_CONDITION[component]} is True, delete it with "
        f"kubectl delete {kind.lower()} {name} -n {isvc.namespace}"
    )


def leftover_workload_warnings(
    isvc: InferenceService, runtime: ServingRuntime | None, lookup: WorkloadLookup
) -> list[str]:
    """One warning per workload of another mode standing beside a component's new one, in
    engine, decoder, router order, then in the order RawDeployment, OMENative, MultiNode.
    Without an engine the controller writes no workload, so none stands beside one."""
    warnings: list[str] = []
    if isvc.spec.engine is None:
        return warnings
    for component in isvc.declared_components():
        keys = {mode: workload_key(isvc, component, mode) for mode in WORKLOAD_MODES}
        standing = [mode for mode, key in keys.items() if _standing(lookup, key)]
        if not standing:
            continue  # nothing to stand beside: the mode need not be resolved
        mode = _resolved_mode(isvc, component, runtime)
        if mode is None:
            continue
        warnings += [_warning(isvc, component, mode, keys[old]) for old in standing if old != mode]
    return warnings
