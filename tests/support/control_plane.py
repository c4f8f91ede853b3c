"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler.

Built from Go modules by ``tests/controlplane/build.sh`` (cached by version). Everything listens
on 127.0.0.1 and the service CIDR is inside 127.0.0.0/8, so no ClusterIP ever leaves the machine.
The API server authenticates static tokens (an admin in ``system:masters``, the controller
manager, the scheduler) and ServiceAccount tokens, authorizes with RBAC, and writes a JSON audit
log at the ``Metadata`` level: the record of every request, by user, verb and resource. Nodes
(KWOK) and the LeaderWorkerSet controller run beside it: ``kwok_nodes`` and
``leader_worker_set_controller``. The components' command lines are in ``control_plane_commands``;
a plane started with ``Features`` (``gang_scheduling``) runs them with alpha gates on.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import pathlib
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.support import go_builds
from tests.support.certificates import write_control_plane_certificates
from tests.support.control_plane_commands import (
    AUDIT_LOG,
    AUDIT_POLICY,
    CA_FILE,
    NO_FEATURES,
    NODE_MONITOR,
    Features,
    apiserver_argv,
    controller_manager_argv,
    etcd_argv,
    scheduler_argv,
)
from tests.support.local_processes import (
    Process,
    free_port,
    free_ports,
    kept_port,
    write_kubeconfig,
)

__all__ = [
    "Binaries",
    "ControlPlane",
    "Features",
    "Process",
    "build_binaries",
    "free_port",
    "free_ports",
    "kept_port",
]
__all__ += ["NODE_MONITOR", "running_control_plane", "user_requests", "write_kubeconfig"]

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "tests" / "controlplane" / "build.sh"
ADMIN = "admin"
CONTROLLER_MANAGER = "system:kube-controller-manager"
#: The scheduler's user: the built-in ClusterRoles system:kube-scheduler and
#: system:volume-scheduler are bound to it.
SCHEDULER = "system:kube-scheduler"


@dataclass(frozen=True)
class Binaries:
    """The folders ``build.sh`` prints: each set cached by its own version and pins."""

    #: kube-apiserver, kube-controller-manager, kube-scheduler, etcd.
    controlplane: pathlib.Path
    #: kwok, and rbac/ (KWOK's ClusterRole and ServiceAccount).
    kwok: pathlib.Path
    #: lws-controller, and config/ (the LeaderWorkerSet CRDs, webhooks, RBAC).
    lws: pathlib.Path


def build_binaries(progress: Callable[[str], None] | None = None) -> Binaries:
    """Build what is absent (a no-op when everything is cached) and name the folders;
    ``progress`` is given each line the build reports as it goes."""
    folders = go_builds.run(BUILD_SCRIPT, progress)
    return Binaries(
        **{name: pathlib.Path(folders[name]) for name in ("controlplane", "kwok", "lws")}
    )


