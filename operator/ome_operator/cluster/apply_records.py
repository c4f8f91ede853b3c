"""The operator's apply record on an object, and taking over the records of writes that were
not applies.

The record is the operator's ``managedFields`` entry (field manager ``ome-operator``,
operation ``Apply``): the fields its last apply set, as a ``fieldsV1`` tree (maps as
``f:<key>``, items of keyed lists as ``k:{...}``, of set lists as ``v:...``). The informers keep
only the operator's entries of each object. A field the record holds that the operator no longer
renders is stale: the next apply removes it (``stale_fields``).

New objects are created (an apply would take over someone else's object of that name), so their
fields belong to an ``Update`` entry of the operator, as those of the previous release's objects
do (with its annotation ``ome.io/applied``). ``takeover_patch`` turns such an entry into the
apply record (only the fields rendered: what the server defaulted becomes nobody's), and
removes what the annotation records and is no longer rendered, and the annotation, in one JSON
patch (docs/workloads.md, "How objects are written").
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..models.object_metadata import annotations_of, metadata_of

__all__ = [
    "ABSENT",
    "FIELD_MANAGER",
    "LEGACY_RECORD",
    "content",
    "dropped_since",
    "field_value",
    "handover_patch",
    "has_legacy_record",
    "holds_update_entry",
    "map_paths",
    "stale_fields",
    "takeover_patch",
]

#: The field manager of every write of the operator.
FIELD_MANAGER = "ome-operator"
#: The annotation in which the previous release recorded what it wrote (see the module).
LEGACY_RECORD = "ome.io/applied"

Path = tuple[str, ...]
#: What ``field_value`` finds where a path leads nowhere.
ABSENT = object()

# -- the apply record --------------------------------------------------------------------------


def _ours(entry: Any, operation: str) -> bool:
    """Whether ``entry`` of ``managedFields`` is the operator's, of ``operation``."""
    return (
        isinstance(entry, Mapping)
        and entry.get("manager") == FIELD_MANAGER
        and entry.get("operation") == operation
    )


def _entries(
    obj: Mapping[str, Any], operation: str, subresource: str | None
) -> Iterator[Mapping[str, Any]]:
    for entry in metadata_of(obj).get("managedFields") or []:
        if _ours(entry, operation) and (entry.get("subresource") or None) == subresource:
            yield entry


