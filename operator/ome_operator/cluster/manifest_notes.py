"""What reading ``-f`` manifests warns about, as applying them to a cluster would tell.

Two things a cluster would not hold as written, each a ``Note`` (printed ``Warning: <file>:
document <n>: <text>``; the object is left out, or the earlier copy is):

- a kind or version the ome.io CRDs do not serve (``kind: InferenceServce``, ``apiVersion:
  ome.io/v1``), in kubectl's words (``no matches for kind ... in version ...``), and a kind of
  another group that reads like one of theirs (a kind ``difflib`` finds close); such an object is
  left out, and ``render --fail-on-denied`` counts it as denied (``Note.looks_ome``): it was
  meant for the operator, which will never see it;
- an object given twice (same kind, namespace and name; the same file or directory given twice
  gives every object twice): the last is kept, as a cluster keeps the last applied.

Any other group's kinds are taken as written: a cluster may serve anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .resources import RESOURCES

__all__ = ["OME_GROUP", "Note", "kind_problem", "reviewed_manifests"]

OME_GROUP = "ome.io"
#: Each kind the ome.io CRDs serve, with the version they serve it in.
_SERVED = {r.kind: r.api_version for r in RESOURCES if r.group == OME_GROUP}
_CLUSTER_SCOPED = frozenset(
    {r.kind for r in RESOURCES if not r.namespaced}
    | {"Namespace", "Node", "PersistentVolume", "StorageClass", "PriorityClass"}
    | {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}
)
#: How close (``difflib``'s ratio, case ignored) a kind must be to read as an ome.io kind.
_CLOSE = 0.8


@dataclass(frozen=True)
class Note:
    """One warning about the object read at ``where``; ``looks_ome``: meant for the operator."""

    where: str
    text: str
    looks_ome: bool = False

    def __str__(self) -> str:
        return f"Warning: {self.where}: {self.text}"


def reviewed_manifests(
    found: Sequence[tuple[str, dict[str, Any]]], default_namespace: str
) -> tuple[list[tuple[str, dict[str, Any]]], list[Note]]:
    """The objects a cluster would hold (unserved kinds out, the last of each identity
    kept, in reading order) and the notes about the others, in reading order."""
    notes: list[Note] = []
    kept: dict[tuple[str, ...], tuple[str, dict[str, Any]]] = {}
    for index, (where, obj) in enumerate(found):
        problem = kind_problem(obj["apiVersion"], obj["kind"])
        if problem is not None:
            notes.append(Note(where, problem, looks_ome=True))
            continue
        key = _identity(obj, default_namespace)
        if key is None:  # no identity a cluster could store: nothing to compare
            kept[("", str(index))] = (where, obj)
            continue
        earlier = kept.pop(key, None)
        if earlier is not None:
            first = "the same file, read twice" if earlier[0] == where else earlier[0]
            again = f"{_shown(key)} is also in {first}; the last is kept"
            notes.append(Note(where, again))
        kept[key] = (where, obj)
    order = {id(obj): index for index, (_, obj) in enumerate(found)}
    return sorted(kept.values(), key=lambda pair: order[id(pair[1])]), notes


def kind_problem(api_version: str, kind: str) -> str | None:
    """Why the ome.io CRDs do not serve ``kind`` in ``api_version`` (``... it is left out``),
    or None when they do or the kind is another group's."""
    group = api_version.rpartition("/")[0]
    served = _SERVED.get(kind)
    if group == OME_GROUP:
        if served == api_version:
            return None
        hint = (
            f'the CRDs serve "{served}"'
            if served is not None
            else _did_you_mean(kind) or "not a kind the ome.io CRDs serve"
        )
        return f'no matches for kind "{kind}" in version "{api_version}" ({hint}); it is left out'
    close = _close_kind(kind)
    if close is None:
        return None
    meant = f'"{_SERVED[close]}"' if close == kind else f'kind "{close}" in "{_SERVED[close]}"'
    return (
        f'kind "{kind}" in version "{api_version}" is not an ome.io kind (did you mean '
        f"{meant}?); it is left out"
    )


def _close_kind(kind: str) -> str | None:
    import difflib  # only for a kind that is not served: a command starts without it

    lowered = {served.lower(): served for served in _SERVED}
    matches = difflib.get_close_matches(kind.lower(), list(lowered), n=1, cutoff=_CLOSE)
    return lowered[matches[0]] if matches else None


def _did_you_mean(kind: str) -> str | None:
    close = _close_kind(kind)
    return f'did you mean "{close}"?' if close is not None else None


def _identity(obj: dict[str, Any], default_namespace: str) -> tuple[str, ...] | None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return None
    namespace = meta.get("namespace")
    if not isinstance(namespace, str | None):
        return None
    kind = obj["kind"]
    namespace = "" if kind in _CLUSTER_SCOPED else namespace or default_namespace
    return (obj["apiVersion"].rpartition("/")[0], kind, namespace, meta["name"])


def _shown(key: tuple[str, ...]) -> str:
    _, kind, namespace, name = key
    return f'{kind} "{namespace}/{name}"' if namespace else f'{kind} "{name}"'
