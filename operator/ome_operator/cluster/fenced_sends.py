"""Writes a fence guards, sent so that nothing runs between the fence's check and the send.

A write of a fenced client is *armed* with its fence check (``arm``) right before it is sent;
its connection (``fence_connections``) asks the check at the write's first send, once connected
(a TLS handshake is not in between), and hands the bytes to the kernel straight after it.
Connections are reset on close, so that a write abandoned past its wait is dropped with its
connection instead of reaching the server after the fence closed (docs/security.md, fencing).
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

import urllib3

__all__ = ["arm", "fence_connections"]

#: A fenced client's connections are reset on close (SO_LINGER 0): a write abandoned past its
#: wait is dropped with its connection instead of reaching the server after the fence closed.
_RESET_ON_CLOSE = (socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

#: The fence check of the write this thread is sending, taken by its connection's first send.
_ARMED = threading.local()


def arm(check: Callable[[], object] | None) -> None:
    """Arm (None: disarm) this thread's next send with the fence ``check``."""
    _ARMED.check = check


def fence_connections(pool: urllib3.HTTPConnectionPool) -> None:
    """Make ``pool``'s connections ask the armed fence check at a write's first send, once
    connected (a TLS handshake is not in between), and reset on close (``_RESET_ON_CLOSE``)."""
    base = pool.ConnectionCls

    class FencedConnection(base):
        def send(self, data: Any) -> None:
            check = getattr(_ARMED, "check", None)
            if check is None:
                super().send(data)
                return
            _ARMED.check = None
            if self.sock is None:
                self.connect()
            _checked_send(self.sock, data, check)

    options = pool.conn_kw.get("socket_options", base.default_socket_options)
    pool.ConnectionCls = FencedConnection
    pool.conn_kw["socket_options"] = [*(options or ()), _RESET_ON_CLOSE]


def _checked_send(sock: Any, data: bytes, check: Callable[[], object]) -> None:
    """``check()``, then ``data`` handed to the kernel by a C method called straight after it:
    between the two the interpreter has no point where it switches threads. Through Python
    code in between (``http.client``, ``ssl.SSLSocket.sendall``), a thread could be made to
    wait for another there, be paused (SIGSTOP) while it waited, and send after the pause what
    the check let through before it; the fencing test on the control plane saw it happen. The
    C call is the TLS object's ``write`` (``SSLSocket.sendall`` ends in it; the ssl module does
    not enable partial writes, so it writes all), or a plain socket's ``sendall``."""
    tls = getattr(sock, "_sslobj", None)
    write = tls.write if tls is not None else sock.sendall
    check()
    write(data)
