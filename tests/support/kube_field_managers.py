"""Field managers (``metadata.managedFields``) and server-side apply, as the API server's
structured-merge-diff does them.

* An update (create, PUT, non-apply patch) gives ``(manager, Update)`` what it added or changed,
  taken from every other manager; what it removed leaves every manager; emptied entries go. A
  write to the object (not ``/status``) carrying other ``managedFields`` writes on top of them.
* An apply merges its configuration in, removes what its manager applied before, no longer
  applies and nobody else owns, and makes ``(manager, Apply)`` own exactly what it applies; a
  field it changes that others own is a 409 conflict, unless forced (then taken from them).
* With a status subresource, ``/status`` writes own only status fields, other writes none.

A field set is a set of paths; a path is a tuple of ``fieldsV1`` tokens: ``f:<key>`` for a
field of a map, ``k:<json of the key fields>`` for an item of a keyed list, ``v:<json>`` for a
value of a set list. In ``fieldsV1`` an owned path that also has owned children carries
``".": {}``. ``SCHEMA`` tells keyed lists, set lists and atomic maps from the rest (other lists
are atomic, other maps granular); server-set metadata (``STRIPPED``) is nobody's.
"""

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

import kmock

Path = tuple[str, ...]
Kind = tuple[str, ...] | str | None
Managed = dict[tuple[str, ...], tuple[dict[str, Any], set[Path]]]  # by manager identity
ATOMIC, SET = "atomic", "set"
_CONTAINERS = ("containers", "initContainers", "ephemeralContainers")

#: How a list or map is merged and owned, by the field names leading to it (``[]``: an item;
#: the longest match of the path's end wins): the key fields of a keyed list, ``SET`` or
#: ``ATOMIC``. As the built-in kinds' schemas declare them; one table for every kind.
SCHEMA: dict[Path, tuple[str, ...] | str] = {
    **{(name,): ("name",) for name in (*_CONTAINERS, "volumes", "imagePullSecrets", "env")},
    ("ports",): ("port", "protocol"),  # a Service's
    **{(name, "[]", "ports"): ("containerPort", "protocol") for name in _CONTAINERS},
    ("volumeMounts",): ("mountPath",),
    ("ownerReferences",): ("uid",),
    ("conditions",): ("type",),
    ("finalizers",): SET,
    **dict.fromkeys([("ownerReferences", "[]"), ("imagePullSecrets", "[]")], ATOMIC),
    **dict.fromkeys([("selector",), ("labelSelector",)], ATOMIC),  # and a Service's selector
    **{(f"{ref}Ref",): ATOMIC for ref in ("field", "resourceField", "configMapKey", "secretKey")},
}
#: Key fields the server defaults, so an item keys by them even when it leaves them out.
KEY_DEFAULTS = {"protocol": "TCP"}
_SERVER_SET = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp")
#: Paths no manager owns.
STRIPPED = frozenset(
    {("f:apiVersion",), ("f:kind",), ("f:metadata",)}
    | {("f:metadata", f"f:{name}") for name in (*_SERVER_SET, "managedFields", "selfLink")}
)
#: What a new object of a built-in kind already holds (its Go structs are never absent), so
#: its creator owns the fields of these maps, not the maps; a custom resource starts empty.
_TEMPLATE = {"template": {"metadata": {}, "spec": {}}}
_SKELETONS: dict[str, dict[str, Any]] = {
    "Deployment": {"spec": {**_TEMPLATE, "strategy": {}}, "status": {}},
    "StatefulSet": {"spec": {**_TEMPLATE, "updateStrategy": {}}, "status": {}},
    "Service": {"spec": {}, "status": {"loadBalancer": {}}},
}
_ABSENT: Any = object()
_EMPTIED: Any = object()


def _skeleton(api_version: str, kind: str) -> dict[str, Any]:
    group = api_version.rpartition("/")[0]
    if "." in group and not group.endswith(".k8s.io"):
        return {}
    return copy.deepcopy(_SKELETONS.get(kind, {"spec": {}, "status": {}}))


# -- field sets ------------------------------------------------------------------------------

#: The most tokens a ``SCHEMA`` entry names; the deepest level whose fields are tracked.
_LONGEST, _DEEPEST = max(len(names) for names in SCHEMA), 64


def kind_of(path: Path) -> Kind:
    """The longest ``SCHEMA`` entry that ends ``path`` (only its last tokens are read: the
    cost stays flat however deep an object nests)."""
    names = tuple(token[2:] if token[0] == "f" else "[]" for token in path[-_LONGEST:])
    return next(
        (SCHEMA[names[-n:]] for n in range(len(names), 0, -1) if names[-n:] in SCHEMA), None
    )


