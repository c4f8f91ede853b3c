"""GPU nodes for the control-plane tier: Node objects that KWOK keeps alive and whose pods it
moves as a kubelet would (``kwok_stages``), with faults a test can cause.

Four nodes (``gpu-node-0`` .. ``gpu-node-3``), each ``nvidia.com/gpu: 8``, ``cpu: 96``, ``memory:
1Ti``, 110 pods, InternalIP 127.0.0.1, pod IPs from ``127.2.<n>.0/24`` (``spec.podCIDR``): all on
loopback. They start with no model label, so a pod of the operator (its nodeSelector asks for
``models.ome.io/...<model>=Ready``) stays Pending until a test labels a node for its model.

One KWOK process per node (``--manage-single-node``), as the ServiceAccount
``kube-system/kwok-controller`` with the ClusterRole KWOK ships: a node is made unreachable by
stopping its process (its lease is no longer renewed and nothing moves its pods, as when a
kubelet dies) and reachable again by starting it. Changing a node's annotation or label would
not stop a running KWOK.
"""

from __future__ import annotations

import contextlib
import pathlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import yaml

from tests.support.control_plane import ControlPlane, Process, write_kubeconfig
from tests.support.kwok_stages import stages

NODES = tuple(f"gpu-node-{n}" for n in range(4))
CAPACITY = {
    "cpu": "96",
    "memory": "1Ti",
    "pods": "110",
    "nvidia.com/gpu": "8",
    "ephemeral-storage": "10Ti",
}
KWOK_NAMESPACE, KWOK_SERVICE_ACCOUNT = "kube-system", "kwok-controller"
KWOK_USER = f"system:serviceaccount:{KWOK_NAMESPACE}:{KWOK_SERVICE_ACCOUNT}"
#: KWOK renews each node's lease every LEASE_SECONDS / 4 (the kubelet's ratio); the controller
#: manager's node monitor grace period is 12 s (control_plane.NODE_MONITOR).
LEASE_SECONDS = 10
NODE_IP = "127.0.0.1"
#: The annotation that makes KWOK see each pod of a node it manages again (``make_reachable``).
RESYNCED = "tests.ome.io/kubelet-restarted"
#: The taints the node lifecycle controller puts on a node that is not Ready.
NOT_READY_TAINTS = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")


def model_label(model: str, namespace: str | None = None) -> str:
    """The node label the operator's pods select (value ``Ready``) for a BaseModel of
    ``namespace``, or a ClusterBaseModel when ``namespace`` is None."""
    if namespace is None:
        return f"models.ome.io/clusterbasemodel.{model}"
    return f"models.ome.io/{namespace}.basemodel.{model}"


