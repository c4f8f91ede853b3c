"""What an event already told, for the events a pass decides again and again
(docs/reference/status-and-events.md, Events).

A pass that finds no runtime decides ``RuntimeNotFound`` every time; it is told once per message
while ``RuntimeReady`` stays False for it. The controller remembers what it told; what the
status records is what an operator that remembers nothing (just started, or ``ome-operator
render`` reading a file) takes as told.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .plans import Event
from .pod_health import find_condition

__all__ = ["RUNTIME_NOT_FOUND", "runtime_not_found_told", "untold"]

RUNTIME_NOT_FOUND = "RuntimeNotFound"


def runtime_not_found_told(status: Any) -> str | None:
    """The RuntimeNotFound message ``status`` records (its ``RuntimeReady`` is False for that
    reason), None when it records none."""
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    listed = conditions if isinstance(conditions, list) else []
    found = find_condition([c for c in listed if isinstance(c, Mapping)], "RuntimeReady")
    if found is None or found.get("status") != "False" or found.get("reason") != RUNTIME_NOT_FOUND:
        return None
    message = found.get("message")
    return message if isinstance(message, str) else None


def untold(events: Iterable[Event], told: str | None) -> tuple[Event, ...]:
    """``events`` without a RuntimeNotFound whose message is the one ``told``."""
    return tuple(e for e in events if e.reason != RUNTIME_NOT_FOUND or e.message != told)
