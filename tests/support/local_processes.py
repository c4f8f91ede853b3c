"""What the tier needs to run programs on loopback: free ports on 127.0.0.1, kubeconfigs with a
token, and a program whose output goes to a log file."""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import socket
import subprocess
from dataclasses import dataclass, field

import yaml


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports on 127.0.0.1: held open together while they are picked,
    so that no two of them are the same (one at a time, the kernel may hand a port out twice)."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


#: Where ``kept_port`` looks: below the kernel's ephemeral range (ip_local_port_range starts at
#: 32768 by default), so no outgoing connection is given the port while nothing listens on it.
_KEPT_PORTS = range(20000, 32000)
_kept: set[int] = set()


def kept_port() -> int:
    """A free port on 127.0.0.1 that stays this process's for a whole session, through the times
    nothing listens on it (a webhook's port between two runs of the operator): one from the
    ephemeral range could meanwhile become the local port of any outgoing connection, and the
    next listener would then fail to bind ("address already in use"). Never the same twice."""
    start = os.getpid() % len(_KEPT_PORTS)
    for step in range(len(_KEPT_PORTS)):
        port = _KEPT_PORTS[(start + step * 7919) % len(_KEPT_PORTS)]
        if port in _kept:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _kept.add(port)
        return port
    raise RuntimeError(f"no free port on 127.0.0.1 in {_KEPT_PORTS}")


def write_kubeconfig(
    path: pathlib.Path, server: str, ca_file: pathlib.Path, token: str, namespace: str = "default"
) -> pathlib.Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "test", "cluster": {"server": server, "certificate-authority": str(ca_file)}}
        ],
        "users": [{"name": "user", "user": {"token": token}}],
        "contexts": [
            {"name": "test", "context": {"cluster": "test", "user": "user", "namespace": namespace}}
        ],
        "current-context": "test",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@dataclass
class Process:
    """A program the tier runs, its output appended to ``log``."""

    name: str
    argv: list[str]
    log: pathlib.Path
    #: Environment variables set for it, besides this process's own.
    env: dict[str, str] = field(default_factory=dict)
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **self.env} if self.env else None,
            )

    def stop(self, grace: float = 30.0) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])
