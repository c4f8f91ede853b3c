"""The admission webhook's HTTPS server: kopf's ``WebhookServer``, reading reviews up to
``MAX_REVIEW_BYTES``, with a stop that refuses no review.

kopf stops its server at once on SIGTERM, and aiohttp then stops reading every connection: a
review whose body had not fully arrived waited for it until the API server's timeout (10 s)
failed the request, and a review sent on an idle connection just then met a closed one. With
``failurePolicy: Fail`` a rolling update refused requests. A stopping ``ReviewServer`` instead:

1. says so (``stopping``: ``/readyz`` answers 503, and the webhook Service takes the replica out
   of its endpoints) and closes each connection after its next answer (``Connection: close``),
   so no connection is closed under a review the API server is sending;
2. keeps its port open for ``grace`` seconds (``--webhook-shutdown-grace``), answering what the
   Service still sends it meanwhile;
3. closes its port, waits for the reviews in flight (at most ``REVIEW_TIMEOUT``) and only then
   closes the connections that stayed idle.

A renewed certificate (its files change) starts a new listener beside the old one on the same
port (``SO_REUSEPORT``), and the old one then winds down the same way: the port never closes.

What it serves (docs/webhook.md, "What the webhook refuses to read"): ``POST /<id>`` for the id of
each validating handler kopf holds, 404 elsewhere (kopf answered any path, an unknown one with
``allowed: true``). A body is read (``review_reading``) before kopf sees it: one that is not an
AdmissionReview is answered 400 with the sentence that says why, and one nested deeper than an
API server sends is denied. Each is one WARNING line, no traceback. Every connection keeps the
deadlines of ``connection_deadlines``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import functools
import hashlib
import logging
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp.web
import kopf
from kopf._core.engines.admission import (  # what kopf raises for a review it cannot route
    AmbiguousResourceError,
    UnknownResourceError,
    WebhookError,
)

from .connection_deadlines import (
    ConnectionTimeouts,
    WatchedSite,
    body_read,
    deadline_middleware,
)
from .review_reading import MalformedReview, TooDeepReview, read_review

__all__ = [
    "MAX_REVIEW_BYTES",
    "REVIEW_TIMEOUT",
    "ConnectionTimeouts",
    "ReviewServer",
    "remembering_nothing",
]

#: Bytes of one AdmissionReview the webhook reads: an UPDATE carries the object and its old
#: version, each up to the 3 MiB an API server takes per request (aiohttp's default is 1 MiB,
#: which would fail every review of an object over about 1 MiB).
MAX_REVIEW_BYTES = 8 * 2**20
#: Seconds the API server waits for a review (the webhooks' ``timeoutSeconds``): a review in
#: flight longer than that has failed already.
REVIEW_TIMEOUT = 10.0
#: Seconds aiohttp gives a request that arrived between the last review and the closing.
_LINGER = 1.0
#: Connections the kernel queues before they are accepted: a burst of reviews from several API
#: servers opens many at once (aiohttp's default is 128).
_BACKLOG = 1024
#: The status code of a review denied for its depth (as the handlers deny any bad object).
_DENIED = 403

logger = logging.getLogger("ome_operator.admission")


@dataclass(eq=False)
class _Listener:
    """One bound port: its runner, and the reviews it is answering."""

    runner: aiohttp.web.AppRunner
    site: aiohttp.web.TCPSite | None = None
    closing: bool = False
    in_flight: int = 0
    settled: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.settled.set()

    async def review(
        self, fn: Any, request: aiohttp.web.Request, handler_id: str
    ) -> aiohttp.web.StreamResponse:
        self.in_flight += 1
        self.settled.clear()
        try:
            response = await _serve(fn, request, handler_id)
        finally:
            self.in_flight -= 1
            if not self.in_flight:
                self.settled.set()
        if self.closing:
            response.force_close()
        return response

    async def wind_down(self, grace: float) -> None:
        """Steps 1 to 3 of the module's text."""
        self.closing = True
        try:
            await asyncio.sleep(grace)
            if self.site is not None:
                await self.site.stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.settled.wait(), REVIEW_TIMEOUT)
        finally:
            await self.runner.cleanup()


def _digest(paths: Sequence[str]) -> str | None:
    """A digest of the files' bytes (None: one cannot be read now, as while it is replaced)."""
    hasher = hashlib.sha256()
    try:
        for path in paths:
            with open(path, "rb") as file:
                hasher.update(file.read())
    except OSError:
        return None
    return hasher.hexdigest()


def _plain(status: int, text: str) -> aiohttp.web.Response:
    return aiohttp.web.Response(status=status, text=f"{text}\n")


def _refused(request: aiohttp.web.Request, error: str) -> None:
    logger.warning("Refused an admission review", extra={"path": request.path, "error": error})


async def _serve(
    fn: Any, request: aiohttp.web.Request, handler_id: str
) -> aiohttp.web.StreamResponse:
    """One review: read and checked here, answered by kopf's ``fn`` (kopf's own ``_serve``
    passed any body to it, and a malformed one failed inside)."""
    body = await request.read()
    body_read(request)
    try:
        review = read_review(body)
    except TooDeepReview as exc:
        _refused(request, str(exc))
        return aiohttp.web.json_response(_denial(exc.envelope, str(exc)))
    except MalformedReview as exc:
        _refused(request, str(exc))
        return _plain(400, str(exc))
    transport = request.transport
    try:
        answer = await fn(
            review,
            webhook=handler_id,
            sslpeer=transport.get_extra_info("peercert") if transport is not None else None,
            headers=dict(request.headers),
        )
    except AmbiguousResourceError as exc:
        return _plain(409, str(exc))
    except UnknownResourceError as exc:
        return _plain(404, str(exc))
    except WebhookError as exc:
        return _plain(400, str(exc))
    return aiohttp.web.json_response(answer)


