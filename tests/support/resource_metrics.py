"""A resource-metrics API (``metrics.k8s.io/v1beta1``, what metrics-server serves) on loopback,
so that the real HPA controller of the control-plane tier scales on the CPU and memory usage a
test chooses.

All inside 127.0.0.0/8: a TLS server in the test process listens on a ClusterIP of the tier's
service range (127.1.0.0/16, which Linux routes to ``lo``) and a free port; a Service without a
selector (``kube-system/loopback-metrics``) holds that ClusterIP and port; the APIService
``v1beta1.metrics.k8s.io`` points at it with the tier's CA as ``caBundle`` (the certificate
names ``loopback-metrics.kube-system.svc``, as the aggregator checks), and the API server dials
the ClusterIP itself (``--enable-aggregator-routing=false``). Its availability check wants a
ready endpoint too: an EndpointSlice of type FQDN naming ``loopback-metrics.localhost``, which
nothing dials (an IPv4 endpoint may not be a loopback address). Use::

    with running_loopback_metrics(cluster, folder) as metrics:
        metrics.set_usage(namespace, cpu_millis=90, memory_mib=64, labels={"app": "web"})
        ...  # the HPA controller reads 90m per container of each Running pod labelled app=web

Each Running pod a ``set_usage`` rule matches reports the rule's usage for each container,
``timestamp`` now, ``window`` 1s; a pod no rule matches is left out (to the HPA controller, a
pod without metrics). Pods are read from the API server as the admin, with the request's label
and field selectors. Also answered: discovery (``/apis/metrics.k8s.io/v1beta1`` as a plain
APIResourceList, which the aggregator falls back to), one pod, pods of every namespace, nodes
(the sum of what their pods report), ``/healthz``, ``/livez``, ``/readyz``, an empty
``/openapi/v2`` (a 404 there is logged as an error and retried); ``/openapi/v3`` is a 404,
which the aggregator takes as "no spec".
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import http.server
import json
import pathlib
import socketserver
import ssl
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from tests.support.certificates import write_serving_certificate
from tests.support.control_plane import ControlPlane
from tests.support.socket_servers import shut

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
API_SERVICE = f"{VERSION}.{GROUP}"
NAMESPACE, NAME = "kube-system", "loopback-metrics"
#: ClusterIPs tried in turn, the first one free taken: in the lower band of 127.1.0.0/16, which
#: the API server gives Services without an explicit ClusterIP only once the rest is taken.
CLUSTER_IPS = ("127.1.0.100", "127.1.0.101", "127.1.0.102", "127.1.0.103")
WINDOW = "1s"
#: Connections served at once; more wait to be accepted. Each serves one request (HTTP/1.0).
WORKERS = 16
APISERVICE_PATH = f"/apis/apiregistration.k8s.io/v1/apiservices/{API_SERVICE}"
SERVICE_PATH = f"/api/v1/namespaces/{NAMESPACE}/services/{NAME}"
ENDPOINT_SLICE_PATH = f"/apis/discovery.k8s.io/v1/namespaces/{NAMESPACE}/endpointslices/{NAME}"


@dataclass(frozen=True)
class Usage:
    """What one container uses."""

    cpu_millis: int
    memory_mib: int

    def quantities(self) -> dict[str, str]:
        return {"cpu": f"{self.cpu_millis}m", "memory": f"{self.memory_mib}Mi"}


@dataclass(frozen=True)
class Rule:
    """The pods of ``namespace`` named ``pod``, or else carrying every one of ``labels`` (every
    pod of the namespace when both are empty), report ``usage`` per container."""

    namespace: str
    pod: str | None
    labels: tuple[tuple[str, str], ...]
    #: Not compared: two rules are equal when they name the same pods.
    usage: Usage = field(compare=False)

    def matches(self, pod: Mapping[str, Any]) -> bool:
        meta = pod["metadata"]
        if meta.get("namespace") != self.namespace or self.pod not in (None, meta["name"]):
            return False
        labels = meta.get("labels") or {}
        return self.pod is not None or all(labels.get(k) == v for k, v in self.labels)


def usage_for(rules: list[Rule], pod: Mapping[str, Any]) -> Usage | None:
    """The latest matching rule's usage, rules by name first; None when no rule matches or the
    pod is not Running (or is being deleted)."""
    status, meta = pod.get("status") or {}, pod["metadata"]
    if status.get("phase") != "Running" or meta.get("deletionTimestamp"):
        return None
    for by_name in (True, False):
        for rule in reversed(rules):
            if (rule.pod is not None) == by_name and rule.matches(pod):
                return rule.usage
    return None


def sample(obj: Mapping[str, Any], timestamp: str, **usage: Any) -> dict[str, Any]:
    """A PodMetrics or NodeMetrics of the pod or node ``obj``: its name, namespace and labels,
    ``timestamp``, the window, and ``usage`` (``containers=[...]`` or ``usage={...}``)."""
    meta = obj["metadata"]
    kept = {key: meta[key] for key in ("name", "namespace", "labels") if key in meta}
    metadata = {**kept, "creationTimestamp": timestamp}
    return {"metadata": metadata, "timestamp": timestamp, "window": WINDOW, **usage}


def not_found(kind: str, name: str) -> dict[str, Any]:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404}
    return {**status, "reason": "NotFound", "message": f'{kind} "{name}" not found'}


_VERSION = {"groupVersion": GROUP_VERSION, "version": VERSION}
_GROUP = {"name": GROUP, "versions": [_VERSION], "preferredVersion": _VERSION}
_RESOURCES = (("nodes", False, "NodeMetrics"), ("pods", True, "PodMetrics"))
STATIC: dict[str, Any] = {
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_GROUP]},
    f"/apis/{GROUP}": {"kind": "APIGroup", "apiVersion": "v1", **_GROUP},
    f"/apis/{GROUP_VERSION}": {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {"name": name, "singularName": "", "namespaced": namespaced, "kind": kind}
            | {"verbs": ["get", "list"]}
            for name, namespaced, kind in _RESOURCES
        ],
    },
    "/openapi/v2": {"swagger": "2.0", "info": {"title": NAME, "version": VERSION}, "paths": {}},
    **dict.fromkeys(("/healthz", "/livez", "/readyz"), "ok"),
}


class LoopbackMetrics:
    """The usage the server reports, as a test sets it; safe to use from any thread."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self._rules: list[Rule] = []
        self._lock = threading.Lock()
        #: The last requests served, as ``GET <path>?<query> <status>``, oldest first.
        self.requests: deque[str] = deque(maxlen=1000)

    def set_usage(
        self,
        namespace: str,
        cpu_millis: int,
        memory_mib: int,
        *,
        labels: Mapping[str, str] | None = None,
        pod: str | None = None,
    ) -> None:
        """From now on, each container of the Running pods of ``namespace`` named ``pod``, or
        carrying all of ``labels`` (every pod of the namespace when neither is given), uses
        ``cpu_millis`` of CPU and ``memory_mib`` of memory. Replaces the rule set before for
        the same pods; a rule by name wins over rules by labels, a later one over an earlier."""
        usage = Usage(cpu_millis, memory_mib)
        rule = Rule(namespace, pod, tuple(sorted((labels or {}).items())), usage)
        with self._lock:
            self._rules = [r for r in self._rules if r != rule] + [rule]

    def clear(self, namespace: str | None = None) -> None:
        """Forget the rules of ``namespace`` (of every namespace by default)."""
        with self._lock:
            self._rules = [r for r in self._rules if namespace not in (None, r.namespace)]

    def usage(self, pod: Mapping[str, Any]) -> Usage | None:
        """What ``pod`` (a Pod object) reports now, per container; None: it is left out."""
        with self._lock:
            return usage_for(self._rules, pod)

    def _list(self, root: str, query: Mapping[str, str]) -> list[dict[str, Any]]:
        return self.plane.request("GET", f"{root}?{urlencode(query)}" if query else root)["items"]

    def pods(self, namespace: str | None, query: Mapping[str, str]) -> list[dict[str, Any]]:
        """The PodMetrics of the pods of ``namespace`` (of all when None) that match the
        ``labelSelector`` and ``fieldSelector`` of ``query``."""
        root = f"/api/v1/namespaces/{quote(namespace)}/pods" if namespace else "/api/v1/pods"
        now, found = _now(), []
        for pod in self._list(root, query):
            usage = self.usage(pod)
            names = [c["name"] for c in pod["spec"]["containers"]]
            if usage is not None:
                containers = [{"name": n, "usage": usage.quantities()} for n in names]
                found.append(sample(pod, now, containers=containers))
        return found

    def nodes(self, query: Mapping[str, str]) -> list[dict[str, Any]]:
        """The NodeMetrics of the nodes: each uses what its pods report, summed."""
        totals: dict[str, list[int]] = {}
        for pod in self._list("/api/v1/pods", {}):
            usage, count = self.usage(pod), len(pod["spec"]["containers"])
            total = totals.setdefault(pod["spec"].get("nodeName") or "", [0, 0])
            total[0] += usage.cpu_millis * count if usage else 0
            total[1] += usage.memory_mib * count if usage else 0
        now, nodes = _now(), self._list("/api/v1/nodes", query)
        used = [Usage(*totals.get(n["metadata"]["name"], [0, 0])) for n in nodes]
        return [sample(n, now, usage=u.quantities()) for n, u in zip(nodes, used, strict=True)]

    def answer(self, target: str) -> tuple[int, Any]:
        """The status and body for a GET of ``target`` (a path with its query)."""
        split = urlsplit(target)
        path = split.path.rstrip("/") or "/"
        if path in STATIC:
            return 200, STATIC[path]
        selectors = ("labelSelector", "fieldSelector")
        query = {k: v[-1] for k, v in parse_qs(split.query).items() if k in selectors}
        parts = path.removeprefix(f"/apis/{GROUP_VERSION}/").split("/")
        if not path.startswith(f"/apis/{GROUP_VERSION}/"):
            return 404, not_found("path", path)
        if parts[0] == "nodes" and len(parts) <= 2:
            return _one_or_all("NodeMetrics", self.nodes(query), parts[1:])
        if parts == ["pods"]:
            return _one_or_all("PodMetrics", self.pods(None, query), [])
        if parts[0] == "namespaces" and len(parts) in (3, 4) and parts[2] == "pods":
            return _one_or_all("PodMetrics", self.pods(parts[1], query), parts[3:])
        return 404, not_found("path", path)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _one_or_all(kind: str, items: list[dict[str, Any]], name: list[str]) -> tuple[int, Any]:
    """The list of ``items``, or the one item named ``name[0]`` (404 when there is none)."""
    head = {"kind": kind, "apiVersion": GROUP_VERSION}
    if not name:
        return 200, {**head, "kind": f"{kind}List", "metadata": {}, "items": items}
    found = [item for item in items if item["metadata"]["name"] == name[0]]
    return (200, {**head, **found[0]}) if found else (404, not_found(kind, name[0]))


