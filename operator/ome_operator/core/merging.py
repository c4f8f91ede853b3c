"""Merging a runtime's engineConfig/decoderConfig/routerConfig into a component
(docs/reference/merging.md).

The InferenceService wins everywhere. Maps are unions by key; keyed lists merge item by item on
their key; other lists and scalars are replaced. A value the InferenceService leaves unset (absent,
``None``, ``""``, ``[]``, ``{}``, ``maxReplicas: 0``) never erases the runtime's, but an empty
``leader: {}`` or ``worker: {}`` still declares the shape when the runtime has none.
"""

from __future__ import annotations

from typing import Any

from ..models import ComponentSpec, InferenceService, JsonDict, parse
from .deployment_modes import ResolvedMode, check_component_mode, resolve_component_mode
from .operator_config import ReplicaDefaults

__all__ = [
    "KEYED_LISTS",
    "component_mode",
    "effective_replicas",
    "merge_component",
    "merge_values",
]

#: List fields merged item by item, and the key that identifies an item.
KEYED_LISTS: dict[str, str] = {
    "env": "name",
    "volumes": "name",
    "containers": "name",
    "initContainers": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
}

#: Fields whose zero counts as unset (``maxReplicas: 0`` is unset; ``minReplicas: 0`` is not).
_ZERO_IS_UNSET = frozenset({"maxReplicas"})

#: Fields a runtime config never contributes.
_RUNTIME_IGNORED = frozenset({"acceleratorOverride", "autoscalerPolicyRef"})


def _unset(field: str, value: Any) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    return field in _ZERO_IS_UNSET and value == 0 and not isinstance(value, bool)


def _merge_keyed(key: str, runtime: list[Any], isvc: list[Any]) -> list[Any]:
    def item_key(item: Any) -> Any:
        return item.get(key) if isinstance(item, dict) else None

    by_key = {item_key(item): item for item in runtime if item_key(item) is not None}
    merged = [
        merge_values(by_key[item_key(item)], item) if item_key(item) in by_key else item
        for item in isvc
    ]
    isvc_keys = {item_key(item) for item in isvc}
    return merged + [item for item in runtime if item_key(item) not in isvc_keys]


def _merge_field(field: str, runtime: Any, isvc: Any) -> Any:
    if _unset(field, isvc):
        return runtime
    if isinstance(runtime, dict) and isinstance(isvc, dict):
        return merge_values(runtime, isvc)
    if field in KEYED_LISTS and isinstance(runtime, list) and isinstance(isvc, list):
        return _merge_keyed(KEYED_LISTS[field], runtime, isvc)
    return isvc


def merge_values(runtime: JsonDict, isvc: JsonDict) -> JsonDict:
    """Merge two objects field by field, the InferenceService side winning."""
    merged = dict(runtime)
    for key, value in isvc.items():
        merged[key] = _merge_field(key, runtime[key], value) if key in runtime else value
    return merged


def merge_component(
    runtime_config: ComponentSpec | None, declared: ComponentSpec, *, where: str
) -> ComponentSpec:
    """The component an InferenceService declares, with the runtime's config merged in."""
    base = {
        key: value
        for key, value in (runtime_config.raw() if runtime_config else {}).items()
        if key not in _RUNTIME_IGNORED
    }
    merged = merge_values(base, declared.raw())
    return parse(ComponentSpec, merged, kind="component", name=where)


def effective_replicas(
    component: str, merged: ComponentSpec, defaults: ReplicaDefaults
) -> tuple[int, int]:
    """Replica bounds: the component's (ISVC, else runtime config), else the defaults; a
    default maximum below the effective minimum is raised to match."""
    minimum = defaults.min_replicas if merged.min_replicas is None else merged.min_replicas
    if merged.max_replicas:
        return minimum, merged.max_replicas
    return minimum, max(defaults.max_replicas[component], minimum)


def component_mode(
    isvc: InferenceService,
    component: str,
    declared: ComponentSpec,
    runtime_config: ComponentSpec | None,
) -> tuple[ComponentSpec, ResolvedMode]:
    """A component the InferenceService declares, as a pass runs it: merged over the runtime's
    config, and its mode, checked. Raises what the merge raises (InvalidResourceError) or
    InvalidComponentModeError."""
    merged = merge_component(runtime_config, declared, where=f"spec.{component}")
    resolved = resolve_component_mode(isvc, component, merged)
    check_component_mode(component, resolved)
    return merged, resolved
