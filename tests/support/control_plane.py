"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager.

Built from Go modules by ``tests/controlplane/build.sh`` (cached by version). Everything listens
on 127.0.0.1 and the service CIDR is inside 127.0.0.0/8, so no ClusterIP ever leaves the machine.
The API server authenticates static tokens (an admin in ``system:masters``, the controller
manager) and ServiceAccount tokens, authorizes with RBAC, and writes a JSON audit log at the
``Metadata`` level: the record of every request, by user, verb and resource.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import json
import os
import pathlib
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "tests" / "controlplane" / "build.sh"
SERVICE_CIDR = "127.1.0.0/16"
ADMIN = "admin"
CONTROLLER_MANAGER = "system:kube-controller-manager"
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata"}],
}


def build_binaries() -> pathlib.Path:
    """The folder holding kube-apiserver, kube-controller-manager and etcd (built if absent)."""
    done = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], check=True, stdout=subprocess.PIPE, text=True
    )
    return pathlib.Path(done.stdout.strip().splitlines()[-1])


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


def _pem(obj: Any) -> bytes:
    return obj.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _certificates(folder: pathlib.Path) -> None:
    """A CA, the API server's serving certificate for 127.0.0.1, the ServiceAccount key pair."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ome-test-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    serving = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("127.1.0.1")),
                    x509.DNSName("localhost"),
                    x509.DNSName("kubernetes.default.svc"),
                ]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (folder / "ca.crt").write_bytes(_pem(ca))
    (folder / "apiserver.crt").write_bytes(_pem(serving))
    (folder / "apiserver.key").write_bytes(_key_pem(key))
    (folder / "sa.key").write_bytes(_key_pem(sa_key))
    (folder / "sa.pub").write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


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
class _Process:
    name: str
    argv: list[str]
    log: pathlib.Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
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


@dataclass
class ControlPlane:
    """A running control plane; ``url`` is its API server, ``admin_token`` a cluster admin."""

    folder: pathlib.Path
    binaries: pathlib.Path
    url: str = ""
    admin_token: str = ""
    _processes: dict[str, _Process] = field(default_factory=dict)

    @property
    def ca_file(self) -> pathlib.Path:
        return self.folder / "ca.crt"

    @property
    def audit_log(self) -> pathlib.Path:
        return self.folder / "audit.log"

    @property
    def admin_kubeconfig(self) -> pathlib.Path:
        return self.folder / "admin.kubeconfig"

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _certificates(self.folder)
        self.admin_token = base64.b32encode(os.urandom(20)).decode().lower()
        kcm_token = base64.b32encode(os.urandom(20)).decode().lower()
        (self.folder / "tokens.csv").write_text(
            f'{self.admin_token},{ADMIN},admin-uid,"system:masters"\n'
            f"{kcm_token},{CONTROLLER_MANAGER},kcm-uid\n",
            encoding="utf-8",
        )
        (self.folder / "audit-policy.yaml").write_text(yaml.safe_dump(AUDIT_POLICY))
        client, peer, secure = free_ports(3)
        self.url = f"https://127.0.0.1:{secure}"
        write_kubeconfig(self.admin_kubeconfig, self.url, self.ca_file, self.admin_token)
        write_kubeconfig(
            self.folder / "kcm.kubeconfig", self.url, self.ca_file, kcm_token, "kube-system"
        )
        etcd = f"http://127.0.0.1:{client}"
        self._add(
            "etcd",
            [
                str(self.binaries / "etcd"),
                "--name=test",
                f"--data-dir={self.folder / 'etcd'}",
                f"--listen-client-urls={etcd}",
                f"--advertise-client-urls={etcd}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=test=http://127.0.0.1:{peer}",
                "--listen-metrics-urls=",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )
        self._add("kube-apiserver", self._apiserver_argv(etcd, secure))
        self._add(
            "kube-controller-manager",
            [
                str(self.binaries / "kube-controller-manager"),
                f"--kubeconfig={self.folder / 'kcm.kubeconfig'}",
                "--controllers=garbagecollector,namespace,serviceaccount,serviceaccount-token,"
                "deployment,replicaset,disruption",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                "--secure-port=0",
                f"--service-account-private-key-file={self.folder / 'sa.key'}",
                f"--root-ca-file={self.ca_file}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--v=1",
            ],
        )
        self._processes["etcd"].start()
        self._wait_for_etcd(client)
        self._processes["kube-apiserver"].start()
        self.wait_ready()
        self._processes["kube-controller-manager"].start()
        self._wait_for_default_service_account()

    def _apiserver_argv(self, etcd: str, port: int) -> list[str]:
        folder = self.folder
        return [
            str(self.binaries / "kube-apiserver"),
            f"--etcd-servers={etcd}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--tls-cert-file={folder / 'apiserver.crt'}",
            f"--tls-private-key-file={folder / 'apiserver.key'}",
            f"--client-ca-file={self.ca_file}",
            f"--token-auth-file={folder / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            f"--service-account-issuer={self.url}",
            f"--service-account-key-file={folder / 'sa.pub'}",
            f"--service-account-signing-key-file={folder / 'sa.key'}",
            "--api-audiences=https://kubernetes.default.svc",
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            f"--audit-policy-file={folder / 'audit-policy.yaml'}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
            "--profiling=false",
            "--enable-priority-and-fairness=false",
            "--v=1",
        ]

    def _add(self, name: str, argv: list[str]) -> None:
        self._processes[name] = _Process(name, argv, self.folder / f"{name}.log")

    def stop(self) -> None:
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
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
def running_control_plane(folder: pathlib.Path) -> Iterator[ControlPlane]:
    plane = ControlPlane(folder, build_binaries())
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()