class _Handler(http.server.BaseHTTPRequestHandler):
    """One connection, one GET (HTTP/1.0: the connection closes after the answer)."""

    server: _Server
    timeout = 10

    def do_GET(self) -> None:
        try:
            status, body = self.server.metrics.answer(self.path)
        except Exception as error:  # e.g. the API server refused the pods' list
            status, body = 500, {"kind": "Status", "status": "Failure", "message": str(error)}
        text = isinstance(body, str)
        data = (body if text else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.server.metrics.requests.append(f"GET {self.path} {status}")

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are kept in ``LoopbackMetrics.requests``, not printed."""


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """At most WORKERS connections served at once, each in a thread of its own, which also does
    the TLS handshake. A TCPServer, not an HTTPServer: that one looks its address up in DNS."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], metrics: LoopbackMetrics, tls: ssl.SSLContext):
        super().__init__(address, _Handler)
        self.metrics = metrics
        self.socket = tls.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)
        self._slots = threading.BoundedSemaphore(WORKERS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if self._slots.acquire(timeout=10):
            super().process_request(request, client_address)  # released by the thread
        else:
            self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away or failed its handshake is no error of the server's."""


def _kind(api_version: str, kind: str, meta: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def objects(cluster_ip: str, port: int, ca: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) of the Service, its EndpointSlice and the APIService."""
    meta = {"name": NAME, "namespace": NAMESPACE}
    ports = [{"name": "https", "port": port, "protocol": "TCP"}]
    service = {"type": "ClusterIP", "clusterIP": cluster_ip, "ports": ports}
    labels = {"kubernetes.io/service-name": NAME}
    labels["endpointslice.kubernetes.io/managed-by"] = "tests.resource-metrics"
    endpoints = [{"addresses": [f"{NAME}.localhost"], "conditions": {"ready": True}}]
    slice_ = {"addressType": "FQDN", "endpoints": endpoints, "ports": ports}
    api_service = {"group": GROUP, "version": VERSION, "caBundle": base64.b64encode(ca).decode()}
    api_service |= {"groupPriorityMinimum": 100, "versionPriority": 100}
    api_service["service"] = {"namespace": NAMESPACE, "name": NAME, "port": port}
    made = [
        _kind("v1", "Service", meta, spec=service),
        _kind("discovery.k8s.io/v1", "EndpointSlice", {**meta, "labels": labels}, **slice_),
        _kind("apiregistration.k8s.io/v1", "APIService", {"name": API_SERVICE}, spec=api_service),
    ]
    paths = (SERVICE_PATH, ENDPOINT_SLICE_PATH, APISERVICE_PATH)
    return [(path.rsplit("/", 1)[0], obj) for path, obj in zip(paths, made, strict=True)]


def unregister(plane: ControlPlane) -> None:
    """Delete the APIService, then the EndpointSlice and the Service (absent ones are fine)."""
    for target in (APISERVICE_PATH, ENDPOINT_SLICE_PATH, SERVICE_PATH):
        status, answer = plane.raw("DELETE", target)
        assert status in (200, 202, 404), f"DELETE {target}: HTTP {status}: {answer}"


def available(plane: ControlPlane) -> bool:
    """Whether the APIService is Available and the API server answers a list of pod metrics."""
    status, found = plane.raw("GET", APISERVICE_PATH)
    conditions = (found.get("status") or {}).get("conditions") or [] if status == 200 else []
    return any(c["type"] == "Available" and c["status"] == "True" for c in conditions) and (
        plane.raw("GET", f"/apis/{GROUP_VERSION}/namespaces/{NAMESPACE}/pods")[0] == 200
    )


def wait_available(plane: ControlPlane, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not available(plane):
        if time.monotonic() > deadline:
            found = plane.raw("GET", APISERVICE_PATH)[1]
            raise AssertionError(f"{API_SERVICE} not available within {timeout} s: {found}")
        time.sleep(0.2)


def _serve(metrics: LoopbackMetrics, folder: pathlib.Path, cluster_ip: str) -> _Server:
    """The server on ``cluster_ip`` and a free port, with a certificate from the tier's CA."""
    cert, key = folder / f"{NAME}.crt", folder / f"{NAME}.key"
    write_serving_certificate(
        metrics.plane.folder, cert, key, NAME, (cluster_ip,), (f"{NAME}.{NAMESPACE}.svc",)
    )
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    return _Server((cluster_ip, 0), metrics, tls)


def _register(metrics: LoopbackMetrics, folder: pathlib.Path) -> _Server:
    """The server and its objects, on the first ClusterIP of CLUSTER_IPS that is free."""
    plane, refused = metrics.plane, []
    for cluster_ip in CLUSTER_IPS:
        server = _serve(metrics, folder, cluster_ip)
        made = objects(cluster_ip, server.server_address[1], plane.ca_file.read_bytes())
        try:
            status, answer = plane.raw("POST", *made[0])
            if status == 201:
                for collection, obj in made[1:]:
                    plane.request("POST", collection, obj)
                return server
        except BaseException:
            server.server_close()
            unregister(plane)
            raise
        server.server_close()
        refused.append(f"{cluster_ip}: HTTP {status}: {answer}")
    raise AssertionError(f"no Service {NAMESPACE}/{NAME} could be made: {refused}")


@contextlib.contextmanager
def running_loopback_metrics(
    cluster_or_plane: Any, folder: pathlib.Path, timeout: float = 60.0
) -> Iterator[LoopbackMetrics]:
    """The resource-metrics API served and registered (Available) for the block; then the
    APIService, the EndpointSlice and the Service are deleted and the server stops.
    ``cluster_or_plane``: an ``installed_cluster.Cluster`` or a ``ControlPlane``; ``folder``
    gets the serving certificate."""
    plane: ControlPlane = getattr(cluster_or_plane, "plane", cluster_or_plane)
    folder.mkdir(parents=True, exist_ok=True)
    metrics = LoopbackMetrics(plane)
    unregister(plane)  # what an interrupted block left
    server = _register(metrics, folder)
    thread = threading.Thread(target=server.serve_forever, args=(0.2,), name=NAME, daemon=True)
    thread.start()
    try:
        wait_available(plane, timeout)
        yield metrics
    finally:
        unregister(plane)
        shut(server)
        thread.join(10)
