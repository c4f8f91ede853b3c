"""The controller runtime both controllers of the operator are instances of
(docs/architecture.md, "One controller runtime").

A controller declares in one place (``ControllerSpec``) what it is for (the kind it reconciles,
how to read one by key and list them all), what it owns and what else it watches: for each, a
``Trigger``, the map from one change to the keys it re-queues. Its reconciler is a function of a
key and the object now held that returns a ``Result`` (done, again after a delay, or a retry
with backoff) or raises. The runtime owns the rest: a ``WorkQueue`` and its workers (one pass of
a key at a time, a change during a pass brings one more), rate-limited retries, start once the
watches have listed, drain and stop, and the rules every controller shares:

- an object being deleted, or whose owner (``owner_kind``) is gone or going, gets no pass: the
  garbage collector removes it and what it owns, and a pass would only race it;
- ``OwnerGoing`` (an adoption found the owner going), ``NamespaceTerminating`` (its namespace
  goes, with every object of it: none gets a pass again until the last is gone) and
  ``NotLeading`` (nothing was sent; a retry, or the next leader, does it) end a pass as such;
- any other exception is a bug or an unchecked value: logged with its traceback, retried with
  backoff, and the worker lives on.

A follower (started without working) queues nothing; once it works, every key gets a pass.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.errors import NamespaceTerminating, NotFound
from ..cluster.leases import NotLeading
from ..metrics import Metrics
from ..models.object_metadata import Key, controller_reference, metadata_of, uid_of
from .queue import Backoff, WorkQueue

__all__ = [
    "DONE",
    "DRAIN_SECONDS",
    "RETRY",
    "UNEXPECTED_ERROR",
    "ControllerRuntime",
    "ControllerSpec",
    "OwnerGoing",
    "Result",
    "Trigger",
    "gone_or_going",
    "recheck_owner",
]

#: What a pass that ended in an exception no rule handles logs, before what it reconciles.
UNEXPECTED_ERROR = "Unexpected error reconciling"
#: Seconds stop() gives the passes under way to finish their writes.
DRAIN_SECONDS = 10.0


@dataclass(frozen=True)
class Result:
    """What a pass asks for next: nothing (``DONE``), a retry after the key's backoff
    (``RETRY``), or another pass after ``after`` seconds."""

    retry: bool = False
    after: float | None = None


DONE = Result()
RETRY = Result(retry=True)


class OwnerGoing(Exception):
    """The owner is gone or being deleted, though the watch has not said so yet."""


def gone_or_going(found: Mapping[str, Any] | None, uid: Any) -> bool:
    """Whether the owner of ``uid``, as ``found`` (None: not there), is gone, replaced by
    another of its name, or being deleted."""
    if found is None:
        return True
    return uid_of(found) != uid or bool(metadata_of(found).get("deletionTimestamp"))


def recheck_owner(api: KubeApi, owner: Mapping[str, Any]) -> None:
    """Before adopting an object (it lacks our owner reference), read the owner (an
    InferenceService, an InferenceReplica) itself, not the cache: the garbage collector removes
    owner references of an owner being deleted with ``--cascade=orphan``, and its watch event
    may come before the owner's; an adoption then would have the collector delete what it just
    orphaned. As client-go's ``RecheckDeletionTimestamp`` does. ``OwnerGoing`` when it goes."""
    try:
        fresh = api.get(owner)
    except NotFound:
        raise OwnerGoing() from None
    if gone_or_going(fresh, uid_of(owner)):
        raise OwnerGoing()


@dataclass(frozen=True)
class Trigger:
    """One watched kind: how to be told of its changes, and the keys a change re-queues."""

    kind: str
    subscribe: Callable[[Callable[..., None]], None]
    keys: Callable[..., Iterable[Key]]


@dataclass(frozen=True)
class ControllerSpec:
    """What a controller is for, what it owns and what else it watches."""

    #: The kind it reconciles, and the log field that names one.
    kind: str
    key_field: str
    #: The object held under a key (None: none), and every key held.
    read: Callable[[Key], Mapping[str, Any] | None]
    keys: Callable[[], Iterable[Key]]
    #: What a pass adopts (for the line of a pass that found its owner going).
    adopts: str = "objects"
    owns: tuple[Trigger, ...] = ()
    watches: tuple[Trigger, ...] = ()
    #: The kind of the controller whose going ends its objects' passes, and how to read one
    #: by (namespace, name).
    owner_kind: str | None = None
    owner: Callable[[Key], Mapping[str, Any] | None] | None = None

    def fields(self, key: Key) -> dict[str, str]:
        return {"namespace": key[0], self.key_field: key[1]}


Reconciler = Callable[[Key, Mapping[str, Any]], Awaitable[Result]]


