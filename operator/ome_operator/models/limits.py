"""How deep an object may nest before anything recursive touches it.

A real API server stores custom resources nested up to 10,000 levels in preserved fields; the
recursive code every front door runs on an object (pydantic, deep copies, the renderers, JSON
encoders) fails somewhere between 250 and 1,000. So every parse checks the nesting first, with
a loop of its own, and refuses an object over ``MAX_NESTING`` levels with the path where it goes
over. The deepest field a real ome.io object has is about 15 levels down (an affinity term of
a runtime's leader); 100 leaves room for any preserved configuration a user writes.

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
    and what is wrong; None when the object is within the limit. Iterative: any depth is safe."""
    pending: list[tuple[Any, tuple[Any, ...]]] = [(obj, ())]
    while pending:
        node, loc = pending.pop()
        if loc == _BOOKKEEPING:
            continue
        if isinstance(node, dict):
            children: Any = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        else:
            continue
        if len(loc) >= limit:
            return loc, f"nested more than {limit} levels deep (the limit is {limit})"
        pending.extend((value, (*loc, key)) for key, value in reversed(children))
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
