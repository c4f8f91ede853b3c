"""What reconciles read but never write: runtimes, models and accelerator classes, parsed.

One ``SourceIndex`` per kind, a ``watches.Collection`` fed on the event loop with the messages
of ``cluster.informing``, as ``owned.KindCache`` is for the written kinds. Each object is parsed
once, when it changes; lookups read the parsed models grouped by the key the core looks them up
with (a runtime's namespace, a model's namespace and name, ...). An object that does not parse
(a field of the wrong type, nesting over ``models.limits.MAX_NESTING``) is set aside: it is left
out of every lookup, ``on_malformed`` is told once per version of it, and it is parsed again
when it changes.
Each key's ``version`` moves with every change under it, so a catalog built from a key's values
is reused exactly as long as they stand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..models import InvalidResourceError, from_manifest
from ..models.object_metadata import metadata_of
from .watches import Collection, Listeners, object_key

__all__ = ["SourceIndex", "parsed"]

_Name = tuple[str, str]


def parsed(obj: Mapping[str, Any]) -> Any:
    """The model of an ome.io object (InvalidResourceError when it does not parse)."""
    return from_manifest(dict(obj))


class SourceIndex(Collection, Mapping[Any, tuple[Any, ...]]):
    """One kind's parsed objects: key -> the values under it, in name order.

    ``key`` maps an object to its lookup key; ``value`` parses it (raising
    InvalidResourceError for a malformed one). ``changed`` tells its listeners of every change
    after the first listing, once the index shows it: the object, and the values before and
    after it (None: absent, deleted or set aside); ``malformed`` of every version set aside,
    with why.
    """

    def __init__(
        self,
        kind: str,
        key: Callable[[Mapping[str, Any]], Any],
        value: Callable[[Mapping[str, Any]], Any] = parsed,
        *,
        on_change: Callable[[Mapping[str, Any], Any, Any], None] | None = None,
        on_malformed: Callable[[Mapping[str, Any], str], None] | None = None,
    ) -> None:
        super().__init__()
        self.kind = kind
        self.changed = Listeners()
        self.malformed = Listeners()
        for listeners, listener in ((self.changed, on_change), (self.malformed, on_malformed)):
            if listener is not None:
                listeners.subscribe(listener)
        self._key = key
        self._value = value
        #: (namespace, name) -> (key, value or None when set aside, its metadata)
        self._entries: dict[_Name, tuple[Any, Any, Mapping[str, Any]]] = {}
        self._grouped: dict[Any, dict[str, Any]] = {}
        self._sorted: dict[Any, tuple[Any, ...]] = {}
        self._versions: dict[Any, int] = {}
        self._moves = 0

    # -- reading ---------------------------------------------------------------------------

    def __getitem__(self, key: Any) -> tuple[Any, ...]:
        found = self._sorted.get(key)
        if found is None:
            group = self._grouped[key]  # KeyError for a key nothing is under
            found = self._sorted[key] = tuple(group[name] for name in sorted(group))
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._grouped

    def __iter__(self) -> Iterator[Any]:
        return iter(self._grouped)

    def __len__(self) -> int:
        return len(self._grouped)

    def version(self, key: Any) -> int:
        """Moves whenever a value under ``key`` is added, replaced or removed."""
        return self._versions.get(key, 0)

    # -- feeding ---------------------------------------------------------------------------

    def _held(self) -> Mapping[_Name, Mapping[str, Any]]:
        return {name: entry[2] for name, entry in self._entries.items()}

    def _change(self, obj: Mapping[str, Any], *, deleted: bool, report: bool) -> None:
        name = object_key(obj)
        old = self._entries.pop(name, None)
        if old is not None and old[1] is not None:
            self._remove(old[0], name[1])
        value = None
        if not deleted:
            key, value = self._key(obj), self._parse(obj)
            self._entries[name] = (key, value, {"metadata": metadata_of(obj)})
            if value is not None:
                self._grouped.setdefault(key, {})[name[1]] = value
                self._moved(key)
        if report:
            self.changed(obj, old[1] if old is not None else None, value)

    def _parse(self, obj: Mapping[str, Any]) -> Any:
        try:
            return self._value(obj)
        except InvalidResourceError as exc:
            self.malformed(obj, str(exc))
            return None

    def _remove(self, key: Any, name: str) -> None:
        group = self._grouped.get(key, {})
        group.pop(name, None)
        self._moved(key)
        if not group:  # version 0 stands for "nothing under it", as before the first value
            self._grouped.pop(key, None)
            self._versions.pop(key, None)

    def _moved(self, key: Any) -> None:
        self._sorted.pop(key, None)
        self._moves += 1
        self._versions[key] = self._moves
