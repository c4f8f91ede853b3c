"""The network rule, enforced in the test process: a socket may connect to 127.0.0.0/8 (or ::1,
or a Unix socket) and nowhere else.

Installed for the whole run by ``tests/conftest.py``. A connection elsewhere fails before any
packet leaves, with an ``OSError`` that names the address; the servers the tests start (the
emulator, the control plane, the webhook) all listen on 127.0.0.1, so nothing else is refused.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


class OffLoopback(OSError):
    """A test tried to connect somewhere outside 127.0.0.0/8."""


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (names are resolved)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in found)


def check(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0]
    if not is_loopback(host):
        raise OffLoopback(f"tests connect only to 127.0.0.0/8; refused a connection to {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    check(self, address)
    return _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    check(self, address)
    return _connect_ex(self, address)


def install() -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
