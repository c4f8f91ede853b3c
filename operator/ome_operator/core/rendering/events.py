"""Events as the API server stores them (S8.3): the core decides what to say, this renders it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..plans import Event

__all__ = ["EVENT_SOURCE", "event_about"]

#: ``source.component`` of every event the operator posts (OPEN-34).
EVENT_SOURCE = "v1beta1Controllers"


def event_about(obj: Mapping[str, Any], event: Event, now: str) -> dict[str, Any]:
    """The Event object for ``event`` about ``obj`` (of a cluster-scoped object: in
    ``default``, where kubectl describe looks for them)."""
    meta = obj.get("metadata") or {}
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
        "metadata": {"generateName": f"{meta.get('name')}.", "namespace": namespace},
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
