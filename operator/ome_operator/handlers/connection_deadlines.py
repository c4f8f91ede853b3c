"""Deadlines on each connection of the webhook's aiohttp server: a connection that sends nothing,
trickles its headers or its body, or sits idle between reviews is aborted
(docs/webhook.md, "Connections and timeouts").

aiohttp's own ``keepalive_timeout`` counts from a connection's start or its last answer, so a
client trickling a request's headers is closed only when that runs out, and nothing bounds a
body that never ends. ``WatchedSite`` wraps each connection's protocol in ``_Watched``, which
keeps one timer, re-armed as the connection moves from phase to phase:

====================  ==========================================  =============================
phase                 from                                        deadline
====================  ==========================================  =============================
idle                  the TLS handshake, or the last answer       ``idle``: nothing arrives
headers               the first byte of a request                 ``header``: headers incomplete
body                  the headers are complete (the handler runs) ``body``: the body incomplete
answering             the body is read                            none (the review's own time)
====================  ==========================================  =============================

The TLS handshake itself is bounded by ``header`` (asyncio's ``ssl_handshake_timeout``). The
handler moves a connection from body to answering (``body_read``); ``deadline_middleware`` moves
it into the body phase and back to idle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp.web

__all__ = [
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "IDLE_TIMEOUT",
    "ConnectionTimeouts",
    "WatchedSite",
    "body_read",
    "deadline_middleware",
]

#: Seconds a request's headers may take from its first byte (and a TLS handshake from the
#: connection): the API server gives a review 10 s in all, so a review slower than that has
#: failed already; the API server sends headers and body at once.
HEADER_TIMEOUT = 10.0
#: Seconds a request's body may take once its headers are read (same reasoning).
BODY_TIMEOUT = 10.0
#: Seconds an open connection may wait for its next request. The API server keeps an idle
#: connection for reuse up to 90 s (Go's transport defaults in its webhook client) and
#: notices at once when the server closes one; 30 s keeps a connection through a burst of
#: reviews and releases what a quiet or hostile client holds.
IDLE_TIMEOUT = 30.0


@dataclass(frozen=True)
class ConnectionTimeouts:
    """The deadlines of the module's table, in seconds."""

    header: float = HEADER_TIMEOUT
    body: float = BODY_TIMEOUT
    idle: float = IDLE_TIMEOUT


class _Watched(asyncio.Protocol):
    """aiohttp's protocol for one connection, behind one deadline timer."""

    def __init__(
        self, inner: Any, timeouts: ConnectionTimeouts, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.inner = inner
        self.timeouts = timeouts
        self.loop = loop
        self.transport: asyncio.BaseTransport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.idle = True  # waiting for the first byte of a request

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)
        self._arm(self.timeouts.idle)

    def data_received(self, data: bytes) -> None:
        if self.idle:
            self.idle = False
            self._arm(self.timeouts.header)
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # -- the phases the request handling reports -----------------------------------------------

    def request_started(self) -> None:
        self.idle = False
        self._arm(self.timeouts.body)

    def body_read(self) -> None:
        self._disarm()

    def request_done(self) -> None:
        self.idle = True
        self._arm(self.timeouts.idle)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self.timer = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expire(self) -> None:
        self.timer = None
        if self.transport is not None:
            self.transport.abort()  # type: ignore[attr-defined]


def _watched(request: aiohttp.web.BaseRequest) -> _Watched | None:
    transport = request.transport
    protocol = transport.get_protocol() if transport is not None else None
    return protocol if isinstance(protocol, _Watched) else None


def body_read(request: aiohttp.web.BaseRequest) -> None:
    """``request``'s body is read: its connection leaves the body deadline."""
    watched = _watched(request)
    if watched is not None:
        watched.body_read()


@aiohttp.web.middleware
async def deadline_middleware(
    request: aiohttp.web.Request,
    handler: Callable[[aiohttp.web.Request], Awaitable[aiohttp.web.StreamResponse]],
) -> aiohttp.web.StreamResponse:
    """Each request's connection in the body phase while its handler runs, idle after."""
    watched = _watched(request)
    if watched is None:
        return await handler(request)
    watched.request_started()
    try:
        return await handler(request)
    finally:
        watched.request_done()


class WatchedSite(aiohttp.web.TCPSite):
    """A ``TCPSite`` whose connections keep the deadlines of ``timeouts``."""

    def __init__(self, *args: Any, timeouts: ConnectionTimeouts, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeouts = timeouts

    async def start(self) -> None:
        await aiohttp.web.BaseSite.start(self)  # registers the site with its runner
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        timeouts = self.timeouts
        self._server = await loop.create_server(
            lambda: _Watched(server(), timeouts, loop),
            self._host,
            self._port,
            ssl=self._ssl_context,
            ssl_handshake_timeout=timeouts.header if self._ssl_context is not None else None,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
            reuse_port=self._reuse_port,
        )
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port