def item_token(item: Any, kind: Kind) -> str:
    if isinstance(kind, tuple) and isinstance(item, Mapping):
        key = {f: item.get(f, KEY_DEFAULTS.get(f)) for f in kind if f in item or f in KEY_DEFAULTS}
        return "k:" + json.dumps(key, separators=(",", ":"), sort_keys=True)
    return "v:" + json.dumps(item, separators=(",", ":"), sort_keys=True)


def _children(value: Any, path: Path) -> dict[str, Any] | None:
    """A value's parts by token; None for a value owned whole (a leaf, or anything below
    ``_DEEPEST`` levels: the emulator tracks deeper objects as one field)."""
    if len(path) >= _DEEPEST:
        return None
    kind = kind_of(path)
    if isinstance(value, Mapping) and kind != ATOMIC:
        return {f"f:{key}": item for key, item in value.items()}
    if isinstance(value, list) and kind not in (None, ATOMIC):
        return {item_token(item, kind): item for item in value}
    return None


def field_set(value: Any, path: Path = ()) -> set[Path]:
    """What an apply of ``value`` owns: its leaves, list items and empty maps."""
    children = _children(value, path)
    if children is None or (not children and isinstance(value, Mapping)):
        return {path} if path else set()
    found = {(*path, token) for token in children if token[0] in "kv"}
    return found.union(*(field_set(item, (*path, token)) for token, item in children.items()))


def _every_path(value: Any, path: Path) -> set[Path]:
    if value is _ABSENT:
        return set()
    children = (_children(value, path) or {}).items()
    return {path}.union(*(_every_path(item, (*path, token)) for token, item in children))


def compare(old: Any, new: Any, path: Path = ()) -> tuple[set[Path], set[Path], set[Path]]:
    """The paths ``new`` added, modified and removed from ``old`` (``_ABSENT``: no value);
    a map or list that appears or goes is itself added or removed with all it holds."""
    if old is _ABSENT or new is _ABSENT:
        return _every_path(new, path), set(), _every_path(old, path)
    if old is None or new is None:  # null and an empty map or list compare item by item
        old, new = old if old is not None else type(new)(), new if new is not None else type(old)()
    before, after = _children(old, path), _children(new, path)
    if before is None or after is None or type(old) is not type(new):
        if old == new:
            return set(), set(), set()
        return _every_path(new, path) - {path}, {path}, _every_path(old, path) - {path}
    added, modified, removed = set(), set(), set()
    for token in {**before, **after}:
        more = compare(before.get(token, _ABSENT), after.get(token, _ABSENT), (*path, token))
        added, modified, removed = added | more[0], modified | more[1], removed | more[2]
    return added, modified, removed


def _with_named_parents(paths: Iterable[Path]) -> set[Path]:
    """The paths and every map field above them (a list item is not implied by its fields)."""
    found = set(paths)
    return found.union(*({p[:n] for n in range(1, len(p)) if p[n - 1][0] == "f"} for p in found))


def encode(paths: Iterable[Path]) -> dict[str, Any]:
    """The ``fieldsV1`` tree of a field set."""
    members, root = set(paths), {}
    for path in members:
        node = root
        for token in path:
            node = node.setdefault(token, {})
    return _marked(root, (), members)


def _marked(node: dict[str, Any], path: Path, members: set[Path]) -> dict[str, Any]:
    marked = {".": {}} if node and path in members else {}
    return marked | {t: _marked(node[t], (*path, t), members) for t in sorted(node)}


def decode(tree: Mapping[str, Any], path: Path = ()) -> set[Path]:
    found: set[Path] = set()
    for token, below in tree.items():
        if token == ".":
            found.add(path)
        elif isinstance(below, Mapping) and below:
            found |= decode(below, (*path, token))
        else:
            found.add((*path, token))
    return found


def path_text(path: Path) -> str:
    """A path as the server prints it: ``.spec.containers[name="c"].image``."""
    parts = []
    for token in path:
        kind, text = token[0], token[2:]
        if kind == "k":
            text = ",".join(f"{f}={json.dumps(v)}" for f, v in json.loads(text).items())
        parts.append(f".{text}" if kind == "f" else f"[{text}]" if kind == "k" else f"[={text}]")
    return "".join(parts)


def merged(live: Any, config: Any, path: Path = ()) -> Any:
    """``config`` merged into ``live`` as an apply merges it: maps key by key, keyed and set
    lists item by item (items only ``live`` has stay where they are, the others follow the
    order of ``config``), anything else replaced."""
    kind = kind_of(path)
    if isinstance(live, dict) and isinstance(config, dict) and kind != ATOMIC:
        result = copy.deepcopy(live)
        for key, value in config.items():
            result[key] = merged(live.get(key, value), value, (*path, f"f:{key}"))
        return result
    if isinstance(live, list) and isinstance(config, list) and kind not in (None, ATOMIC):
        return _merged_list(live, config, path, kind)
    return copy.deepcopy(config)