def _wait(check: Callable[[], Any], what: str, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        time.sleep(0.2)


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """The ``kind`` condition of a node or pod (empty if it has none)."""
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return found[0] if found else {}


@dataclass
class KwokNodes:
    plane: ControlPlane
    folder: pathlib.Path
    names: tuple[str, ...] = NODES
    _processes: dict[str, Process] = field(default_factory=dict)
    _base_labels: dict[str, dict[str, str]] = field(default_factory=dict)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float = 90.0) -> None:
        """KWOK's RBAC and ServiceAccount, the nodes, a KWOK per node; until every node is Ready
        and untainted."""
        rbac = sorted((self.plane.binaries.kwok / "rbac").glob("*.yaml"))
        for manifest in rbac:
            if manifest.name not in ("kustomization.yaml", "flow_schema.yaml"):
                self.plane.kubectl("apply", "-f", str(manifest))
        token = self.plane.token(KWOK_SERVICE_ACCOUNT, KWOK_NAMESPACE)
        write_kubeconfig(self.folder / "kwok.kubeconfig", self.plane.url, self.plane.ca_file, token)
        # Only stages: a KwokConfiguration document would replace KWOK's defaults (its flags
        # below set what differs from them).
        config = stages()
        (self.folder / "kwok.yaml").write_text(yaml.safe_dump_all(config), encoding="utf-8")
        for n, name in enumerate(self.names):
            self._register(name, f"127.2.{n}.0/24")
            self._processes[name] = Process(
                name, self._argv(name), self.folder / f"kwok-{name}.log"
            )
            self._processes[name].start()
        for name in self.names:
            self.wait_ready(name, timeout)

    def _argv(self, name: str) -> list[str]:
        return [
            str(self.plane.binaries.kwok / "kwok"),
            f"--config={self.folder / 'kwok.yaml'}",
            f"--kubeconfig={self.folder / 'kwok.kubeconfig'}",
            f"--manage-single-node={name}",
            f"--node-ip={NODE_IP}",
            f"--node-lease-duration-seconds={LEASE_SECONDS}",
        ]

    def _register(self, name: str, cidr: str) -> None:
        """The Node object, as a kubelet registers it (here the admin does: KWOK's ClusterRole
        does not create nodes); its capacity set through ``nodes/status``."""
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "type": "kwok",
        }
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {"kwok.x-k8s.io/node": "fake"},
            },
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr]},
        }
        self.plane.request("POST", "/api/v1/nodes", node)
        self._patch(name, {"status": {"capacity": CAPACITY, "allocatable": CAPACITY}}, "/status")
        self._base_labels[name] = labels

    def stop(self) -> None:
        for process in self._processes.values():
            process.stop(grace=10)

    def logs(self) -> str:
        return "\n".join(f"--- kwok {p.name}\n{p.tail()}" for p in self._processes.values())

    # -- reading -----------------------------------------------------------------------------

    def node(self, name: str) -> dict[str, Any]:
        return self.plane.request("GET", f"/api/v1/nodes/{name}")

    def ready(self, name: str) -> str:
        """The status of the node's Ready condition: True, False or Unknown ('' if none)."""
        return condition(self.node(name), "Ready").get("status", "")

    def pods(self, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
        """The pods of ``namespace`` (matching the label ``selector``), by name."""
        query = f"?labelSelector={quote(selector)}" if selector else ""
        listed = self.plane.request("GET", f"/api/v1/namespaces/{namespace}/pods{query}")
        return sorted(listed["items"], key=lambda pod: pod["metadata"]["name"])

    def pods_on(self, name: str) -> list[dict[str, Any]]:
        """Every pod bound to node ``name``, in any namespace."""
        query = quote(f"spec.nodeName={name}")
        listed = self.plane.request("GET", f"/api/v1/pods?fieldSelector={query}")
        return sorted(listed["items"], key=lambda pod: pod["metadata"]["name"])

    def wait_gone(self, namespace: str, timeout: float = 60.0) -> None:
        """Until ``namespace`` holds no pod: its deleted pods' kubelets (KWOK) completed their
        deletion. Else the error says, for each pod left, where it is and how its node is."""
        try:
            _wait(lambda: not self.pods(namespace), f"pods of {namespace} stayed", timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}:\n{self.describe(self.pods(namespace))}") from None

    def describe(self, pods: list[dict[str, Any]]) -> str:
        """Each pod's phase, node and deletion time, its node's Ready status, lease holder and
        renewal, whether its KWOK runs, and the tail of that KWOK's log: what tells a stuck
        kubelet from a pod nobody deleted."""
        lines, nodes = [], sorted({p["spec"].get("nodeName") or "" for p in pods} - {""})
        for pod in pods:
            meta = pod["metadata"]
            lines.append(
                f"pod {meta['namespace']}/{meta['name']} phase={pod['status'].get('phase')} "
                f"node={pod['spec'].get('nodeName')} deleted={meta.get('deletionTimestamp')}"
            )
        for name in nodes:
            _, lease = self.plane.raw(
                "GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}"
            )
            spec = lease.get("spec") or {} if isinstance(lease, dict) else {}
            lines.append(
                f"node {name} Ready={self.ready(name)} kwok running={self.reachable(name)} "
                f"lease holder={spec.get('holderIdentity')} renewed={spec.get('renewTime')}"
            )
            if name in self._processes:
                lines.append(f"--- kwok {name}\n{self._processes[name].tail()}")
        return "\n".join(lines)

    def wait_released(self, timeout: float = 60.0) -> None:
        """Until no pod of a namespace being deleted (an earlier test's) holds a node's
        resources, so that a test finds every GPU free. The namespace controller starts on a
        deleted namespace only after a 5 s grace period; its pods are deleted here at once and
        for good, as ``kubectl delete --force`` does (grace period 0: the admin's cleanup, no
        test's subject, waits for no kubelet; a terminating namespace refuses new pods, so none
        comes back). A test whose subject is a pod's deletion waits for it (``wait_gone``)."""

        def leftovers() -> dict[str, int]:
            namespaces = self.plane.request("GET", "/api/v1/namespaces")["items"]
            active = {n["metadata"]["name"] for n in namespaces if n["status"]["phase"] == "Active"}
            bound = self.plane.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%21%3D")
            found: dict[str, int] = {}
            for pod in bound["items"]:
                namespace = pod["metadata"]["namespace"]
                if namespace not in active:
                    found[namespace] = found.get(namespace, 0) + 1
            return found

        for namespace in leftovers():
            self.plane.raw("DELETE", f"/api/v1/namespaces/{namespace}/pods?gracePeriodSeconds=0")
        _wait(lambda: not leftovers(), "pods of deleted namespaces stayed on the nodes", timeout)

    def wait_ready(self, name: str, timeout: float = 60.0) -> None:
        """Until the node is Ready and the node lifecycle controller took its taints off."""

        def ready() -> bool:
            node = self.node(name)
            taints = {t["key"] for t in (node.get("spec") or {}).get("taints") or []}
            return condition(node, "Ready").get("status") == "True" and not (
                taints & set(NOT_READY_TAINTS)
            )

        try:
            _wait(ready, f"node {name} was not Ready", timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{self.node(name)}\n{self.logs()}") from None

    # -- what a test does to the nodes -------------------------------------------------------

    def _patch(self, name: str, body: dict[str, Any], subresource: str = "") -> None:
        self.plane.request(
            "PATCH",
            f"/api/v1/nodes/{name}{subresource}",
            body,
            content_type="application/merge-patch+json",
        )

    def label(self, names: str | Iterable[str], labels: dict[str, str]) -> None:
        for name in [names] if isinstance(names, str) else names:
            self._patch(name, {"metadata": {"labels": labels}})

    def unlabel(self, names: str | Iterable[str], *keys: str) -> None:
        for name in [names] if isinstance(names, str) else names:
            self._patch(name, {"metadata": {"labels": dict.fromkeys(keys)}})

    def label_for_model(
        self, model: str, namespace: str | None = None, names: Iterable[str] | None = None
    ) -> str:
        """Label nodes (all by default) as having ``model`` (a BaseModel of ``namespace``, or a
        ClusterBaseModel), as OME's model agent does once it has it; the label key."""
        key = model_label(model, namespace)
        self.label(self.names if names is None else names, {key: "Ready"})
        return key

    def cordon(self, name: str) -> None:
        self._patch(name, {"spec": {"unschedulable": True}})

    def uncordon(self, name: str) -> None:
        self._patch(name, {"spec": {"unschedulable": None}})

    def reachable(self, name: str) -> bool:
        process = self._processes[name]
        return process.popen is not None and process.popen.poll() is None

    def make_unreachable(self, name: str) -> None:
        """Stop the node's KWOK: its lease is no longer renewed, its pods no longer move. After
        the node monitor grace period the node lifecycle controller marks the node Unknown and
        its pods Ready=False (ContainersReady stays True), and taints it ``unreachable``."""
        self._processes[name].stop(grace=10)

    def make_reachable(self, name: str, timeout: float = 60.0) -> None:
        """Start the node's KWOK again (once the old lease expired, up to LEASE_SECONDS, it takes
        the lease); until the node is Ready and untainted. Its pods are Ready again soon after,
        and those deleted meanwhile are gone.

        A restarted kubelet reconciles every pod bound to its node. KWOK v0.8.0 may miss some:
        when it takes a node's lease, its sync of the node's pods can run before it counts the
        node as its own, and skips them; nothing then moves a pod that nobody changes, such as
        one deleted while the node was away (CI saw it stay Terminating). So once the node is
        Ready (KWOK manages it) each of its pods is touched once, an annotation KWOK sees."""
        if not self.reachable(name):
            self._processes[name].start()
        self.wait_ready(name, timeout)
        for pod in self.pods_on(name):
            meta = pod["metadata"]
            self.plane.raw(
                "PATCH",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                {"metadata": {"annotations": {RESYNCED: str(time.monotonic_ns())}}},
                content_type="application/merge-patch+json",
            )

    def reset(self) -> None:
        """The nodes as they started: reachable, schedulable, without the labels tests added."""
        for name in self.names:
            if not self.reachable(name):
                self.make_reachable(name)
            node = self.node(name)
            added = set(node["metadata"].get("labels") or {}) - set(self._base_labels[name])
            if added:
                self.unlabel(name, *sorted(added))
            if (node.get("spec") or {}).get("unschedulable"):
                self.uncordon(name)


@contextlib.contextmanager
def running_kwok_nodes(plane: ControlPlane, folder: pathlib.Path) -> Iterator[KwokNodes]:
    nodes = KwokNodes(plane, folder)
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()