def _denial(envelope: dict[str, Any], message: str) -> dict[str, Any]:
    """The AdmissionReview denying the review ``envelope`` came in (kopf's answer's shape)."""
    return {
        "apiVersion": _text(envelope.get("apiVersion"), "admission.k8s.io/v1"),
        "kind": _text(envelope.get("kind"), "AdmissionReview"),
        "response": {
            "uid": envelope["request"]["uid"],
            "allowed": False,
            "status": {"message": message, "code": _DENIED},
        },
    }


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _handler_ids(fn: Any) -> list[str]:
    """The ids of the webhook handlers of the kopf registry ``fn`` serves (kopf binds it to
    ``serve_admission_request`` with ``functools.partial``), else of kopf's default registry.
    kopf keeps them in ``_webhooks``: it has no public listing."""
    registry = getattr(fn, "keywords", {}).get("registry") or kopf.get_default_registry()
    return sorted({handler.id for handler in registry._webhooks.get_all_handlers()})


class _MemosKeptByNone:
    """kopf's memory getter for reviews, keeping nothing. kopf's own keeps a memo per object uid
    of every UPDATE and DELETE review for ever (it forgets one on a deletion its own watches see,
    and here it watches nothing), so reviews with ever new uids grew the operator's memory
    without bound; a review's handlers read only the operator's memo, of which each gets a copy."""

    async def recall_memo(
        self, raw_body: Any, *, memobase: Any = None, ephemeral: bool = False
    ) -> Any:
        return copy.copy(memobase) if memobase is not None else kopf.Memo()


def remembering_nothing(fn: Any) -> Any:
    """kopf's review function ``fn`` with memories that keep nothing (``_MemosKeptByNone``)."""
    if isinstance(fn, functools.partial) and "memories" in fn.keywords:
        return functools.partial(fn, memories=_MemosKeptByNone())
    return fn


class ReviewServer(kopf.WebhookServer):
    """kopf's webhook server with large reviews, checked bodies, deadlines on every connection
    and a graceful stop (the module's text). ``handler_ids``: the paths served (default: the
    handlers kopf holds)."""

    def __init__(
        self,
        *,
        grace: float = 0.0,
        timeouts: ConnectionTimeouts | None = None,
        handler_ids: Collection[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.grace = grace
        self.timeouts = timeouts or ConnectionTimeouts()
        self.handler_ids = handler_ids
        self.stopping = False
        self.listening = False

    async def __call__(self, fn: Any) -> AsyncIterator[Any]:
        fn = remembering_nothing(fn)
        listener: _Listener | None = None
        winding: set[asyncio.Task[None]] = set()  # the listeners replaced, until they are down

        def wind_down(old: _Listener) -> None:
            task = asyncio.create_task(old.wind_down(self.grace))
            winding.add(task)
            task.add_done_callback(winding.discard)

        try:
            while True:
                fresh, client_config = await self._listen(fn)
                self.listening = True
                if listener is not None:
                    wind_down(listener)
                listener = fresh
                yield client_config
                await self._until_files_change()
        finally:
            self.stopping = True
            if listener is not None:
                wind_down(listener)
            await asyncio.gather(*winding, return_exceptions=True)
            self.listening = False

    async def _listen(self, fn: Any) -> tuple[_Listener, Any]:
        cadata, context = self._build_ssl()
        path = (self.path or "").rstrip("/")
        app = aiohttp.web.Application(
            client_max_size=MAX_REVIEW_BYTES, middlewares=[deadline_middleware]
        )
        runner = aiohttp.web.AppRunner(
            app,
            handle_signals=False,
            shutdown_timeout=_LINGER,
            keepalive_timeout=self.timeouts.idle,
        )
        listener = _Listener(runner)

        def route(handler_id: str) -> aiohttp.web.RouteDef:
            async def review(request: aiohttp.web.Request) -> aiohttp.web.StreamResponse:
                return await listener.review(fn, request, handler_id)

            return aiohttp.web.post(f"{path}/{handler_id}", review)

        ids = _handler_ids(fn) if self.handler_ids is None else sorted(self.handler_ids)
        app.add_routes([route(handler_id) for handler_id in ids])
        await runner.setup()
        port = self.port or self._allocate_free_port()
        listener.site = WatchedSite(
            runner,
            self.addr or None,
            port,
            timeouts=self.timeouts,
            ssl_context=context,
            backlog=_BACKLOG,
            reuse_port=True,  # a renewed certificate's listener binds beside the old one
            reuse_address=True,
        )
        await listener.site.start()
        scheme = "http" if context is None else "https"
        host = self.host or self.DEFAULT_HOST or self._get_accessible_addr(self.addr)
        client_config: dict[str, Any] = {"url": self._build_url(scheme, host, port, path)}
        if cadata is not None:
            client_config["caBundle"] = base64.b64encode(cadata).decode("ascii")
        return listener, client_config

    async def _until_files_change(self) -> None:
        """Return once the certificate files change: they are read again every
        ``file_check_interval`` seconds (a mounted Secret sends no file events)."""
        paths = [str(p) for p in (self.certfile, self.pkeyfile, self.cafile) if p is not None]
        first = _digest(paths)
        while True:
            await asyncio.sleep(self.file_check_interval)
            now = _digest(paths)
            if now is not None and now != first:
                return