def _merged_list(live: list[Any], config: list[Any], path: Path, kind: Any) -> list[Any]:
    """The server's order: walk both lists; an item only ``live`` has is kept in place, the
    items both have come in the order of ``config``, new items where ``config`` has them."""
    ltokens = [item_token(item, kind) for item in live]
    ctokens = [item_token(item, kind) for item in config]
    lmap, cmap = dict(zip(ltokens, live, strict=True)), dict(zip(ctokens, config, strict=True))
    shared = iter([t for t in ctokens if t in lmap] + [None])
    upcoming, done, out, at_l, at_c = next(shared), set(), [], 0, 0

    def take(token: str) -> None:
        done.add(token)
        out.append(merged(lmap.get(token, cmap[token]), cmap[token], (*path, token)))

    while at_l < len(ltokens) or at_c < len(ctokens):
        token = ltokens[at_l] if at_l < len(ltokens) else None
        if token is not None and at_c < len(ctokens):
            if token == ctokens[at_c]:
                take(token)
                at_l, at_c, upcoming = at_l + 1, at_c + 1, next(shared)
                continue
            if token in cmap and upcoming not in (None, token):
                at_l += 1
                continue
        if token is not None and (token not in cmap or token in done):
            if token not in cmap:
                out.append(copy.deepcopy(live[at_l]))
            at_l += 1
        elif at_c < len(ctokens):
            take(ctokens[at_c])
            upcoming = next(shared) if upcoming == ctokens[at_c] else upcoming
            at_c += 1
        else:
            at_l += 1  # only duplicated keys lead here
    return out


def without(value: Any, paths: set[Path], path: Path = (), *, keep_null: bool) -> Any:
    """``value`` without what ``paths`` name (and all they hold). A map or list this empties
    becomes null: kept so in a custom resource, dropped from a built-in kind's object."""
    children = _children(value, path)
    if children is None:
        return value
    kept = {}
    for token, item in children.items():
        child, below = (*path, token), {p for p in paths if p[: len(path) + 1] == (*path, token)}
        if child not in below:
            kept[token] = without(item, below, child, keep_null=keep_null) if below else item
    if children and not kept:
        return _EMPTIED
    kept = {t: v for t, v in kept.items() if keep_null or v is not _EMPTIED}
    kept = {t: None if v is _EMPTIED else v for t, v in kept.items()}
    return list(kept.values()) if isinstance(value, list) else {t[2:]: v for t, v in kept.items()}


# -- entries ---------------------------------------------------------------------------------


def _identity(entry: Mapping[str, Any]) -> tuple[str, ...]:
    version = "" if entry.get("operation") == "Apply" else entry.get("apiVersion", "")
    return (*(entry.get(part) or "" for part in ("manager", "operation", "subresource")), version)


def _valid(entries: Any) -> bool:
    return isinstance(entries, list) and all(
        isinstance(e, Mapping) and e.get("operation") in ("Apply", "Update") and e.get("apiVersion")
        and e.get("fieldsType") == "FieldsV1" and isinstance(e.get("fieldsV1", {}), Mapping)
        for e in entries
    )  # fmt: skip


def _decoded(obj: Mapping[str, Any]) -> Managed:
    entries = (obj.get("metadata") or {}).get("managedFields") or []
    return {_identity(e): (dict(e), decode(e.get("fieldsV1") or {})) for e in entries}


def _with_entries(obj: dict[str, Any], managed: Managed) -> dict[str, Any]:
    """``obj`` with these entries (the emptied ones dropped), sorted as the server sorts them."""
    order = ("operation", "time", "manager", "apiVersion", "subresource")
    entries = [{**e, "fieldsV1": encode(fields)} for e, fields in managed.values() if fields]
    entries.sort(key=lambda e: tuple(e.get(part) or "" for part in order))
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": {**meta, **({"managedFields": entries} if entries else {})}}


def manager_of(params: Mapping[str, str], headers: Mapping[str, str]) -> str:
    """The field manager of a write: ``fieldManager``, else the User-Agent up to its "/"."""
    if params.get("fieldManager"):
        return params["fieldManager"]
    agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
    return "".join(c for c in agent.split("/")[0] if c.isprintable())[:128] or "unknown"


