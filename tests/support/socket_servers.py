"""Stopping a ``socketserver`` server (the metrics endpoint, a test's own HTTP server) at once."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading


def shut(server: socketserver.BaseServer) -> None:
    """``shutdown()`` then ``server_close()``, without waiting for the serving thread's poll.

    ``serve_forever`` sees a shutdown request only when its poll returns (every 0.5 s by
    default): connections are made until it has stopped, each one ending the poll at once.
    """
    host, port = server.server_address[:2]
    stopping = threading.Thread(target=server.shutdown, name="shutdown", daemon=True)
    stopping.start()
    while stopping.is_alive():
        with contextlib.suppress(OSError):
            socket.create_connection((host, port), timeout=1).close()
        stopping.join(0.01)
    server.server_close()
