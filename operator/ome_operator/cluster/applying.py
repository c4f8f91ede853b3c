"""Applying a reconcile plan: create or patch only what differs, delete orphans, write status.

Writes are level-triggered and idempotent: an object whose desired fields already hold is not
touched, and an unchanged status is not written, so a re-reconcile with nothing new makes no
write at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes.utils import parse_quantity

from .api import KubeApi

__all__ = [
    "apply_object",
    "is_subset",
    "merge_patch_between",
    "owner_reference",
    "with_owner",
]

#: Maps the operator owns whole: keys it no longer renders are removed, not left behind.
_OWNED_MAPS = (("spec", "selector"), ("spec", "selector", "matchLabels"))
#: Fields of which the operator renders exactly one (a PDB budget, S3.6, S5.5): when it renders
#: one, the others are removed, or the object would carry two budgets.
_ONE_OF = ((("spec",), ("minAvailable", "maxUnavailable")),)


#: Maps whose values are resource quantities, and fields that are one: the API server stores a
#: quantity in its canonical form (``1`` as ``"1"``, ``1000m`` as ``"1"``, ``1Gi`` unchanged).
_QUANTITY_MAPS = frozenset({"limits", "requests"})
_QUANTITY_FIELDS = frozenset({"sizeLimit"})


def _same_quantity(desired: Any, actual: Any) -> bool:
    if isinstance(desired, bool) or not isinstance(desired, int | float | str):
        return False
    try:
        return parse_quantity(desired) == parse_quantity(actual)
    except (ValueError, TypeError):
        return False


def is_subset(desired: Any, actual: Any, *, quantity: bool = False) -> bool:
    """Whether every field of ``desired`` holds in ``actual`` (lists item by item), so fields
    the API server defaults or other controllers add do not count as drift. Quantities compare
    by value, as the server normalises them."""
    if isinstance(desired, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and _holds(key, value, actual[key]) for key, value in desired.items()
        )
    if isinstance(desired, list):
        return (
            isinstance(actual, list)
            and len(desired) == len(actual)
            and all(is_subset(d, a) for d, a in zip(desired, actual, strict=True))
        )
    return desired == actual or (quantity and _same_quantity(desired, actual))


#: Lists of containers, whose ``resources`` the operator renders whole.
_CONTAINER_LISTS = frozenset({"containers", "initContainers"})


def _same_quantities(desired: Any, actual: Any) -> bool:
    """A ``limits`` or ``requests`` map: the same resources (none more: the server adds none to a
    template, so an extra one is a limit the operator no longer renders), equal by value."""
    desired, actual = desired or {}, actual or {}
    return (
        isinstance(desired, Mapping)
        and isinstance(actual, Mapping)
        and desired.keys() == actual.keys()
        and all(is_subset(value, actual[name], quantity=True) for name, value in desired.items())
    )


def _container_holds(desired: Any, actual: Any) -> bool:
    """A container: its fields as anywhere else, its ``resources`` exactly (a GPU limit taken
    out of a runtime must leave the workload too, not hold as a subset)."""
    if not isinstance(desired, Mapping) or not isinstance(actual, Mapping):
        return is_subset(desired, actual)
    want, have = desired.get("resources") or {}, actual.get("resources") or {}
    return (
        is_subset({k: v for k, v in desired.items() if k != "resources"}, actual)
        and isinstance(want, Mapping)
        and isinstance(have, Mapping)
        and all(_same_quantities(want.get(name), have.get(name)) for name in _QUANTITY_MAPS)
        and is_subset({k: v for k, v in want.items() if k not in _QUANTITY_MAPS}, have)
    )


def _holds(key: str, desired: Any, actual: Any) -> bool:
    if key in _QUANTITY_MAPS and isinstance(desired, Mapping) and isinstance(actual, Mapping):
        return all(
            name in actual and is_subset(value, actual[name], quantity=True)
            for name, value in desired.items()
        )
    if key in _CONTAINER_LISTS and isinstance(desired, list) and isinstance(actual, list):
        return len(desired) == len(actual) and all(
            _container_holds(d, a) for d, a in zip(desired, actual, strict=True)
        )
    return is_subset(desired, actual, quantity=key in _QUANTITY_FIELDS)


def merge_patch_between(old: Any, new: Any) -> Any:
    """An RFC 7386 merge patch turning ``old`` into ``new`` (removed keys become null)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return new
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            patch[key] = merge_patch_between(old[key], value)
    return patch


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": owner.get("apiVersion", "ome.io/v1beta1"),
        "kind": owner.get("kind", "InferenceService"),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def with_owner(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> dict[str, Any]:
    metadata = dict(obj["metadata"])
    metadata["ownerReferences"] = [owner_reference(owner)]
    return {**obj, "metadata": metadata}


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _removals(desired: Mapping[str, Any], existing: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The paths of fields ``existing`` holds that the operator owns but no longer renders."""
    found: list[tuple[Any, ...]] = []
    for path in _OWNED_MAPS:
        old, new = _at(existing, path), _at(desired, path)
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            found.extend((*path, key) for key in old if key not in new)
    for path, keys in _ONE_OF:
        old, new = _at(existing, path), _at(desired, path)
        if isinstance(old, Mapping) and isinstance(new, Mapping) and any(k in new for k in keys):
            found.extend((*path, key) for key in keys if key in old and key not in new)
    return found


def _patch_for(desired: Mapping[str, Any], existing: Mapping[str, Any]) -> dict[str, Any]:
    patch = {key: value for key, value in desired.items() if key not in ("apiVersion", "kind")}
    for *path, key in _removals(desired, existing):
        target = patch
        for part in path:
            target[part] = dict(target[part])
            target = target[part]
        target[key] = None
    return patch


def apply_object(
    api: KubeApi, desired: Mapping[str, Any], existing: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Create ``desired``, or patch the existing object where it differs; None when untouched."""
    if existing is None:
        # A 409 means the watch has not delivered the object yet: the ApiError retries the pass
        # with backoff, by when the cache holds it (no GET: the operator reads only watches).
        return api.create(desired)
    if is_subset(desired, existing) and not _removals(desired, existing):
        return None
    return api.merge_patch(desired, _patch_for(desired, existing))
