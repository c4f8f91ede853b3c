"""Watched objects kept packed: what the caches hold for every object the operator watches.

An object as the watch delivers it is a tree of dicts, lists and strings: about six times its
JSON size in memory (a Deployment of 1.5 kB is 9 KiB of Python objects). The caches hold it
pickled instead (about its JSON size, and faster to pack and unpack than JSON), and unpack it
when a pass reads it: each read gets its own copy, so nothing a pass does can change a cache.
Only this process packs what it unpacks. An object nested too deep to pickle within the
recursion limit (only malformed ones are: ``models.limits.MAX_NESTING`` is 100) is held as it
is, and read as it is: nothing decides on such an object, passes only report it.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["Held", "Packed", "compact", "expand", "pack", "unpack"]

K = TypeVar("K")


#: What ``pack`` gives: the pickled object, or the object itself when too deep to pickle.
Held = bytes | Mapping[str, Any]


def pack(obj: Mapping[str, Any]) -> Held:
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return obj


def unpack(packed: Held) -> dict[str, Any]:
    if not isinstance(packed, bytes):
        return packed  # type: ignore[return-value]
    return pickle.loads(packed)  # packed by this process (``pack``), never read from outside


def compact(obj: Mapping[str, Any]) -> bytes:
    """``obj`` pickled and compressed (a third of ``pack``'s size, for what is kept long and
    read seldom); the same object compacts to the same bytes."""
    return zlib.compress(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), 1)


def expand(compacted: bytes) -> dict[str, Any]:
    return pickle.loads(zlib.decompress(compacted))  # compacted by this process (``compact``)


class Packed(Mapping[K, dict[str, Any]]):
    """A read-only view of a dict whose entries hold packed objects (``packed`` picks it out of
    an entry) that unpacks each object it is asked for; the dict itself is not copied."""

    def __init__(self, entries: Mapping[K, Any], packed: Callable[[Any], Held]) -> None:
        self._packed = entries
        self._pick = packed

    def __getitem__(self, key: K) -> dict[str, Any]:
        return unpack(self._pick(self._packed[key]))

    def __contains__(self, key: object) -> bool:
        return key in self._packed

    def __iter__(self) -> Iterator[K]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)
