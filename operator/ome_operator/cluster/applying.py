"""Writing an object as the operator renders it, by server-side apply (field manager
``ome-operator``).

A write is an apply of the whole intent: what the operator no longer renders leaves the object
because it no longer applies it, lists merge by their keys, and a field another manager owns (a
``kubectl scale`` of a field the operator does not render, an autoscaler, an admission default)
stays theirs. Writes are level-triggered: ``write_needed`` says whether an object as the watch
shows it already is what the operator renders, so a pass with nothing new sends nothing.

It is not, when a field the operator renders differs (``is_subset``: what the server defaults or
others add does not count), when the operator's apply record holds a field it no longer renders
(``apply_records``), or when the operator's last write of it had a field it no longer renders.
New objects are created, and their record taken over (``apply_records``) at their first write
that removes a field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubernetes.utils import parse_quantity

from ..models.object_metadata import without_fields
from .api import KubeApi
from .apply_records import (
    ABSENT,
    FIELD_MANAGER,
    content,
    dropped_since,
    field_value,
    handover_patch,
    has_legacy_record,
    holds_update_entry,
    map_paths,
    stale_fields,
    takeover_patch,
)
from .errors import Conflict, Refused

__all__ = [
    "FIELD_MANAGER",
    "OWNER_UID_ANNOTATION",
    "TakenBack",
    "apply_object",
    "apply_status",
    "is_subset",
    "write_needed",
]

#: The annotation recording the owner's uid (``core.ownership``'s ``UID_ANNOTATION``; the API
#: edge and the core import nothing of each other).
OWNER_UID_ANNOTATION = "ome.io/inferenceservice-uid"

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


def _holds(key: str, desired: Any, actual: Any) -> bool:
    if key == "selector":  # one field: a key someone added is drift too
        return desired == actual
    if key in _QUANTITY_MAPS and isinstance(desired, Mapping) and isinstance(actual, Mapping):
        return all(
            name in actual and is_subset(value, actual[name], quantity=True)
            for name, value in desired.items()
        )
    return is_subset(desired, actual, quantity=key in _QUANTITY_FIELDS)


def write_needed(desired: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """Whether ``existing`` is not yet what the operator renders (``desired``)."""
    body = content(desired)
    return (
        has_legacy_record(existing)
        or not is_subset(body, existing)
        or bool(stale_fields(desired, existing))
    )


def changed_by_others(
    desired: Mapping[str, Any], existing: Mapping[str, Any], last: Mapping[str, Any]
) -> list[str]:
    """The fields ``desired`` renders as ``last`` did and ``existing`` no longer holds: someone
    changed them since (``.spec.replicas``; a list counts whole)."""
    body = content(desired)
    found = []
    for path in map_paths(body):
        want, was, now = (field_value(obj, path) for obj in (desired, last, existing))
        parent = path[-2][2:] if len(path) > 1 else ""
        quantity = parent in _QUANTITY_MAPS or path[-1][2:] in _QUANTITY_FIELDS
        if want == was and (now is ABSENT or not is_subset(want, now, quantity=quantity)):
            found.append("".join(f".{token[2:]}" for token in path))
    return found


# -- writing -----------------------------------------------------------------------------------

#: Told of fields someone else changed that an apply takes back: the object, their paths.
TakenBack = Callable[[Mapping[str, Any], list[str]], None]


def _takes_over(existing: Mapping[str, Any], subresource: str | None) -> bool:
    """Whether an ``Update`` record of the operator is on ``existing`` (``apply_records``)."""
    return has_legacy_record(existing) or holds_update_entry(existing, subresource)


def _take_over(
    api: KubeApi,
    desired: Mapping[str, Any],
    existing: Mapping[str, Any],
    *,
    keep: Mapping[str, Any] | None = None,
) -> Any:
    """Take over the operator's Update entries (``takeover_patch``) of ``existing``, as read
    again now; the object as it then is."""
    fresh = api.get(existing)
    patch = takeover_patch(desired, fresh, keep=keep)
    return fresh if patch is None else _patched(api, existing, patch, "it was taken over")


def _patched(api: KubeApi, existing: Mapping[str, Any], patch: list[Any], during: str) -> Any:
    """``existing`` after the JSON ``patch`` of its managed fields; a test of it that failed
    (its entries changed since read: a race) is a Conflict, retried."""
    try:
        return api.json_patch(existing, patch)
    except Refused as exc:
        message = f"{exc.message} (changed while {during})"
        raise Conflict(409, message, "Conflict", name=exc.name) from exc


def _hand_over(
    api: KubeApi, existing: Mapping[str, Any], paths: list[tuple[str, ...]]
) -> Mapping[str, Any]:
    """Leave ``paths`` to others (``handover_patch``); the object as it then is."""
    patch = handover_patch(existing, paths)
    return existing if patch is None else _patched(api, existing, patch, "it was handed over")


def apply_object(
    api: KubeApi,
    desired: Mapping[str, Any],
    existing: Mapping[str, Any] | None,
    taken_back: TakenBack,
    last: Mapping[str, Any] | None = None,
    handed_over: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Write ``desired`` unless ``existing`` (as the watch shows it; None: not there) already
    is it, and renders all that ``last`` (the operator's last write of it, None: not known)
    did; the object as the write left it (None: nothing written).

    An object the watch does not show is created (``AlreadyExists`` when its name is taken).
    An existing one is applied with force: the fields it renders are the operator's. Those
    that someone changed since ``last`` rendered them as now are told (``taken_back``).

    ``handed_over``: fields of ``desired`` it is created with and then left to others (a
    scaled workload's ``replicas``, docs/autoscaling.md): never applied, never removed; an
    apply record that still holds them gives them up first (``handover_patch``), value kept."""
    if existing is None:
        # A create, never an apply: an apply would take over an object of that name that is
        # someone else's wherever their fields do not differ.
        return api.create(desired, manager=FIELD_MANAGER)
    patched = None  # the answer of the hand-over patch, if one was sent
    if handed_over:
        desired = without_fields(desired, handed_over)
        last = None if last is None else without_fields(last, handed_over)
        fresh = _hand_over(api, existing, list(map_paths(handed_over)))
        if fresh is not existing:
            patched = existing = dict(fresh)
    dropped = last is not None and last is not desired and dropped_since(desired, last)
    if not dropped and not write_needed(desired, existing):
        return patched
    if has_legacy_record(existing) or (dropped and holds_update_entry(existing, None)):
        # Kept in the apply record: what was rendered last (the apply then removes what no
        # longer is), else what is rendered now.
        existing = _take_over(api, desired, existing, keep=last if dropped else None)
        if not dropped and not write_needed(desired, existing):
            return dict(existing)
    changed = [] if last is None else changed_by_others(desired, existing, last)
    if changed:
        taken_back(desired, changed)
    return api.apply(desired, manager=FIELD_MANAGER, force=True)


def apply_status(
    api: KubeApi, body: Mapping[str, Any], status: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Apply ``status`` to the status of ``body`` when it differs (every field of it is the
    operator's); the object as the write left it (None: nothing to write)."""
    if status == (body.get("status") or {}):
        return None
    meta = body["metadata"]
    identity = {k: meta[k] for k in ("name", "namespace") if meta.get(k)}
    desired = {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "metadata": identity,
        "status": dict(status),
    }
    if _takes_over(body, "status"):
        _take_over(api, desired, body)
    return api.apply(desired, manager=FIELD_MANAGER, force=True, subresource="status")