class ControllerRuntime:
    """Runs one controller: see the module."""

    def __init__(
        self,
        spec: ControllerSpec,
        reconcile: Reconciler,
        *,
        logger: logging.Logger,
        backoff: Backoff | None = None,
        metrics: Metrics | None = None,
        following: bool = False,
    ) -> None:
        self.spec, self._reconcile, self._logger = spec, reconcile, logger
        self.queue = WorkQueue(backoff or Backoff(), name=spec.kind.lower(), metrics=metrics)
        #: A follower queues nothing (``work`` queues every key).
        self.following = following
        #: Namespaces the API server answered NamespaceTerminating for, until their last
        #: object is gone.
        self.terminating: set[str] = set()
        #: Set once working, every watch listed and every key held queued.
        self.listed = asyncio.Event()
        self._starter: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._passing: set[asyncio.Task[None] | None] = set()
        self._stopping = False
        for trigger in (*spec.owns, *spec.watches):
            trigger.subscribe(self._requeuer(trigger))

    @property
    def working(self) -> bool:
        return self._starter is not None

    @property
    def tasks(self) -> tuple[asyncio.Task[None], ...]:
        """The workers' tasks (none before ``work``, nor after ``stop``)."""
        return tuple(self._tasks)

    def _requeuer(self, trigger: Trigger) -> Callable[..., None]:
        def requeue(*change: Any) -> None:
            for key in trigger.keys(*change):
                self.enqueue(key)

        return requeue

    # -- feeding -------------------------------------------------------------------------------

    def enqueue(self, key: Key) -> None:
        """A pass for ``key`` (none while following)."""
        if not self.following:
            self.queue.add(key)

    def requeue_all(self, namespace: str | None = None) -> None:
        """A pass for every key held (of ``namespace``; None: of all), in key order."""
        for key in sorted(self.spec.keys()):
            if namespace is None or key[0] == namespace:
                self.enqueue(key)

    def gone(self, key: Key) -> None:
        """The object of ``key`` is deleted: its queue entries go, and a terminating namespace
        is forgotten with its last object."""
        self.queue.forget(key)
        namespace = key[0]
        if namespace in self.terminating and not any(k[0] == namespace for k in self.spec.keys()):
            self.terminating.discard(namespace)

    def namespace_terminating(self, namespace: str) -> None:
        """The API server answered NamespaceTerminating for ``namespace``: none of its objects
        gets a pass until the last is gone (unless it is gone already: a deletion heard while
        the pass waited on its write)."""
        if any(k[0] == namespace for k in self.spec.keys()):
            self.terminating.add(namespace)

    # -- running -------------------------------------------------------------------------------

    def work(self, count: int, *ready: asyncio.Event) -> None:
        """Stop following and start ``count`` workers; once every ``ready`` event is set,
        every key held gets a pass, then changes bring theirs. Once only."""
        if self._starter is not None:
            return
        self.following = False
        listed = self.listed

        async def when_listed() -> None:
            for event in ready:
                await event.wait()
            self.requeue_all()
            listed.set()

        self._starter = asyncio.create_task(when_listed())
        self._tasks = [asyncio.create_task(self._work(listed)) for _ in range(count)]

    async def stop(self, drain: float = DRAIN_SECONDS) -> None:
        """Stop taking keys, let the passes under way finish (up to ``drain`` seconds: a pass
        cut between its writes leaves them half done for the next operator), then stop."""
        self._stopping = True
        if self._starter is not None:
            self._starter.cancel()
        passing = [task for task in self._tasks if task in self._passing]
        for task in self._tasks:
            if task not in self._passing:
                task.cancel()
        if passing and drain > 0:
            await asyncio.wait(passing, timeout=drain)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks, self._starter = [], None

    async def _work(self, listed: asyncio.Event) -> None:
        await listed.wait()
        task = asyncio.current_task()
        while not self._stopping:
            key: Key = await self.queue.get()  # type: ignore[assignment]
            result = RETRY
            self._passing.add(task)
            try:
                result = await self.process(key)
            except Exception:  # a bug must not kill the worker; the key is retried
                self._logger.exception(
                    f"{UNEXPECTED_ERROR} {self.spec.kind}", extra=self.spec.fields(key)
                )
            finally:
                self._passing.discard(task)
                self.queue.done(key, failed=result.retry)
                if result.after is not None:
                    self.queue.add_after(key, result.after)

    async def process(self, key: Key) -> Result:
        """One pass over ``key``, the shared rules applied (see the module)."""
        obj = self.spec.read(key)
        if obj is None or key[0] in self.terminating:
            return DONE
        if metadata_of(obj).get("deletionTimestamp") or self._owner_going(obj):
            return DONE
        try:
            return await self._reconcile(key, obj)
        except OwnerGoing:  # its deletion event ends this; its orphans stay orphans
            self._logger.info(
                f"{self.spec.kind} is being deleted; its {self.spec.adopts} are not adopted",
                extra=self.spec.fields(key),
            )
            return DONE
        except NamespaceTerminating:  # its objects go with it: their deletion events end this
            self.namespace_terminating(key[0])
            self._logger.info(
                f"Namespace is being deleted; {self.spec.kind} not reconciled",
                extra=self.spec.fields(key),
            )
            return DONE
        except NotLeading:  # nothing sent; the next leader's pass does this one
            return RETRY

    def _owner_going(self, obj: Mapping[str, Any]) -> bool:
        """Whether the controller of ``obj`` of ``owner_kind`` is gone or being deleted. An
        object orphaned on purpose (``--cascade=orphan``) has no such reference, and is kept."""
        ref = controller_reference(obj)
        if self.spec.owner is None or ref is None or ref.get("kind") != self.spec.owner_kind:
            return False
        owner = self.spec.owner((metadata_of(obj).get("namespace"), ref.get("name")))
        return gone_or_going(owner, ref.get("uid"))
