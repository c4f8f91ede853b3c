"""Every watch of the operator, owned by it: one ``cluster.informing.Informer`` per kind and scope.

InferenceServices feed the controller; runtimes, models and accelerator classes feed the parsed
``sources`` indexes; the written kinds feed ``owned``. Each informer lists, watches, resumes,
relists on 410 with backoff and retries every other failure with backoff, so no API answer
ends the process. Each feed says when its first listings are in; ``synced`` is set once every
feed has them, and nothing is decided before (no pass, no admission answer on a half-read
cluster).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..cluster.api import KubeApi, resource_version
from ..cluster.informing import Informer, Message, Relisted
from ..cluster.resources import Resource
from ..models.object_metadata import Key, object_key

__all__ = [
    "Collection",
    "Feed",
    "InferenceServiceFeed",
    "Key",
    "Listeners",
    "Watched",
    "Watches",
    "object_key",
]


class Feed(Protocol):
    """What takes one kind's messages: its scopes, and whether all of them are listed."""

    scopes: frozenset[str | None]

    @property
    def synced(self) -> bool: ...

    def apply(self, batch: Iterable[Message]) -> None: ...


@dataclass(frozen=True)
class Watched:
    """One kind to watch, what its messages feed, the label and fields its objects must have,
    and the one namespace it is watched in (None: the operator's)."""

    kind: Resource
    feed: Feed
    label_selector: str | None = None
    field_selector: str | None = None
    namespace: str | None = None


class Listeners:
    """Who is told of a feed's changes: each listener, in the order it subscribed."""

    def __init__(self) -> None:
        self._told: list[Callable[..., None]] = []

    def subscribe(self, listener: Callable[..., None]) -> None:
        self._told.append(listener)

    def __call__(self, *change: Any) -> None:
        for listener in self._told:
            listener(*change)


class Collection:
    """One kind's objects as listings and changes show them, and when every scope is listed.

    A listing after the first reports, as changes, what it shows changed meanwhile: each
    object that is gone (deletions first, as last held) and each whose resourceVersion moved.
    Subclasses keep the objects (``_held``: the last version of each) and act on each change
    in ``_change``; ``report`` is False for the first listing of a scope.
    """

    def __init__(self) -> None:
        self.scopes: frozenset[str | None] = frozenset({None})
        self._listed: set[str | None] = set()

    @property
    def synced(self) -> bool:
        return self._listed >= self.scopes

    def apply(self, batch: Iterable[Message]) -> None:
        for message in batch:
            if isinstance(message, Relisted):
                self._relist(message)
            else:
                self._change(message.object, deleted=message.type == "DELETED", report=True)

    def _relist(self, listing: Relisted) -> None:
        scope = listing.namespace
        report = scope in self._listed
        fresh = {object_key(obj): obj for obj in listing.items}
        held = self._held()
        for key in sorted(held):
            if key not in fresh and scope in (None, key[0]):
                self._change(held[key], deleted=True, report=report)
        for key, obj in sorted(fresh.items()):
            old = held.get(key)
            if old is None or resource_version(old) != resource_version(obj):
                self._change(obj, deleted=False, report=report)
        self._listed.add(scope)

    def _held(self) -> Mapping[Key, Mapping[str, Any]]:
        """(namespace, name) -> the last version held of each object (its metadata at least)."""
        raise NotImplementedError

    def _change(self, obj: Mapping[str, Any], *, deleted: bool, report: bool) -> None:
        raise NotImplementedError


class InferenceServiceFeed(Collection):
    """InferenceService messages as the controller hears them: ``seen`` for each object as it
    now is (its first listing too: every InferenceService is reconciled at start), ``gone`` for
    each one deleted."""

    def __init__(
        self,
        known: Callable[[], Mapping[Key, Mapping[str, Any]]],
        seen: Callable[[Key, Mapping[str, Any]], None],
        gone: Callable[[Key], None],
    ) -> None:
        super().__init__()
        self._known, self._seen, self._gone = known, seen, gone

    def _held(self) -> Mapping[Key, Mapping[str, Any]]:
        return self._known()

    def _change(self, obj: Mapping[str, Any], *, deleted: bool, report: bool) -> None:
        if deleted:
            self._gone(object_key(obj))
        else:
            self._seen(object_key(obj), obj)


class Watches:
    """The informers, started once, and the event set when every feed is listed."""

    def __init__(self) -> None:
        self._informers: list[Informer] = []
        self._watched: list[Watched] = []
        self._synced: asyncio.Event | None = None

    @property
    def synced(self) -> asyncio.Event:
        if self._synced is None:
            self._synced = asyncio.Event()
        return self._synced

    def start(
        self,
        api_factory: Callable[[], KubeApi],
        watched: Iterable[Watched],
        namespaces: Iterable[str | None],
        *,
        retry_delay: Callable[[int], float],
        on_failure: Callable[[str], None] | None = None,
    ) -> None:
        """An informer per kind and namespace (None: all); cluster-scoped kinds are watched
        cluster-wide. A feed given no kind to watch (``scopes`` left empty) is synced at once.
        ``on_failure`` is told of each failed list or watch, with the resource."""
        if self._informers:
            return
        loop = asyncio.get_running_loop()
        scopes = tuple(namespaces)
        self._watched = list(watched)
        for item in self._watched:
            if item.namespace is not None:
                item.feed.scopes = frozenset({item.namespace})
            else:
                item.feed.scopes = frozenset(scopes if item.kind.namespaced else (None,))
            for namespace in sorted(item.feed.scopes, key=str):
                informer = Informer(
                    api_factory(),
                    item.kind,
                    namespace,
                    self._deliverer(loop, item.feed),
                    retry_delay=retry_delay,
                    label_selector=item.label_selector,
                    field_selector=item.field_selector,
                    on_failure=on_failure,
                )
                self._informers.append(informer)
                informer.start()
        self._check_synced()

    def _deliverer(
        self, loop: asyncio.AbstractEventLoop, feed: Feed
    ) -> Callable[[list[Message]], None]:
        def apply(batch: list[Message]) -> None:
            feed.apply(batch)
            self._check_synced()

        return lambda batch: loop.call_soon_threadsafe(apply, batch)

    def _check_synced(self) -> None:
        if not self.synced.is_set() and all(w.feed.synced for w in self._watched):
            self.synced.set()

    async def stop(self) -> None:
        informers, self._informers = self._informers, []
        await asyncio.gather(*(asyncio.to_thread(i.stop) for i in informers))
