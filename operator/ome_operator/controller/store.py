"""The InferenceServices as the watch shows them: the one writer of these bodies.

The watch feed is the source; the only other write is the status echo, the status a pass
wrote while the watch has not delivered it yet, so that a pass before it does sees the new
status (no second write, no repeated event) and a spec change in between still arrives as one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..cluster.api import newer_version, resource_version
from ..models import InferenceService, InvalidResourceError, from_manifest

__all__ = ["InferenceServiceStore"]

Key = tuple[str, str]
_VOLATILE = ("status", "resourceVersion", "managedFields")


def _essence(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a reconcile depends on: everything but status and bookkeeping metadata."""
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k not in _VOLATILE}
    return {**{k: v for k, v in body.items() if k != "status"}, "metadata": meta}


class InferenceServiceStore:
    def __init__(self) -> None:
        #: (namespace, name) -> the body as the watch last showed it (or as echoed).
        self.bodies: dict[Key, dict[str, Any]] = {}
        #: (namespace, name) -> (the body it was parsed from, its model or why it is invalid)
        self._parsed: dict[Key, tuple[dict[str, Any], Any]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self.bodies

    def __iter__(self) -> Iterator[Key]:
        return iter(self.bodies)

    def get(self, key: Key) -> dict[str, Any] | None:
        return self.bodies.get(key)

    def parsed(self, key: Key) -> InferenceService | None:
        """The model of the body held under ``key`` (None: none held), parsed once per body;
        InvalidResourceError when it does not parse."""
        body = self.bodies.get(key)
        if body is None:
            return None
        known = self._parsed.get(key)
        if known is None or known[0] is not body:
            try:
                model: Any = from_manifest(body)
            except InvalidResourceError as exc:
                model = exc
            known = self._parsed[key] = (body, model)
        if isinstance(known[1], InvalidResourceError):
            raise known[1]
        return known[1]

    def seen(self, key: Key, body: Mapping[str, Any]) -> bool:
        """Keep ``body``; True when a decision may change (not only its status or
        bookkeeping moved)."""
        known = self.bodies.get(key)
        self.bodies[key] = dict(body)
        return known is None or _essence(known) != _essence(body)

    def forget(self, key: Key) -> None:
        self.bodies.pop(key, None)
        self._parsed.pop(key, None)

    def holds_namespace(self, namespace: str) -> bool:
        return any(key[0] == namespace for key in self.bodies)

    def wrote_status(
        self, key: Key, read: Mapping[str, Any], written: Mapping[str, Any] | None
    ) -> None:
        """A pass that read ``read`` wrote a status (``written``: the object the write
        returned; None: nothing written): keep that status until the watch shows a newer
        version. The watch may have shown a version between the read and the write (a label
        change): the written object is newer than that one too, and its status is the one
        that stands."""
        known = self.bodies.get(key)
        if written is None or known is None:
            return
        held = resource_version(known)
        if held == resource_version(read) or newer_version(resource_version(written), held):
            self.bodies[key] = {**known, "status": written.get("status") or {}}
