"""Deployment modes: where each side declares one, and how a component's mode resolves
(docs/reference/deployment-modes.md; the selection check: docs/reference/selection.md).

Only the four values of ``DeploymentMode`` count, case-sensitively; any other annotation value is
"no mode" and is skipped silently (the webhook warns about it: docs/reference/admission.md,
Mode typo warnings).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from ..models import ComponentSpec, InferenceService, ServingRuntime

__all__ = [
    "MODE_ANNOTATION",
    "DeploymentMode",
    "InvalidComponentModeError",
    "ModeSource",
    "ResolvedMode",
    "check_component_mode",
    "declared_mode",
    "isvc_level_mode",
    "mode_mismatch_reason",
    "requested_mode",
    "requested_modes",
    "resolve_component_mode",
    "runtime_mode",
]

MODE_ANNOTATION = "ome.io/deploymentMode"


class DeploymentMode(StrEnum):
    RAW_DEPLOYMENT = "RawDeployment"
    OME_NATIVE = "OMENative"
    MULTI_NODE = "MultiNode"
    VIRTUAL_DEPLOYMENT = "VirtualDeployment"


class ModeSource(StrEnum):
    """Which rule of the resolution set a component's mode; the vocabulary of ``effective``."""

    SERVICE_ANNOTATION = "ServiceAnnotation"
    COMPONENT_ANNOTATION = "ComponentAnnotation"
    SERVICE_SPEC = "ServiceSpec"
    LEADER_WORKER_SHAPE = "LeaderWorkerShape"
    DEFAULT = "Default"


@dataclass(frozen=True)
class ResolvedMode:
    mode: DeploymentMode
    source: ModeSource


class InvalidComponentModeError(ValueError):
    """A component resolved to a mode it cannot run (docs/reference/deployment-modes.md, Modes a
    component cannot run)."""

    metric_reason: ClassVar[str] = "invalid_deployment_mode"
    #: The reason of the component's condition and of ``Ready`` that say so.
    condition_reason: ClassVar[str] = "InvalidDeploymentMode"

    def __init__(self, component: str, mode: DeploymentMode) -> None:
        self.component = component
        self.mode = mode
        super().__init__(f"invalid deployment mode for {component}")


def declared_mode(annotations: dict[str, str] | None) -> DeploymentMode | None:
    """The valid mode an annotation map declares, or None (missing or not a mode)."""
    value = (annotations or {}).get(MODE_ANNOTATION)
    try:
        return DeploymentMode(value) if value is not None else None
    except ValueError:
        return None


def runtime_mode(runtime: ServingRuntime, component: str) -> DeploymentMode | None:
    """The mode a runtime's ``<component>Config`` declares (never its metadata)."""
    config = runtime.spec.config(component)
    return declared_mode(config.annotations) if config else None


def requested_mode(isvc: InferenceService, component: str) -> DeploymentMode | None:
    """The mode an InferenceService asks for a component: its annotation, else spec.

    The engine asks ``spec.deploymentMode`` even when ``spec.engine`` is absent; any other
    component asks only when declared.
    """
    spec = isvc.spec.component(component)
    if spec is None and component != "engine":
        return None
    own = declared_mode(spec.annotations) if spec is not None else None
    if own is not None:
        return own
    return DeploymentMode(isvc.spec.deployment_mode) if isvc.spec.deployment_mode else None


#: What check 3 of selection compares: the modes an InferenceService requests for its engine and
#: its decoder (None where it requests none, or declares no decoder).
RequestedModes = tuple[DeploymentMode | None, DeploymentMode | None]


def requested_modes(isvc: InferenceService) -> RequestedModes:
    return requested_mode(isvc, "engine"), requested_mode(isvc, "decoder")


def mode_mismatch_reason(requested: RequestedModes, runtime: ServingRuntime) -> str | None:
    """Check 3 of selection: the first of engine, decoder where both sides declare different
    modes (docs/reference/selection.md, Deployment modes)."""
    for component, ours in zip(("engine", "decoder"), requested, strict=True):
        theirs = runtime_mode(runtime, component)
        if ours is not None and theirs is not None and ours != theirs:
            return (
                f"runtime {component} deployment mode {theirs} does not match "
                f"requested {component} deployment mode {ours}"
            )
    return None


def isvc_level_mode(isvc: InferenceService) -> DeploymentMode | None:
    """The valid mode in the InferenceService's metadata annotation (read only for
    VirtualDeployment and the webhook's ``deploymentStrategy`` warning)."""
    return declared_mode(isvc.metadata.annotations)


def resolve_component_mode(
    isvc: InferenceService, component: str, merged: ComponentSpec
) -> ResolvedMode:
    """The first rule that yields a mode for a declared component, after the merge
    (docs/reference/deployment-modes.md, Resolution)."""
    if isvc_level_mode(isvc) is DeploymentMode.VIRTUAL_DEPLOYMENT:
        return ResolvedMode(DeploymentMode.VIRTUAL_DEPLOYMENT, ModeSource.SERVICE_ANNOTATION)
    annotated = declared_mode(merged.annotations)
    if annotated is not None:
        return ResolvedMode(annotated, ModeSource.COMPONENT_ANNOTATION)
    if isvc.spec.deployment_mode:
        return ResolvedMode(DeploymentMode(isvc.spec.deployment_mode), ModeSource.SERVICE_SPEC)
    if component != "router" and (merged.leader is not None or merged.worker is not None):
        return ResolvedMode(DeploymentMode.OME_NATIVE, ModeSource.LEADER_WORKER_SHAPE)
    return ResolvedMode(DeploymentMode.RAW_DEPLOYMENT, ModeSource.DEFAULT)


def check_component_mode(component: str, resolved: ResolvedMode) -> None:
    """Raise when ``component`` cannot run its resolved mode.

    VirtualDeployment from the service annotation is handled before any component is
    reconciled, so only a component annotation can bring it here.
    """
    mode = resolved.mode
    virtual_from_component = (
        mode is DeploymentMode.VIRTUAL_DEPLOYMENT
        and resolved.source is not ModeSource.SERVICE_ANNOTATION
    )
    if virtual_from_component or (component == "router" and mode is DeploymentMode.MULTI_NODE):
        raise InvalidComponentModeError(component, mode)
