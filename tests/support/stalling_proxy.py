"""A loopback TCP proxy to one upstream whose connections can be stalled, as a network partition
stalls them, and healed.

While stalled nothing is forwarded either way: the bytes each side sends are held, in order, as
its TCP stack would hold them unacknowledged and retransmit them. On heal they are delivered,
except on a connection whose sender reset it meanwhile (an abortive close, SO_LINGER 0): TCP drops
what a reset connection had not delivered, so the proxy drops it too and resets the other side.
A connection closed normally (FIN) while stalled delivers what it held, then its end. New
connections are accepted and connected upstream while stalled (loopback cannot refuse them), but
carry nothing until the heal. Listens on 127.0.0.1 only; the upstream is on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import struct
import threading
from collections.abc import Iterator

__all__ = ["StallingProxy", "stalling_proxy"]

_CHUNK = 65536
_RESET = struct.pack("ii", 1, 0)


class _Direction:
    """One direction of a connection: bytes from ``source`` to ``target``, held while stalled."""

    def __init__(self, source: socket.socket, target: socket.socket) -> None:
        self.source, self.target = source, target
        self.lock = threading.Lock()
        self.held: list[bytes] = []
        self.ended = False  # the source closed normally: end the target once delivered

    def flush(self) -> None:
        """Deliver what is held (with the lock)."""
        with contextlib.suppress(OSError):
            for data in self.held:
                self.target.sendall(data)
            if self.ended:
                self.target.shutdown(socket.SHUT_WR)
        self.held.clear()


class StallingProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._stalled = threading.Event()
        self._guard = threading.Lock()
        self._directions: list[_Direction] = []

    def stall(self) -> None:
        self._stalled.set()

    def heal(self) -> None:
        with self._guard:
            self._stalled.clear()
            directions = list(self._directions)
        for direction in directions:
            with direction.lock:
                direction.flush()

    def _pipe(self, direction: _Direction) -> None:
        while True:
            try:
                data = direction.source.recv(_CHUNK)
            except OSError:  # reset: what it held dies with it, and the other side is reset
                with direction.lock:
                    direction.held.clear()
                _reset(direction.target)
                return
            with direction.lock:
                if data:
                    direction.held.append(data)
                else:
                    direction.ended = True
                if not self._stalled.is_set():
                    direction.flush()
            if not data:
                return  # delivered, or the heal delivers the end

    def handle(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
        except OSError:
            _reset(client)
            return
        upstream.settimeout(None)
        out, back = _Direction(client, upstream), _Direction(upstream, client)
        with self._guard:
            self._directions += [out, back]
        returning = threading.Thread(target=self._pipe, args=(back,), daemon=True)
        returning.start()
        self._pipe(out)
        returning.join()
        with self._guard:
            self._directions = [d for d in self._directions if d not in (out, back)]
        upstream.close()


def _reset(sock: socket.socket) -> None:
    """Close ``sock`` with a reset; its reader (the other direction's thread) wakes first, as
    the reset is sent only once no thread is inside a call on it."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        sock.shutdown(socket.SHUT_RD)
    sock.close()


@contextlib.contextmanager
def stalling_proxy(upstream_port: int) -> Iterator[StallingProxy]:
    """A proxy on a free 127.0.0.1 port (``proxy.port``) to ``upstream_port``."""
    proxy = StallingProxy(upstream_port)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            proxy.handle(self.request)

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        block_on_close = False

    with Server(("127.0.0.1", 0), Handler) as server:
        proxy.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield proxy
        finally:
            proxy.heal()
            server.shutdown()
            thread.join(10)
