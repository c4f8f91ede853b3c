"""The real LeaderWorkerSet controller (``sigs.k8s.io/lws``, built by ``build.sh``) beside the
test control plane, with its webhooks on.

Installed from what its Go module ships (``config/``): its CRDs (``crd/bases``, the
LeaderWorkerSet and the DisaggregatedSet v0.9.0 also watches, without the conversion-webhook patch:
one version, nothing to convert), its RBAC (``rbac/``, with the ``lws-`` prefix and the
``lws-system`` namespace its kustomization gives them) for its own ServiceAccount, and its
webhook configurations (``webhook/manifests.yaml`` plus the pod ``objectSelector`` patches of
``webhook/kustomization.yaml``) rewritten to call ``https://127.0.0.1:<port>/...`` with the test
CA's bundle. It runs as a process with that ServiceAccount's token: internal certificate
management off (a serving certificate for 127.0.0.1 signed by the test CA instead), no leader
election, metrics and health probes on 127.0.0.1.
"""

from __future__ import annotations

import base64
import contextlib
import pathlib
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.support.certificates import write_serving_certificate
from tests.support.control_plane import ControlPlane, Process, free_ports, write_kubeconfig

NAMESPACE = "lws-system"
NAME_PREFIX = "lws-"
SERVICE_ACCOUNT = "lws-controller-manager"
USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
NAMESPACED = ("ServiceAccount", "Role", "RoleBinding")


def crd_files(config: pathlib.Path) -> list[pathlib.Path]:
    return sorted((config / "crd" / "bases").glob("*.yaml"))


def install_crds(plane: ControlPlane) -> None:
    """The CRDs, server-side (at 1.3 MB the LeaderWorkerSet CRD is over the limit of a
    client-side apply's annotation). ``Cluster.install`` waits until they are Established."""
    files = crd_files(plane.binaries.lws / "config")
    plane.kubectl("apply", "--server-side", *(f"--filename={f}" for f in files))


