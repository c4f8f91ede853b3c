"""Events as the API server stores them (docs/reference/status-and-events.md, Events): the core
decides what to say, this renders it."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ...models.object_metadata import metadata_of
from ..plans import Event

__all__ = ["EVENT_SOURCE", "event_about", "once_name"]

#: ``source.component`` of every event the operator posts.
EVENT_SOURCE = "v1beta1Controllers"


def once_name(obj: Mapping[str, Any], event: Event) -> str:
    """The name of the one Event of ``event`` for this generation of ``obj``:
    ``<name>.<digest of uid, generation, reason and message>``. A second post of it, by a
    restarted operator, is refused as AlreadyExists instead of making a duplicate."""
    meta = metadata_of(obj)
    what = f"{meta.get('uid')}\n{meta.get('generation')}\n{event.reason}\n{event.message}"
    digest = hashlib.sha256(what.encode()).hexdigest()[:16]
    return f"{str(meta.get('name'))[:236]}.{digest}"  # within 253 characters


def event_about(
    obj: Mapping[str, Any], event: Event, now: str, *, name: str | None = None
) -> dict[str, Any]:
    """The Event object for ``event`` about ``obj`` (of a cluster-scoped object: in
    ``default``, where kubectl describe looks for them), named ``name`` or generated."""
    meta = metadata_of(obj)
    namespace = meta.get("namespace") or "default"
    involved = {
        "apiVersion": obj.get("apiVersion", "ome.io/v1beta1"),
        "kind": obj.get("kind", "InferenceService"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    if meta.get("namespace"):
        involved["namespace"] = meta["namespace"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": (
            {"name": name, "namespace": namespace}
            if name is not None
            else {"generateName": f"{meta.get('name')}.", "namespace": namespace}
        ),
        "involvedObject": {k: involved[k] for k in sorted(involved)},
        "reason": event.reason,
        "message": event.message,
        "type": event.type,
        "source": {"component": EVENT_SOURCE},
        "reportingComponent": EVENT_SOURCE,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
