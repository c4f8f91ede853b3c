"""How deep an object may nest before anything recursive touches it.

A real API server stores custom resources nested up to 10,000 levels in preserved fields; the
recursive code every front door runs on an object (pydantic, deep copies, the renderers, JSON
encoders) fails somewhere between 250 and 1,000. So every parse checks the nesting first, with a
walk that never goes deeper than the limit itself, and refuses an object over ``MAX_NESTING``
levels with the path where it goes over. The deepest field a real ome.io object has is about
15 levels down (an affinity term of a runtime's leader); 100 leaves room for any preserved
configuration a user writes.

Size: an API server takes request bodies up to 3 MiB but its etcd stores at most 1.5 MiB per
object (``--max-request-bytes``), and answers a bigger write with an internal error. Admission
refuses an object bigger than that with the size and the limit, before etcd would.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_NESTING", "MAX_OBJECT_BYTES", "nesting_problem", "size_problem"]

#: Levels of maps and lists an object may have (the object itself is level 1).
MAX_NESTING = 100
#: The API server's record of who set which field: it mirrors the object's own fields three
#: levels deeper, so the field itself is the one reported.
_BOOKKEEPING = ("metadata", "managedFields")
#: Bytes of compact JSON etcd stores per object by default (1.5 MiB).
MAX_OBJECT_BYTES = 1_572_864


def nesting_problem(obj: Any, limit: int = MAX_NESTING) -> tuple[tuple[Any, ...], str] | None:
    """The location of the first value (in document order) more than ``limit`` levels deep,
    and what is wrong; None when the object is within the limit. Any depth is safe to check:
    the walk never goes more than ``limit`` levels down."""
    if not isinstance(obj, dict | list):
        return None
    found = _first_too_deep(obj, 0, limit, top=True)
    if found is None:
        return None
    return tuple(reversed(found)), f"nested more than {limit} levels deep (the limit is {limit})"


def _first_too_deep(node: Any, depth: int, limit: int, top: bool = False) -> list[Any] | None:
    """The reversed path, below ``node`` (``depth`` levels down), to the first map or list at
    ``limit`` levels; None when there is none. Recursion ends at ``limit``, whatever the
    object's depth. Every parse runs it: it only descends into maps and lists."""
    if depth >= limit:
        return []
    children: Any = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in children:
        if not isinstance(value, dict | list):
            continue
        if top and key == _BOOKKEEPING[0] and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != _BOOKKEEPING[1]}
        found = _first_too_deep(value, depth + 1, limit)
        if found is not None:
            found.append(key)
            return found
    return None


def size_problem(obj: Any, limit: int = MAX_OBJECT_BYTES) -> str | None:
    """Why ``obj`` is too big to store (its size as compact JSON); None when it fits. Check
    ``nesting_problem`` first: encoding is recursive."""
    size = len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())
    if size <= limit:
        return None
    return (
        f"the object is {size} bytes as JSON, over the {limit} bytes an API server "
        "stores per object (etcd's request limit)"
    )
