"""Applying a reconcile plan: create or patch only what differs, delete orphans, write status.

Writes are level-triggered and idempotent: an object whose desired fields already hold is not
touched, and an unchanged status is not written, so a re-reconcile with nothing new makes no
write at all.

What the operator stops rendering leaves its objects. Each object it writes carries the
annotation ``ome.io/applied``: a digest of what was written and the tree of its map keys
(through maps, down to lists and values). A key the last write had and this one lacks is
removed (a null in the merge patch); a changed digest alone (a field taken out of a list item,
such as a container's ``command``) sends the lists whole, which the patch replaces. Fields the
server defaults or other controllers add were never in the tree, so they are left alone. An
object written before this annotation existed gets it with one patch, which leaves its pod
template as it was (no rollout); a key it dropped before then stays.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from kubernetes.utils import parse_quantity

from .api import KubeApi

__all__ = [
    "APPLIED",
    "OWNER_UID_ANNOTATION",
    "apply_object",
    "is_subset",
    "merge_patch_between",
    "owner_reference",
    "patch_to_apply",
    "recorded",
    "with_owner",
]

#: The annotation recording what the operator last wrote on an object (see the module's text).
APPLIED = "ome.io/applied"

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


def _key_tree(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The map keys of ``obj``: a nested map down to lists, values and empty maps (``1``)."""
    return {k: _key_tree(v) if isinstance(v, Mapping) and v else 1 for k, v in obj.items()}


#: Metadata a write always carries the same way (the owner reference is compared as it is):
#: left out of the record, so that it is the same for every owner of the same spec.
_UNRECORDED_METADATA = ("name", "namespace", "ownerReferences")
#: The annotation recording the owner's uid (``core.ownership``'s ``UID_ANNOTATION``; the API
#: edge and the core import nothing of each other): the owner's, like its reference.
OWNER_UID_ANNOTATION = "ome.io/inferenceservice-uid"


def _record_of(desired: Mapping[str, Any]) -> str:
    metadata = {k: v for k, v in desired["metadata"].items() if k not in _UNRECORDED_METADATA}
    annotations = {
        k: v for k, v in (metadata.get("annotations") or {}).items() if k != OWNER_UID_ANNOTATION
    }
    metadata.pop("annotations", None)
    if annotations:
        metadata["annotations"] = annotations
    body = {
        **{k: v for k, v in desired.items() if k not in ("apiVersion", "kind")},
        "metadata": metadata,
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    record = {"digest": digest, "keys": _key_tree(body)}
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def recorded(desired: Mapping[str, Any]) -> dict[str, Any]:
    """``desired`` with its ``ome.io/applied`` annotation: what a write of it records."""
    metadata = dict(desired["metadata"])
    annotations = {
        k: v for k, v in (metadata.pop("annotations", None) or {}).items() if k != APPLIED
    }
    if annotations:
        metadata["annotations"] = annotations
    record = _record_of({**desired, "metadata": metadata})
    metadata["annotations"] = {**annotations, APPLIED: record}
    return {**desired, "metadata": metadata}


def _last_keys(existing: Mapping[str, Any]) -> Mapping[str, Any]:
    """The key tree the last write recorded on ``existing`` (empty when none or unreadable)."""
    text = ((existing.get("metadata") or {}).get("annotations") or {}).get(APPLIED)
    try:
        keys = json.loads(text)["keys"] if isinstance(text, str) else {}
    except (ValueError, TypeError, KeyError):
        return {}
    return keys if isinstance(keys, Mapping) else {}


def _dropped(
    keys: Mapping[str, Any], desired: Any, existing: Any, path: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Paths the last write had (``keys``) that ``desired`` no longer has and ``existing``
    still holds: the topmost missing key of each."""
    if not isinstance(desired, Mapping) or not isinstance(existing, Mapping):
        return []
    found: list[tuple[str, ...]] = []
    for key, below in keys.items():
        if key not in existing:
            continue
        if key not in desired:
            found.append((*path, key))
        elif isinstance(below, Mapping):
            found.extend(_dropped(below, desired[key], existing[key], (*path, key)))
    return found


def _patch_for(
    desired: Mapping[str, Any], existing: Mapping[str, Any], removals: list[tuple[Any, ...]]
) -> dict[str, Any]:
    patch = {key: value for key, value in desired.items() if key not in ("apiVersion", "kind")}
    for *path, key in removals:
        target = patch
        for part in path:
            target[part] = dict(target[part])
            target = target[part]
        target[key] = None
    return patch


def patch_to_apply(
    desired: Mapping[str, Any], existing: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The merge patch that makes ``existing`` what the operator renders now (``desired``, with
    its record): what differs, and a null for each key it rendered last time and no longer
    does; None when ``existing`` already is that."""
    desired = recorded(desired)
    removals = _removals(desired, existing)
    removals += [p for p in _dropped(_last_keys(existing), desired, existing) if p not in removals]
    if is_subset(desired, existing) and not removals:
        return None
    return _patch_for(desired, existing, removals)


def apply_object(
    api: KubeApi, desired: Mapping[str, Any], existing: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Create ``desired``, or patch the existing object (``patch_to_apply``); None when
    untouched. Either write records ``ome.io/applied``."""
    if existing is None:
        # A 409 means the watch has not delivered the object yet: the ApiError retries the pass
        # with backoff, by when the cache holds it (no GET: the operator reads only watches).
        return api.create(recorded(desired))
    patch = patch_to_apply(desired, existing)
    return None if patch is None else api.merge_patch(desired, patch)
