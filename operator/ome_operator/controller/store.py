"""The InferenceServices as the watch shows them: the one writer of these bodies.

The watch feed is the only writer: a status a pass wrote that the watch has not delivered yet
is read from the record of the operator's writes (``write_record``), not kept here.

Each body is held packed (``packing``), with a digest of what a pass depends on and the part its
model and runtime resolution reads (``core.resolving.resolution_manifest``), parsed whenever
that part changes (seldom: a status write leaves it as it is): runtime events
(``core.requeue``) and runtime reviews (``runtime_changes``) decide from that part, every
InferenceService at once, without unpacking or parsing the whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from ..cluster.api import resource_version
from ..core.resolving import resolution_manifest
from ..models import InferenceService, InvalidResourceError, from_manifest
from ..models.object_metadata import metadata_of
from .packing import Held, Packed, pack, unpack
from .watches import Key

__all__ = ["InferenceServiceStore"]

_VOLATILE = ("status", "resourceVersion", "managedFields")


def _essence(body: Mapping[str, Any]) -> bytes:
    """A digest of what a reconcile depends on: everything but status and bookkeeping
    metadata. The API server writes an object's keys in a fixed order, so the same content
    digests alike (a reordering would cost one pass that writes nothing)."""
    meta = {k: v for k, v in metadata_of(body).items() if k not in _VOLATILE}
    essence = {**{k: v for k, v in body.items() if k != "status"}, "metadata": meta}
    packed = pack(essence)
    if not isinstance(packed, bytes):  # too deep to pickle (malformed): walked with a loop
        return _walked_digest(essence)
    return hashlib.blake2b(packed, digest_size=16).digest()


class _Mark(NamedTuple):
    """A token of ``_walked_digest``'s stack (a map key, or the end of a map or list)."""

    text: bytes


_END_MAP, _END_LIST = _Mark(b"}"), _Mark(b"]")


def _walked_digest(obj: Any) -> bytes:
    """A digest of a JSON value however deep, taken with a loop (no recursion): the same
    content digests alike, so the echo of a status written on an object too deep to pickle
    re-queues nothing."""
    digest = hashlib.blake2b(digest_size=16)
    stack: list[Any] = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, _Mark):
            digest.update(item.text)
        elif isinstance(item, Mapping):
            digest.update(b"{")
            stack.append(_END_MAP)
            for key in reversed(list(item)):
                stack.extend((item[key], _Mark(b"k" + repr(key).encode() + b":")))
        elif isinstance(item, list):
            digest.update(b"[")
            stack.append(_END_LIST)
            stack.extend(reversed(item))
        else:
            digest.update(repr(item).encode() + b",")
    return digest.digest()


def _same(one: Held, other: Held) -> bool:
    """Packed alike (an object held as it is only ever matches itself)."""
    if isinstance(one, bytes) and isinstance(other, bytes):
        return one == other
    return one is other


class _Held(NamedTuple):
    body: Held  #: packed
    version: str | None  #: its resourceVersion
    essence: bytes  #: ``_essence`` of it
    resolution: Held  #: its ``resolution_manifest``, packed


class InferenceServiceStore:
    def __init__(self) -> None:
        self._held: dict[Key, _Held] = {}
        #: (namespace, name) -> the resolution manifest it was parsed from, and its model (or
        #: why it does not parse); dropped when that part of the body changes.
        self._parsed: dict[Key, tuple[Held, Any]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._held

    def __iter__(self) -> Iterator[Key]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)

    @property
    def bodies(self) -> Mapping[Key, dict[str, Any]]:
        """Every body held, unpacked when read (a copy each time)."""
        return Packed(self._held, lambda held: held.body)

    def get(self, key: Key) -> dict[str, Any] | None:
        held = self._held.get(key)
        return unpack(held.body) if held is not None else None

    def resolution(self, key: Key) -> InferenceService | None:
        """The InferenceService held under ``key`` as its model and runtime resolution reads
        it (None: none held); InvalidResourceError when that part does not parse."""
        known = self._parsed.get(key)
        if known is None:
            return None
        if isinstance(known[1], InvalidResourceError):
            raise known[1]
        return known[1]

    def seen(self, key: Key, body: Mapping[str, Any]) -> bool:
        """Keep ``body``; True when a decision may change (not only its status or
        bookkeeping moved)."""
        known = self._held.get(key)
        essence = self._keep(key, body)
        return known is None or known.essence != essence

    def _keep(self, key: Key, body: Mapping[str, Any]) -> bytes:
        essence = _essence(body)
        resolution = pack(resolution_manifest(body))
        self._held[key] = _Held(pack(body), resource_version(body), essence, resolution)
        known = self._parsed.get(key)
        if known is None or not _same(known[0], resolution):
            try:
                model: Any = from_manifest(unpack(resolution))
            except InvalidResourceError as exc:
                model = exc
            self._parsed[key] = (resolution, model)
        return essence

    def forget(self, key: Key) -> None:
        self._held.pop(key, None)
        self._parsed.pop(key, None)

    def holds_namespace(self, namespace: str) -> bool:
        return any(key[0] == namespace for key in self._held)
