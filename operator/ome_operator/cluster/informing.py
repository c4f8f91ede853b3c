"""Watch-fed copies of one collection, kept as client-go's reflector keeps them: LIST, then WATCH.

An ``Informer`` runs in a thread of its own (the official client blocks). It lists the
collection in pages and hands the whole listing over as one ``Relisted``; then it watches from
the listed resourceVersion and hands each change over as a ``Changed``, in batches as they
arrive. A watch that ends is resumed from the last resourceVersion seen (bookmarks included);
when the server no longer has that version (410 Gone) the collection is listed again, and the
receiver works out what changed meanwhile; when it expires again before any change arrived,
the next list waits a backoff. Every other failure is logged, counted (``on_failure``: the
operator's metrics) and retried with backoff, so nothing is lost. A collection
the server does not serve (404) is handed over as empty until it is served. Objects are handed
over with only the operator's own ``managedFields`` entries.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..models.object_metadata import metadata_of
from .api import KubeApi, resource_version
from .apply_records import FIELD_MANAGER
from .errors import ApiError, Gone, NotFound, api_error
from .resources import Resource

__all__ = ["Changed", "Informer", "Message", "Relisted", "lean"]

logger = logging.getLogger("ome_operator.watch")

#: Seconds a watch request asks the server to keep it open (client-go: 5 to 10 minutes).
WATCH_SECONDS = 300
#: Objects per page of a listing.
PAGE_SIZE = 500
#: A watch that ends sooner than this without a single event is retried after a backoff.
_QUICK_END = 1.0


@dataclass(frozen=True)
class Relisted:
    """Every object of the collection in ``namespace`` (None: all namespaces) as listed now."""

    namespace: str | None
    items: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Changed:
    """One watch event: ``type`` is ADDED, MODIFIED or DELETED."""

    type: str
    object: dict[str, Any]


Message = Relisted | Changed


class Informer:
    """LIST and WATCH one kind in one namespace (None: all), handing messages to ``deliver``.

    ``deliver`` is called from the informer's thread with a list of messages; ``retry_delay``
    gives the wait after the n-th consecutive failure; ``on_failure`` is told of each failure,
    with the resource's ``<plural>.<group>``.
    """

    def __init__(
        self,
        api: KubeApi,
        kind: Resource,
        namespace: str | None,
        deliver: Callable[[list[Message]], None],
        *,
        retry_delay: Callable[[int], float],
        label_selector: str | None = None,
        field_selector: str | None = None,
        watch_seconds: int = WATCH_SECONDS,
        page_size: int = PAGE_SIZE,
        on_failure: Callable[[str], None] | None = None,
    ) -> None:
        self.kind = kind
        self.namespace = namespace
        self.path = kind.collection(namespace)
        self._api = api
        self._deliver = deliver
        self._retry_delay = retry_delay
        self._selector = {
            name: value
            for name, value in (
                ("labelSelector", label_selector),
                ("fieldSelector", field_selector),
            )
            if value
        }
        self._watch_seconds = watch_seconds
        self._page_size = page_size
        self._on_failure = on_failure
        self._version: str | None = None
        #: Whether a change was handed over since the last listing.
        self._progressed = False
        self._stopped = threading.Event()
        self._response: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"watch {self.path}", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop, breaking off a watch in progress."""
        self._stopped.set()
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):
                response.shutdown()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- the thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        failures = expiries = 0
        while not self._stopped.is_set():
            try:
                if self._version is None:
                    self._list()
                failures = 0 if self._watch() else failures + 1
                if failures:
                    self._stopped.wait(self._retry_delay(failures))
            except Gone:  # the version to resume from is gone: list again
                self._version = None
                expiries = 1 if self._progressed else expiries + 1
                if expiries > 1:  # gone again with no change in between: do not spin
                    self._stopped.wait(self._retry_delay(expiries - 1))
            except ApiError as exc:
                if isinstance(exc, NotFound):  # not served (yet): nothing of it exists
                    self._version = None
                    self._hand_over([Relisted(self.namespace, ())])
                failures += 1
                self._failed(str(exc), exc.status, failures)
            except Exception as exc:  # a broken stream or body; the thread must not die of it
                failures += 1
                self._failed(f"{type(exc).__name__}: {exc}", 0, failures)

    def _failed(self, error: str, status: int, failures: int) -> None:
        if self._stopped.is_set():
            return
        if self._on_failure is not None:
            self._on_failure(self.kind.qualified)
        delay = self._retry_delay(failures)
        logger.warning(
            "Watch failed",
            extra={"path": self.path, "error": error, "status": status, "retryIn": delay},
        )
        self._stopped.wait(delay)

    def _hand_over(self, batch: list[Message]) -> None:
        if self._stopped.is_set():
            return
        try:
            self._deliver(batch)
        except RuntimeError:  # the receiving event loop is closed: nobody listens any more
            self._stopped.set()

    def _list(self) -> None:
        items: list[dict[str, Any]] = []
        token, version = None, ""
        while True:
            query = {"limit": str(self._page_size), **self._selector}
            if token:
                query["continue"] = token
            page = self._api.request("GET", self.path, query=query)
            meta = metadata_of(page)
            version = version or meta.get("resourceVersion") or ""
            for item in page.get("items") or []:
                # List items may leave out their kind; watch events never do.
                item.setdefault("apiVersion", self.kind.api_version)
                item.setdefault("kind", self.kind.kind)
                items.append(lean(item))
            token = meta.get("continue")
            if not token:
                break
        self._hand_over([Relisted(self.namespace, tuple(items))])
        self._version, self._progressed = version, False

    def _watch(self) -> bool:
        """Watch until the server ends the stream; False when it ended at once, empty."""
        query = {
            "watch": "true",
            "resourceVersion": self._version or "",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(self._watch_seconds),
            **self._selector,
        }
        started, received = time.monotonic(), False
        response = self._api.open_stream(self.path, query, read_timeout=self._watch_seconds + 30)
        self._response = response
        try:
            if self._stopped.is_set():
                # stop() came while the request was under way and found no response to break
                # off: break it off here, or the stream would hold its connection until it ends.
                response.shutdown()
                return True
            pending = b""
            for chunk in response.stream(2**16):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                batch = [change for line in lines if (change := self._event(line))]
                received = received or bool(lines)
                if batch:
                    self._hand_over(batch)
                    self._progressed = True
                if self._stopped.is_set():
                    break
        finally:
            self._response = None
            response.release_conn()
        return received or time.monotonic() - started >= _QUICK_END

    def _event(self, line: bytes) -> Changed | None:
        if not line.strip():
            return None
        event = json.loads(line)
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            raise ValueError(f"not a watch event: {line[:200]!r}")
        kind, obj = event.get("type"), event["object"]
        if kind == "ERROR":
            code = obj.get("code") or 0
            message = obj.get("message")
            raise api_error(
                code if isinstance(code, int) else 0,
                message if isinstance(message, str) else None,
                str(obj.get("reason") or ""),
                fallback=f"watch {self.path}: HTTP {code}",
            )
        version = resource_version(obj)
        if version:
            self._version = version
        return Changed(kind, lean(obj)) if kind in ("ADDED", "MODIFIED", "DELETED") else None


def lean(obj: dict[str, Any]) -> dict[str, Any]:
    """The object with only the operator's own ``managedFields`` entries (its apply record:
    ``apply_records``), and of its ``Update`` entries only that they are there (a takeover
    reads the object again): the others are often as big as the rest of the object, nest as
    deep as its deepest field, and nothing here reads them."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        entries = meta.pop("managedFields")
        entries = entries if isinstance(entries, list) else []
        ours = [
            e if e.get("operation") == "Apply" else {k: v for k, v in e.items() if k != "fieldsV1"}
            for e in entries
            if isinstance(e, dict) and e.get("manager") == FIELD_MANAGER
        ]
        if ours:
            meta["managedFields"] = ours
    return obj