def _fields_of(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    fields = entry.get("fieldsV1")
    return fields if isinstance(fields, Mapping) else {}


def _below(node: Any) -> dict[str, Any]:
    """The tokens under a ``fieldsV1`` node (its own ``.`` aside)."""
    return {k: v for k, v in node.items() if k != "."} if isinstance(node, Mapping) else {}


def _leaves(fields: Mapping[str, Any], path: Path = ()) -> Iterator[Path]:
    """Each owned field of a ``fieldsV1`` tree, as the path of its tokens (``f:spec``,
    ``k:{"name":"engine"}``...); a token's own ``.`` marks the node itself."""
    for token, below in fields.items():
        if token == ".":
            continue
        children = _below(below)
        if children:
            yield from _leaves(children, (*path, token))
        else:
            yield (*path, token)


def _step(node: Any, token: str) -> tuple[bool, Any]:
    """Where ``token`` of a fieldsV1 path leads in ``node``: (found, what is there)."""
    kind, _, text = token.partition(":")
    if kind == "f":
        return (True, node[text]) if isinstance(node, Mapping) and text in node else (False, None)
    try:
        value = json.loads(text) if kind in ("k", "v") else int(text)
    except ValueError:
        return True, None  # a token this reader does not know: never a reason to write
    if not isinstance(node, list):
        return False, None
    if kind == "k" and isinstance(value, Mapping):
        for item in node:
            # A key field the rendering leaves to the server's default (a port's protocol)
            # matches whatever the server set.
            if isinstance(item, Mapping) and all(
                item.get(field, wanted) == wanted for field, wanted in value.items()
            ):
                return True, item
        return False, None
    if kind == "v":
        return value in node, value
    if kind == "i" and isinstance(value, int):
        return (True, node[value]) if 0 <= value < len(node) else (False, None)
    return True, None


def _renders(desired: Any, path: Path) -> bool:
    return field_value(desired, path) is not ABSENT


def stale_fields(
    desired: Mapping[str, Any], existing: Mapping[str, Any], subresource: str | None = None
) -> list[Path]:
    """The fields the operator's apply record on ``existing`` owns that ``desired`` no longer
    renders (an apply of ``desired`` removes them)."""
    return [
        path
        for entry in _entries(existing, "Apply", subresource)
        for path in _leaves(_fields_of(entry))
        if not _renders(desired, path)
    ]


def content(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` without ``apiVersion`` and ``kind``: what an object holds as fields."""
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def has_legacy_record(existing: Mapping[str, Any]) -> bool:
    return LEGACY_RECORD in annotations_of(existing)


def holds_update_entry(existing: Mapping[str, Any], subresource: str | None) -> bool:
    """Whether fields of ``existing`` (of its ``subresource``) belong to an ``Update`` entry of
    the operator: its create's, or the previous release's writes."""
    return any(_entries(existing, "Update", subresource))


def _named_items(value: Any) -> bool:
    """A list whose items are maps keyed by ``name`` (containers, volumes, env)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(i, Mapping) and isinstance(i.get("name"), str) for i in value)
    )


def map_paths(obj: Mapping[str, Any], path: Path = ()) -> Iterator[Path]:
    """Each field of ``obj`` through its maps and the items of its lists keyed by name (any
    other list, a value or an empty map is one), as a fieldsV1 path."""
    for key, value in obj.items():
        here = (*path, f"f:{key}")
        if isinstance(value, Mapping) and value:
            yield from map_paths(value, here)
        elif _named_items(value):
            for item in value:
                named = "k:" + json.dumps({"name": item["name"]}, separators=(",", ":"))
                yield from map_paths(item, (*here, named))
        else:
            yield here


def field_value(obj: Any, path: Path) -> Any:
    """What ``obj`` holds at a fieldsV1 ``path`` (``ABSENT``: nothing); None past a null or a
    token this reader does not know, which counts as there."""
    for token in path:
        found, obj = _step(obj, token)
        if not found:
            return ABSENT
        if obj is None:
            return None
    return obj


def dropped_since(desired: Mapping[str, Any], last: Mapping[str, Any]) -> bool:
    """Whether ``desired`` no longer renders a field the operator's ``last`` write of it had,
    or renders one of its other lists otherwise (an item of it may be gone)."""
    for path in map_paths(content(last)):
        was = field_value(last, path)
        if not _renders(desired, path):
            return True
        if isinstance(was, list) and field_value(desired, path) != was:
            return True
    return False


def _holds(fields: Mapping[str, Any], path: Path) -> bool:
    node: Any = fields
    for token in path:
        if not isinstance(node, Mapping) or token not in node:
            return False
        node = node[token]
    return True


def handover_patch(existing: Mapping[str, Any], paths: list[Path]) -> list[dict[str, Any]] | None:
    """The JSON patch that takes ``paths`` (fieldsV1 paths: a scaled workload's
    ``f:spec``/``f:replicas``) out of the operator's apply record on ``existing``, leaving
    their values where they are: the next apply, which no longer renders them, then leaves
    them to whoever sets them (an autoscaler) instead of removing them. None when the record
    holds none of them. The entry is tested first: a patch of an entry that moved fails."""
    managed = metadata_of(existing).get("managedFields") or []
    operations: list[dict[str, Any]] = []
    for index, entry in enumerate(managed):
        if not _ours(entry, "Apply") or entry.get("subresource"):
            continue
        held = [path for path in paths if _holds(_fields_of(entry), path)]
        if not held:
            continue
        at = f"/metadata/managedFields/{index}"
        operations += [
            {"op": "test", "path": f"{at}/manager", "value": FIELD_MANAGER},
            {"op": "test", "path": f"{at}/operation", "value": "Apply"},
        ]
        operations += [{"op": "remove", "path": at + "/fieldsV1" + _pointer(p)} for p in held]
    return operations or None


# -- taking over what the previous release wrote -------------------------------------------


def _kept(fields: Mapping[str, Any], desired: Any) -> dict[str, Any]:
    """The part of a ``fieldsV1`` tree that ``desired`` renders."""
    kept: dict[str, Any] = {}
    for token, below in fields.items():
        if token == ".":
            kept["."] = {}
            continue
        found, node = _step(desired, token)
        if not found:
            continue
        if not _below(below) or node is None:  # owned whole, or a token this reader does not know
            kept[token] = below
            continue
        inner = _kept(below, node)
        if set(inner) - {"."}:
            kept[token] = inner
    return kept


def _recorded_keys(existing: Mapping[str, Any]) -> Mapping[str, Any]:
    """The key tree the previous release recorded on ``existing`` (empty when unreadable)."""
    text = annotations_of(existing).get(LEGACY_RECORD)
    try:
        keys = json.loads(text)["keys"] if isinstance(text, str) else {}
    except (ValueError, TypeError, KeyError):
        return {}
    return keys if isinstance(keys, Mapping) else {}


def _dropped(keys: Mapping[str, Any], desired: Any, existing: Any, path: Path = ()) -> list[Path]:
    """Paths the previous release's record has that ``desired`` no longer renders and
    ``existing`` still holds: the topmost missing key of each."""
    if not isinstance(desired, Mapping) or not isinstance(existing, Mapping):
        return []
    found: list[Path] = []
    for key, below in keys.items():
        if key not in existing:
            continue
        if key not in desired:
            found.append((*path, key))
        elif isinstance(below, Mapping):
            found.extend(_dropped(below, desired[key], existing[key], (*path, key)))
    return found


def _pointer(path: Path) -> str:
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in path)


def _merged(one: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """The union of two ``fieldsV1`` trees."""
    merged = dict(one)
    for token, below in other.items():
        mine = merged.get(token)
        both = isinstance(mine, Mapping) and isinstance(below, Mapping)
        merged[token] = _merged(mine, below) if both else below
    return merged


def takeover_patch(
    desired: Mapping[str, Any], fresh: Mapping[str, Any], *, keep: Mapping[str, Any] | None = None
) -> list[dict[str, Any]] | None:
    """The JSON patch that makes the operator's ``Update`` entries on ``fresh`` (a create's,
    or the previous release's writes) its apply record: the fields of each (the object's, its
    status's) that ``keep`` (by default ``desired``) renders join the ``Apply`` entry of its
    subresource, or become it (the status whole: it is the operator's alone); the keys the
    previous release's record has and ``desired`` no longer renders are removed, and the record
    itself. None when there is nothing to take over. Each entry is addressed by its place,
    tested first: a patch of entries that moved fails."""
    managed = metadata_of(fresh).get("managedFields") or []
    applied = {e.get("subresource"): i for i, e in enumerate(managed) if _ours(e, "Apply")}
    operations: list[dict[str, Any]] = []
    removed: list[int] = []
    for index, entry in enumerate(managed):
        if not _ours(entry, "Update"):
            continue
        at = f"/metadata/managedFields/{index}"
        status = entry.get("subresource") == "status"
        kept = keep if keep is not None else desired
        fields = dict(_fields_of(entry)) if status else _kept(_fields_of(entry), kept)
        fields.get("f:metadata", {}).get("f:annotations", {}).pop(f"f:{LEGACY_RECORD}", None)
        operations += [
            {"op": "test", "path": f"{at}/manager", "value": FIELD_MANAGER},
            {"op": "test", "path": f"{at}/operation", "value": "Update"},
        ]
        into = applied.get(entry.get("subresource"))
        if into is not None:
            record = managed[into]
            union = _merged(_fields_of(record), fields)
            operations += [
                {
                    "op": "test",
                    "path": f"/metadata/managedFields/{into}/operation",
                    "value": "Apply",
                },
                {
                    "op": "replace",
                    "path": f"/metadata/managedFields/{into}/fieldsV1",
                    "value": union,
                },
            ]
            removed.append(index)
        elif fields:
            operations += [
                {"op": "replace", "path": f"{at}/operation", "value": "Apply"},
                {"op": "replace", "path": f"{at}/fieldsV1", "value": fields},
            ]
        else:
            removed.append(index)
    if not operations and not has_legacy_record(fresh):
        return None
    operations += [{"op": "remove", "path": f"/metadata/managedFields/{i}"} for i in removed[::-1]]
    body = {k: v for k, v in content(desired).items() if k != "status"}
    dropped = _dropped(_recorded_keys(fresh), body, fresh)
    dropped += [("metadata", "annotations", LEGACY_RECORD)] if has_legacy_record(fresh) else []
    return operations + [{"op": "remove", "path": _pointer(p)} for p in dropped]
