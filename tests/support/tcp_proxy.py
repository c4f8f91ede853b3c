"""A loopback TCP balancer, standing in for a Service in front of several webhook servers: each
connection goes to the first backend that accepts it, starting from the next one in turn (a
backend that is down is skipped). Given readiness URLs, it sends new connections only to the
backends whose URL answers 200, looked at every ``READY_INTERVAL`` seconds, as a Service routes
only to Ready pods. Listens on 127.0.0.1 only; every backend is on 127.0.0.1."""

from __future__ import annotations

import contextlib
import itertools
import socket
import socketserver
import threading
import urllib.request
from collections.abc import Iterator, Mapping, Sequence

__all__ = ["loopback_balancer"]

_CHUNK = 65536


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(_CHUNK):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


#: Seconds between looks at the backends' readiness (the endpoints' propagation, in a cluster).
READY_INTERVAL = 0.05


def _answers_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as answer:
            return answer.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def loopback_balancer(
    port: int, backends: Sequence[int], ready: Mapping[int, str] | None = None
) -> Iterator[None]:
    """Balance ``port`` over ``backends``; ``ready``: each backend's readiness URL."""
    turn = itertools.count()
    routed = [frozenset(backends) if ready is None else frozenset()]  # swapped whole
    stopped = threading.Event()

    def look() -> None:
        while not stopped.wait(READY_INTERVAL):
            routed[0] = frozenset(b for b in backends if _answers_ok((ready or {})[b]))

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            first = next(turn)
            for n in range(len(backends)):
                backend = backends[(first + n) % len(backends)]
                if backend not in routed[0]:
                    continue
                try:
                    upstream = socket.create_connection(("127.0.0.1", backend), timeout=2)
                except OSError:
                    continue
                with upstream:
                    upstream.settimeout(None)
                    back = threading.Thread(target=_pipe, args=(upstream, self.request))
                    back.start()
                    _pipe(self.request, upstream)
                    back.join(30)
                return

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = 128  # the API server opens many connections at once

    looking = threading.Thread(target=look, daemon=True)
    with Server(("127.0.0.1", port), Handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        if ready is not None:
            looking.start()
        try:
            yield
        finally:
            stopped.set()
            server.shutdown()
            thread.join(10)
            if ready is not None:
                looking.join(10)