class Write:
    """One write: its manager, the resource's apiVersion and kind, whether it goes to
    ``/status`` (with a status subresource), and the time it happens at."""

    def __init__(self, manager: str, api_version: str, kind: str, *, subresource: str | None,
                 has_status: bool, now: str) -> None:  # fmt: skip
        self.manager, self.api_version, self.kind, self.now = manager, api_version, kind, now
        self.subresource, self.has_status = subresource, has_status

    def _split_off(self, path: Path) -> bool:
        """Whether the status split leaves ``path`` out of this write: with a status
        subresource, ``/status`` writes only status fields and other writes only the rest."""
        return self.has_status and (path[:1] == ("f:status",)) != (self.subresource == "status")

    def _recorded(self, paths: Iterable[Path]) -> set[Path]:
        return {p for p in paths if p and p not in STRIPPED and not self._split_off(p)}

    def _entry(self, manager: str, operation: str) -> tuple[tuple[str, ...], dict[str, Any]]:
        entry = {"manager": manager, "operation": operation, "apiVersion": self.api_version}
        entry["fieldsType"] = "FieldsV1"
        if self.subresource:
            entry["subresource"] = self.subresource
        return _identity(entry), entry

    def _changes(self, old: Any, new: Any) -> tuple[set[Path], set[Path], set[Path]]:
        changes = compare(_with_entries(old, {}), _with_entries(new, {}))
        return self._recorded(changes[0]), self._recorded(changes[1]), self._recorded(changes[2])

    def _update(self, old: Any, new: Any, managed: Managed, manager: str) -> Managed:
        added, modified, removed = self._changes(old, new)
        for _, fields in managed.values():
            fields -= added | modified | removed
        identity, entry = self._entry(manager, "Update")
        entry, fields = managed.setdefault(identity, (entry, set()))
        if added | modified:
            fields |= added | modified
            entry["time"] = self.now
        return managed

    def created(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A new object with the managedFields of its creator."""
        return self.updated(_skeleton(self.api_version, self.kind), obj)

    def updated(self, current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """``new`` (an update of ``current``) with the managedFields it leaves. An object
        left without managedFields is not tracked again until an apply."""
        given = (new.get("metadata") or {}).get("managedFields")
        if self.subresource or not given or (not _valid(given) and given != [{}]):
            base = current
        else:
            base = {} if given == [{}] else new
        if not _decoded(base) and (current.get("metadata") or {}).get("uid"):
            return _with_entries(new, {})
        return _with_entries(new, self._update(current, new, _decoded(base), self.manager))

    def applied(self, live: dict[str, Any], config: dict[str, Any], *, force: bool) -> dict:
        """``live`` (``{}``: none yet) after this manager applies ``config``, with the
        managedFields it leaves; a changed field another manager owns raises the server's
        conflict unless ``force``."""
        managed = _decoded(live)
        if not managed and live:  # what was there before is the first apply's predecessor's
            old = _skeleton(self.api_version, self.kind)
            managed = self._update(old, live, managed, "before-first-apply")
        identity, entry = self._entry(self.manager, "Apply")
        entry, last = managed.pop(identity, (entry, set()))
        # Server-set metadata counts as applied here: the maps holding it are never removed.
        applying = {p for p in field_set(config) if not self._split_off(p)}
        owned = _with_named_parents(applying.union(*(fields for _, fields in managed.values())))
        custom = not _skeleton(self.api_version, self.kind)
        pruned = _with_named_parents(last) - owned
        result = without(merged(_with_entries(live, {}), config), pruned, keep_null=custom)
        if not live and self.has_status:  # a create drops the status, as a POST does
            result.pop("status", None)
        added, modified, removed = self._changes(live, result)
        conflicts = [
            (e, path)
            for _, (e, fields) in sorted(managed.items())
            for path in sorted(fields & (added | modified))
        ]
        if conflicts and not force:
            raise conflict_error(conflicts)
        for _, fields in managed.values():
            fields -= added | modified | removed
        if added or modified or removed:
            entry["time"] = self.now
        managed[identity] = (entry, self._recorded(applying))
        return _with_entries(result, managed)


def conflict_error(conflicts: list[tuple[Mapping[str, Any], Path]]) -> kmock.KubernetesError:
    """The 409 of an apply that would change fields others own, worded as the server does."""
    found = [(_printed(entry), path_text(path)) for entry, path in conflicts]
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {who}", "field": field}
        for who, field in found
    ]
    if len(found) == 1:
        message = f"Apply failed with 1 conflict: conflict with {found[0][0]}: {found[0][1]}"
    else:
        paths = {who: "".join(f"\n- {f}" for w, f in found if w == who) for who, _ in found}
        grouped = "\n".join(f"conflicts with {who}:{paths[who]}" for who in sorted(paths))
        message = f"Apply failed with {len(found)} conflicts: {grouped}"
    details = {"causes": causes}
    return kmock.KubernetesError(status=409, reason="Conflict", message=message, details=details)


def _printed(entry: Mapping[str, Any]) -> str:
    """A manager as conflicts name it: ``"name"``, its subresource, an update's apiVersion."""
    printed = json.dumps(entry["manager"])
    if entry.get("subresource"):
        printed += f" with subresource {json.dumps(entry['subresource'])}"
    return printed + (f" using {entry['apiVersion']}" if entry.get("operation") == "Update" else "")
