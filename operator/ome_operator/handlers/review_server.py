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
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp.web
import kopf

__all__ = ["MAX_REVIEW_BYTES", "REVIEW_TIMEOUT", "ReviewServer"]

#: Bytes of one AdmissionReview the webhook reads: an UPDATE carries the object and its old
#: version, each up to the 3 MiB an API server takes per request (aiohttp's default is 1 MiB,
#: which would fail every review of an object over about 1 MiB).
MAX_REVIEW_BYTES = 8 * 2**20
#: Seconds the API server waits for a review (the webhooks' ``timeoutSeconds``): a review in
#: flight longer than that has failed already.
REVIEW_TIMEOUT = 10.0
#: Seconds aiohttp gives a request that arrived between the last review and the closing.
_LINGER = 1.0


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

    async def review(self, fn: Any, request: aiohttp.web.Request) -> aiohttp.web.StreamResponse:
        self.in_flight += 1
        self.settled.clear()
        try:
            response = await kopf.WebhookServer._serve(fn, request)
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


class ReviewServer(kopf.WebhookServer):
    """kopf's webhook server with large reviews and a graceful stop (the module's text)."""

    def __init__(self, *, grace: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.grace = grace
        self.stopping = False
        self.listening = False

    async def __call__(self, fn: Any) -> AsyncIterator[Any]:
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
        app = aiohttp.web.Application(client_max_size=MAX_REVIEW_BYTES)
        runner = aiohttp.web.AppRunner(app, handle_signals=False, shutdown_timeout=_LINGER)
        listener = _Listener(runner)

        async def review(request: aiohttp.web.Request) -> aiohttp.web.StreamResponse:
            return await listener.review(fn, request)

        app.add_routes([aiohttp.web.post(f"{path}/{{id:.*}}", review)])
        await runner.setup()
        port = self.port or self._allocate_free_port()
        listener.site = aiohttp.web.TCPSite(
            runner,
            self.addr or None,
            port,
            ssl_context=context,
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
