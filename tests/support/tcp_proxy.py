"""A loopback TCP balancer, standing in for a Service in front of several webhook servers: each
connection goes to the first backend that accepts it, starting from the next one in turn (a
backend that is down is skipped, as a Service skips a pod that is not ready). Listens on
127.0.0.1 only; every backend is on 127.0.0.1."""

from __future__ import annotations

import contextlib
import itertools
import socket
import socketserver
import threading
from collections.abc import Iterator, Sequence

__all__ = ["loopback_balancer"]

_CHUNK = 65536


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(_CHUNK):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def loopback_balancer(port: int, backends: Sequence[int]) -> Iterator[None]:
    turn = itertools.count()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            first = next(turn)
            for n in range(len(backends)):
                backend = backends[(first + n) % len(backends)]
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

    with Server(("127.0.0.1", port), Handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield
        finally:
            server.shutdown()
            thread.join(10)
