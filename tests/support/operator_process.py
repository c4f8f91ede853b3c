"""The real ``ome-operator run`` as a subprocess, against a real control plane.

It runs with a kubeconfig holding a token of the shipped ServiceAccount, so the shipped RBAC is
what authorizes it. Every server it starts listens on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.control_plane import free_port

#: The console script of this environment (the one ``pip install`` put beside python).
OME_OPERATOR = str(pathlib.Path(sys.executable).parent / "ome-operator")


@dataclass
class OperatorProcess:
    kubeconfig: pathlib.Path
    log: pathlib.Path
    webhook_port: int
    extra_args: Sequence[str] = ()
    #: Environment variables besides KUBECONFIG and PATH (POD_NAME, say).
    env: Mapping[str, str] = field(default_factory=dict)
    #: ``--webhook-shutdown-grace``: none, as every test stops its operator and no Service has
    #: to drop it first (the default's 5 s is for that; the HA tests set their own).
    shutdown_grace: float = 0.0
    metrics_port: int = field(default_factory=free_port)
    health_port: int = field(default_factory=free_port)
    popen: subprocess.Popen[bytes] | None = None

    def argv(self) -> list[str]:
        return [
            OME_OPERATOR,
            "run",
            "--operator-namespace=ome",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            f"--health-probe-bind-address=127.0.0.1:{self.health_port}",
            "--webhook-bind-address=127.0.0.1",
            f"--webhook-port={self.webhook_port}",
            "--log-format=json",
            f"--webhook-shutdown-grace={self.shutdown_grace:g}",
            *self.extra_args,
        ]

    def start(self, timeout: float = 60.0) -> None:
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(
                self.argv(),
                stdout=log,
                stderr=subprocess.STDOUT,
                env={"KUBECONFIG": str(self.kubeconfig), "PATH": "/usr/bin:/bin", **self.env},
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise AssertionError(f"ome-operator exited {self.popen.returncode}\n{self.tail()}")
            if self._healthy():
                return
            time.sleep(0.2)
        raise AssertionError(f"ome-operator did not become healthy\n{self.tail()}")

    def _healthy(self) -> bool:
        url = f"http://127.0.0.1:{self.health_port}/healthz"
        with contextlib.suppress(OSError, urllib.error.URLError):
            with urllib.request.urlopen(url, timeout=2) as answer:
                return answer.status == 200
        return False

    def readiness(self) -> tuple[int, str]:
        """What ``/readyz`` answers (0: nothing listens)."""
        url = f"http://127.0.0.1:{self.metrics_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError:
            return 0, ""

    def terminate(self) -> None:
        """SIGTERM, as Kubernetes stops a pod, without waiting for the exit."""
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, as Kubernetes stops a pod; the exit code (killed after ``timeout``)."""
        if self.popen is None:
            return 0
        if self.popen.poll() is None:
            self.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        return self.popen.returncode

    def kill(self) -> None:
        """SIGKILL, as a node that dies: no cleanup at all."""
        if self.popen is not None and self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def records(self) -> list[dict[str, Any]]:
        """The JSON log records so far."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    found.append(record)
        return found

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])