@dataclass
class ControlPlane:
    """A running control plane; ``url`` is its API server, ``admin_token`` a cluster admin."""

    folder: pathlib.Path
    binaries: Binaries
    #: Feature gates, API versions and controllers beyond Kubernetes' defaults (none by default).
    features: Features = NO_FEATURES
    url: str = ""
    admin_token: str = ""
    _processes: dict[str, Process] = field(default_factory=dict)

    @property
    def ca_file(self) -> pathlib.Path:
        return self.folder / CA_FILE

    @property
    def audit_log(self) -> pathlib.Path:
        return self.folder / AUDIT_LOG

    @property
    def admin_kubeconfig(self) -> pathlib.Path:
        return self.folder / "admin.kubeconfig"

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_control_plane_certificates(self.folder)
        self.admin_token, kcm_token, scheduler_token = (
            base64.b32encode(os.urandom(20)).decode().lower() for _ in range(3)
        )
        (self.folder / "tokens.csv").write_text(
            f'{self.admin_token},{ADMIN},admin-uid,"system:masters"\n'
            f"{kcm_token},{CONTROLLER_MANAGER},kcm-uid\n"
            f"{scheduler_token},{SCHEDULER},scheduler-uid\n",
            encoding="utf-8",
        )
        (self.folder / "audit-policy.yaml").write_text(yaml.safe_dump(AUDIT_POLICY))
        client, peer, secure, scheduler = free_ports(4)
        self.url = f"https://127.0.0.1:{secure}"
        write_kubeconfig(self.admin_kubeconfig, self.url, self.ca_file, self.admin_token)
        write_kubeconfig(
            self.folder / "kcm.kubeconfig", self.url, self.ca_file, kcm_token, "kube-system"
        )
        write_kubeconfig(
            self.folder / "scheduler.kubeconfig", self.url, self.ca_file, scheduler_token
        )
        etcd, binaries = f"http://127.0.0.1:{client}", self.binaries.controlplane
        self._add("etcd", etcd_argv(binaries, self.folder, client, peer))
        self._add(
            "kube-apiserver",
            apiserver_argv(binaries, self.folder, self.url, etcd, secure, self.features),
        )
        self._add(
            "kube-controller-manager", controller_manager_argv(binaries, self.folder, self.features)
        )
        self._processes["etcd"].start()
        self._wait_for_etcd(client)
        self._processes["kube-apiserver"].start()
        self.wait_ready()
        self._add("kube-scheduler", scheduler_argv(binaries, self.folder, scheduler, self.features))
        self._processes["kube-controller-manager"].start()
        self._processes["kube-scheduler"].start()
        self._wait_for_default_service_account()
        self._wait_for_scheduler(scheduler)

    def _add(self, name: str, argv: list[str]) -> None:
        self._processes[name] = Process(name, argv, self.folder / f"{name}.log")

    def stop(self) -> None:
        for name in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
            if name in self._processes:
                self._processes[name].stop(grace=10)

    def restart_apiserver(self, grace: float = 40.0) -> None:
        """Stop the API server (SIGTERM: its graceful shutdown) and start it again."""
        server = self._processes["kube-apiserver"]
        server.stop(grace)
        server.start()
        self.wait_ready()

    def pids(self, *names: str) -> list[int]:
        """Process ids of the named components (e.g. ``kube-apiserver``, ``etcd``)."""
        return [p.popen.pid for n, p in self._processes.items() if n in names and p.popen]

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.tail()}" for p in self._processes.values())

    # -- readiness ---------------------------------------------------------------------------

    def _wait(self, ready: Callable[[], bool], what: str, timeout: float) -> None:
        """Poll ``ready`` (connection failures count as not yet) until it holds or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, urllib.error.URLError):
                if ready():
                    return
            time.sleep(0.2)
        raise RuntimeError(f"{what}\n{self.logs()}")

    def _wait_for_etcd(self, port: int) -> None:
        def healthy() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                return json.loads(answer.read()).get("health") == "true"

        self._wait(healthy, "etcd did not become healthy", 30.0)

    def wait_ready(self, timeout: float = 60.0) -> None:
        self._wait(
            lambda: self.raw("GET", "/readyz")[0] == 200,
            "kube-apiserver did not become ready",
            timeout,
        )

    def _wait_for_scheduler(self, port: int) -> None:
        def healthy() -> bool:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # its own self-signed certificate
            url = f"https://127.0.0.1:{port}/healthz"
            with urllib.request.urlopen(url, context=context, timeout=2) as answer:
                return answer.status == 200

        self._wait(healthy, "kube-scheduler did not become healthy", 60.0)

    def _wait_for_default_service_account(self) -> None:
        self._wait(
            lambda: self.raw("GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200,
            "the controller manager made no ServiceAccount",
            60.0,
        )

    # -- access ------------------------------------------------------------------------------

    def _context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """One request (admin unless ``token``): the status and the decoded answer."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token or self.admin_token}")
        request.add_header("Content-Type", content_type)
        request.add_header("Accept", "application/json")
        try:
            with urllib.request.urlopen(request, context=self._context(), timeout=30) as r:
                status, text = r.status, r.read()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read()
        try:
            return status, json.loads(text) if text.strip() else {}
        except ValueError:
            return status, text.decode(errors="replace")

    def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        """Like ``raw``, but any status of 400 or more fails."""
        status, answer = self.raw(method, path, body, **kwargs)
        if status >= 400:
            raise AssertionError(f"{method} {path}: HTTP {status}: {answer}")
        return answer

    def kubectl(
        self,
        *args: str,
        stdin: str | None = None,
        kubeconfig: pathlib.Path | None = None,
        check: bool = True,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["kubectl", f"--kubeconfig={kubeconfig or self.admin_kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "KUBECONFIG": str(kubeconfig or self.admin_kubeconfig)},
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        return done

    def token(self, service_account: str, namespace: str) -> str:
        """A real ServiceAccount token (TokenRequest), valid for a day."""
        return self.kubectl(
            "create", "token", service_account, "-n", namespace, "--duration=24h"
        ).stdout.strip()

    # -- the audit log -----------------------------------------------------------------------

    def audit_mark(self) -> int:
        """A position in the audit log; ``audit_since`` reads what came after it."""
        return self.audit_log.stat().st_size if self.audit_log.exists() else 0

    def audit_since(self, mark: int = 0) -> list[dict[str, Any]]:
        with self.audit_log.open("rb") as log:
            log.seek(mark)
            text = log.read().decode(errors="replace")
        records = []
        for line in text.splitlines():
            with contextlib.suppress(ValueError):
                records.append(json.loads(line))
        return records


def user_requests(
    records: Sequence[dict[str, Any]], user: str, verbs: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The audit records of requests by ``user`` (with one of ``verbs``, when given)."""
    return [
        r
        for r in records
        if r.get("user", {}).get("username") == user and (verbs is None or r.get("verb") in verbs)
    ]


@contextlib.contextmanager
def running_control_plane(
    folder: pathlib.Path, features: Features = NO_FEATURES
) -> Iterator[ControlPlane]:
    plane = ControlPlane(folder, build_binaries(), features)
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()
