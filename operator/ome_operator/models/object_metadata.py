"""How every layer reads an object's metadata: one reader, one key, one controller rule.

Objects here are the plain JSON-like dicts the API server sends and the operator renders. Each
reader tolerates an object whose ``metadata`` is missing or not a map (as a hand-written file or
a malformed watch event has it): it reads as empty, never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "Identity",
    "Key",
    "annotations_of",
    "controlled_by",
    "controller_reference",
    "identity_of",
    "labels_of",
    "metadata_of",
    "object_key",
    "owner_reference",
    "reference_to",
    "uid_of",
    "with_owner",
    "without_fields",
]

#: (namespace, name) of an object; a cluster-scoped object's namespace is ``""``.
Key = tuple[str, str]
#: (kind, namespace, name) of an object.
Identity = tuple[Any, Any, Any]


def metadata_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj``'s metadata (empty when it has none, or none that is a map)."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj``'s labels (empty when it has none, or none that is a map)."""
    labels = metadata_of(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj``'s annotations (empty when it has none, or none that is a map)."""
    annotations = metadata_of(obj).get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def uid_of(obj: Mapping[str, Any] | None) -> Any:
    """``obj``'s uid (None for no object, or one without a uid)."""
    return metadata_of(obj or {}).get("uid")


def object_key(obj: Mapping[str, Any]) -> Key:
    """(namespace, name) of an object; a cluster-scoped object's namespace is ``""``."""
    meta = metadata_of(obj)
    return meta.get("namespace") or "", meta.get("name") or ""


def identity_of(obj: Mapping[str, Any]) -> tuple[Identity, Any]:
    """(kind, namespace, name) of an object, and its resourceVersion."""
    meta = metadata_of(obj)
    return (obj.get("kind"), meta.get("namespace"), meta.get("name")), meta.get("resourceVersion")


def controller_reference(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference of ``obj`` that says ``controller: true`` (at most one is allowed)."""
    refs = metadata_of(obj).get("ownerReferences") or []
    return next((r for r in refs if isinstance(r, Mapping) and r.get("controller") is True), None)


def controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``owner`` (that very object: its uid) is ``obj``'s controller."""
    ref = controller_reference(obj)
    uid = uid_of(owner)
    return ref is not None and uid is not None and ref.get("uid") == uid


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    """The controller owner reference naming ``owner`` (an InferenceService read from a file,
    without kind or uid, is named as one)."""
    meta = metadata_of(owner)
    return {
        "apiVersion": owner.get("apiVersion", "ome.io/v1beta1"),
        "kind": owner.get("kind", "InferenceService"),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def reference_to(api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
    """An object by kind, namespace and name, as the API calls take it (no namespace: a
    cluster-scoped object)."""
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def with_owner(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` naming ``owner`` as its controller: the one way the operator sets an owner.
    Created, it is the object's only reference; applied (server-side apply keys the list by
    uid), the references other managers set stay theirs, untouched."""
    metadata = dict(metadata_of(obj))
    metadata["ownerReferences"] = [owner_reference(owner)]
    return {**obj, "metadata": metadata}


def without_fields(obj: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` without the fields ``fields`` names (a tree of maps whose leaves are the fields
    to leave out: ``{"spec": {"replicas": 2}}`` leaves out ``spec.replicas``); a copy."""
    kept = dict(obj)
    for key, value in fields.items():
        mine = kept.get(key)
        if isinstance(value, Mapping) and isinstance(mine, Mapping):
            kept[key] = without_fields(mine, value)
        else:
            kept.pop(key, None)
    return kept