def _load(path: pathlib.Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def rbac_manifests(config: pathlib.Path) -> list[dict[str, Any]]:
    """``config/rbac`` as its kustomization lists it, named and placed as ``config/default``
    (``namePrefix: lws-``, ``namespace: lws-system``) makes it."""
    folder = config / "rbac"
    resources = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    found = []
    for resource in resources:
        for obj in _load(folder / resource):
            obj["metadata"]["name"] = NAME_PREFIX + obj["metadata"]["name"]
            if obj["kind"] in NAMESPACED:
                obj["metadata"]["namespace"] = NAMESPACE
            if "roleRef" in obj:
                obj["roleRef"]["name"] = NAME_PREFIX + obj["roleRef"]["name"]
            for subject in obj.get("subjects") or []:
                if subject["kind"] == "ServiceAccount":
                    subject["name"] = NAME_PREFIX + subject["name"]
                    subject["namespace"] = NAMESPACE
            found.append(obj)
    return found


def _json_patch(obj: dict[str, Any], operations: list[dict[str, Any]]) -> None:
    """The ``replace`` and ``add`` operations the webhook kustomization uses."""
    for operation in operations:
        assert operation["op"] in ("replace", "add"), operation
        *parents, last = operation["path"].strip("/").split("/")
        target: Any = obj
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            index = len(target) if last == "-" else int(last)
            if operation["op"] == "add":
                target.insert(index, operation["value"])
            else:
                target[index] = operation["value"]
        else:
            target[last] = operation["value"]


def webhook_configurations(
    config: pathlib.Path, port: int, ca_bundle: bytes
) -> list[dict[str, Any]]:
    """``config/webhook/manifests.yaml`` with its kustomization's patches, each webhook called
    at ``https://127.0.0.1:<port><path>`` (never through a Service: its ClusterIP would be
    dialled)."""
    folder = config / "webhook"
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    configurations = _load(folder / "manifests.yaml")
    for patch in kustomization.get("patches") or []:
        target = patch["target"]
        operations = yaml.safe_load((folder / patch["path"]).read_text())
        for obj in configurations:
            if (obj["kind"], obj["metadata"]["name"]) == (target["kind"], target["name"]):
                _json_patch(obj, operations)
    for obj in configurations:
        obj["metadata"]["name"] = NAME_PREFIX + obj["metadata"]["name"]
        for hook in obj["webhooks"]:
            service = hook["clientConfig"].pop("service")
            hook["clientConfig"]["url"] = f"https://127.0.0.1:{port}{service['path']}"
            hook["clientConfig"]["caBundle"] = base64.b64encode(ca_bundle).decode()
    return configurations


@dataclass
class LeaderWorkerSetController:
    plane: ControlPlane
    folder: pathlib.Path
    process: Process | None = None
    configurations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def config(self) -> pathlib.Path:
        return self.plane.binaries.lws / "config"

    def start(self, timeout: float = 60.0) -> None:
        """Its namespace, RBAC and ServiceAccount token; the process, until its webhook server
        answers; then its webhook configurations."""
        self.plane.kubectl("create", "namespace", NAMESPACE)
        self._apply(rbac_manifests(self.config))
        token = self.plane.token(SERVICE_ACCOUNT, NAMESPACE)
        kubeconfig = write_kubeconfig(
            self.folder / "lws.kubeconfig", self.plane.url, self.plane.ca_file, token, NAMESPACE
        )
        certs = self.folder / "lws-certs"
        write_serving_certificate(
            self.plane.folder, certs / "tls.crt", certs / "tls.key", "lws-webhook-service"
        )
        webhook, metrics, health = free_ports(3)
        settings = {
            "apiVersion": "config.lws.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": webhook, "certDir": str(certs)},
            "metrics": {"bindAddress": f"127.0.0.1:{metrics}"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        }
        (self.folder / "lws-config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
        argv = [
            str(self.plane.binaries.lws / "lws-controller"),
            f"--config={self.folder / 'lws-config.yaml'}",
            "--zap-log-level=2",
            "--zap-devel=false",
        ]
        self.process = Process(
            "lws-controller",
            argv,
            self.folder / "lws-controller.log",
            env={"KUBECONFIG": str(kubeconfig)},
        )
        self.process.start()
        self._wait(lambda: self._healthy(health) and self._serving(webhook), timeout)
        self.configurations = webhook_configurations(
            self.config, webhook, self.plane.ca_file.read_bytes()
        )
        self._apply(self.configurations)

    def _apply(self, manifests: list[dict[str, Any]]) -> None:
        self.plane.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(manifests))

    def _healthy(self, port: int) -> bool:
        with contextlib.suppress(OSError, urllib.error.URLError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                return answer.status == 200
        return False

    def _serving(self, port: int) -> bool:
        """Whether its webhook server completes a TLS handshake with the test CA's trust."""
        context = ssl.create_default_context(cafile=str(self.plane.ca_file))
        with contextlib.suppress(OSError):
            with (
                socket.create_connection(("127.0.0.1", port), timeout=2) as raw,
                context.wrap_socket(raw, server_hostname="127.0.0.1"),
            ):
                return True
        return False

    def _wait(self, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.process is not None and self.process.popen is not None
            if self.process.popen.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the LeaderWorkerSet controller is not up\n{self.tail()}")
            time.sleep(0.2)

    def tail(self, lines: int = 40) -> str:
        return self.process.tail(lines) if self.process else ""

    def stop(self) -> None:
        """Its webhook configurations first (nothing may call a stopped server), then it."""
        for obj in self.configurations:
            kind = obj["kind"].lower() + "s"
            path = f"/apis/admissionregistration.k8s.io/v1/{kind}/{obj['metadata']['name']}"
            self.plane.raw("DELETE", path)
        if self.process is not None:
            self.process.stop(grace=10)


@contextlib.contextmanager
def running_leader_worker_set_controller(
    plane: ControlPlane, folder: pathlib.Path
) -> Iterator[LeaderWorkerSetController]:
    controller = LeaderWorkerSetController(plane, folder)
    try:
        controller.start()
        yield controller
    finally:
        controller.stop()
