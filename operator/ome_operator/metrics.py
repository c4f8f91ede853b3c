"""Prometheus metrics (docs/metrics-and-alerts.md): every metric object lives here, behind named
recorders, and the endpoint that serves them (with the readiness check beside them); nothing else
imports ``prometheus_client``.

The endpoint answers ``/metrics`` and ``/readyz`` only (404 elsewhere), bounds each connection
(``SOCKET_TIMEOUT``, ``REQUEST_DEADLINE``, ``MAX_CONNECTIONS``), and can ask who scrapes
(``access``: ``handlers.metrics_access`` with ``--metrics-secure``) over HTTPS.

No label carries an object name. Tests pass their own ``CollectorRegistry`` to ``Metrics``. The
API edge (``cluster``) imports nothing of this module: start-up hands it the recorders
(``record_api_request``, ``record_watch_failure``) as callbacks.
"""

from __future__ import annotations

import collections
import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Hashable, Iterable
from http import HTTPStatus
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from . import OME_VERSION, __version__

__all__ = ["Access", "Metrics", "serve_metrics"]

#: Seconds a key waits in a work queue: a pass takes up to seconds, a burst of changes queues
#: every InferenceService, so the tail reaches minutes.
QUEUE_WAIT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0)
#: InferenceServices one runtime change moves: none, a few, a namespace, a cluster.
MOVED_BUCKETS = (0, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000)
#: Seconds an admission review takes: the API server gives the webhook 10.
WEBHOOK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


#: Seconds one read or write of a metrics or readiness connection may block.
SOCKET_TIMEOUT = 10.0
#: Seconds a metrics or readiness request may take in all, from its connection (the TLS
#: handshake, the headers, the token reviews, the answer): Prometheus gives a scrape 10 s by
#: default, the kubelet a probe 1 s. A connection still open then is shut.
REQUEST_DEADLINE = 20.0
#: Connections served at once (each is a thread); one more is closed at once.
MAX_CONNECTIONS = 128
_PLAIN = [("Content-Type", "text/plain; charset=utf-8")]

#: What a secured endpoint asks of each scrape: (status, text) for its ``Authorization`` header;
#: 200 serves it.
Access = Callable[[str | None], tuple[int, str]]


class _QuietHandler(WSGIRequestHandler):
    """No access-log line per scrape or probe."""

    def log_message(self, format: str, *args: Any) -> None:
        return


class _MetricsServer(ThreadingWSGIServer):
    """One thread per connection, at most ``MAX_CONNECTIONS`` at once, each within
    ``REQUEST_DEADLINE``; over TLS when ``tls`` gives a context (the handshake is in the
    connection's thread, not the one accepting)."""

    tls: Callable[[], ssl.SSLContext] | None = None
    deadline = REQUEST_DEADLINE
    socket_timeout = SOCKET_TIMEOUT
    slots = threading.BoundedSemaphore(0)  # replaced when it listens

    def server_activate(self) -> None:
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().server_activate()

    def verify_request(self, request: Any, client_address: Any) -> bool:
        return self.slots.acquire(blocking=False)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def finish_request(self, request: Any, client_address: Any) -> None:
        current = [request]
        cut = threading.Timer(self.deadline, _shut, current)
        cut.daemon = True
        cut.start()
        try:
            request.settimeout(self.socket_timeout)
            if self.tls is not None:
                current[0] = self.tls().wrap_socket(request, server_side=True)
            self.RequestHandlerClass(current[0], client_address, self)
        finally:
            cut.cancel()
            if current[0] is not request:
                current[0].close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away, timed out or failed its handshake: nothing to log."""


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _answer(start_response: Callable[..., Any], status: int, text: str) -> list[bytes]:
    start_response(f"{status} {HTTPStatus(status).phrase}", list(_PLAIN))  # wsgiref adds to it
    return [f"{text}\n".encode()]


def serve_metrics(
    host: str,
    port: int,
    unready: Callable[[], str | None] = lambda: None,
    *,
    access: Access | None = None,
    tls: Callable[[], ssl.SSLContext] | None = None,
) -> ThreadingWSGIServer:
    """Serve the default registry at ``/metrics`` on ``host:port`` (404 on any other path), and
    ``/readyz``: 200 while ``unready()`` is None (reviews sent to this replica are answered),
    else 503 with its reason; from a thread. With ``access`` each scrape (not ``/readyz``: the
    kubelet sends no token) is served only when it answers 200; with ``tls``, over HTTPS."""
    metrics = make_wsgi_app(REGISTRY)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO")
        if path == "/readyz":
            reason = unready()
            if reason is None:
                return _answer(start_response, 200, "ok")
            return _answer(start_response, 503, f"not ready: {reason}")
        if path != "/metrics":
            return _answer(start_response, 404, "not found: metrics are served at /metrics")
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return _answer(start_response, 405, "method not allowed: use GET")
        if access is not None:
            status, text = access(environ.get("HTTP_AUTHORIZATION"))
            if status != 200:
                return _answer(start_response, status, text)
        return metrics(environ, start_response)

    server = make_server(host, port, app, _MetricsServer, handler_class=_QuietHandler)
    server.tls = tls
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server


class Metrics:
    """The operator's metrics, registered in one registry."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._modes: dict[Hashable, tuple[tuple[str, str], ...]] = {}
        self._mode_counts: collections.Counter[tuple[str, str]] = collections.Counter()
        self._unresolved: set[Hashable] = set()
        self.selection = Counter(
            "ome_runtime_selection_total",
            "Auto-selection runs. source: controller|webhook; outcome: selected|no_runtime|error;"
            " scope of the selected runtime: namespaced|cluster|none.",
            ["source", "outcome", "scope"],
            registry=registry,
        )
        self.exclusions = Counter(
            "ome_runtime_exclusions_total",
            "Runtimes excluded during selection, by the first check they failed (reason: "
            "disabled|accelerator_class|deployment_mode|model_format|model_size).",
            ["reason"],
            registry=registry,
        )
        self.named = Counter(
            "ome_runtime_named_resolution_total",
            "Named-runtime resolutions (outcome: resolved|advisory|not_found|disabled).",
            ["outcome"],
            registry=registry,
        )
        self.unresolved = Gauge(
            "ome_runtime_unresolved_inferenceservices",
            "InferenceServices whose RuntimeReady condition is False.",
            registry=registry,
        )
        self.component_errors = Counter(
            "ome_component_reconcile_errors_total",
            "Component reconcile failures (component: engine|decoder|router; reason: "
            "invalid_deployment_mode|pdb|pod_policy|other).",
            ["component", "reason"],
            registry=registry,
        )
        self.components_by_mode = Gauge(
            "ome_components_by_mode",
            "Declared components by resolved deployment mode.",
            ["component", "mode"],
            registry=registry,
        )
        self.reconciles = Counter(
            "ome_inferenceservice_reconcile_total",
            "InferenceService reconciles (result: success|error|parked).",
            ["result"],
            registry=registry,
        )
        self.reconcile_seconds = Histogram(
            "ome_inferenceservice_reconcile_duration_seconds",
            "InferenceService reconcile duration (result: success|error|parked).",
            ["result"],
            registry=registry,
        )
        self.replica_passes = Counter(
            "ome_inferencereplica_reconcile_total",
            "InferenceReplica controller passes (result: success|error).",
            ["result"],
            registry=registry,
        )
        self.webhook_requests = Counter(
            "ome_webhook_requests_total",
            "Admission reviews (kind of the object, operation, allowed: true|false).",
            ["kind", "operation", "allowed"],
            registry=registry,
        )
        self.webhook_warnings = Counter(
            "ome_webhook_warnings_total",
            "Admission warnings returned (warning: auto_selected|does_not_declare_support|"
            "deployment_strategy|model_kind|other_mode_workload).",
            ["warning"],
            registry=registry,
        )
        self.webhook_seconds = Histogram(
            "ome_webhook_request_duration_seconds",
            "Seconds an admission review of CREATE or UPDATE took in its handler, waiting for "
            "the first listings included (kind of the object, operation).",
            ["kind", "operation"],
            buckets=WEBHOOK_BUCKETS,
            registry=registry,
        )
        self.moved = Histogram(
            "ome_runtime_change_moved_inferenceservices",
            "InferenceServices a reviewed runtime change moves to another runtime or leaves "
            "with none, one observation per review once the caches have listed (kind: "
            "ServingRuntime|ClusterServingRuntime, operation: CREATE|UPDATE|DELETE).",
            ["kind", "operation"],
            buckets=MOVED_BUCKETS,
            registry=registry,
        )
        self.queue_depth = Gauge(
            "ome_workqueue_depth",
            "Keys waiting in a work queue to be taken by a worker; not the ones in a pass or "
            "waiting out a backoff (queue: inferenceservice|inferencereplica).",
            ["queue"],
            registry=registry,
        )
        self.queue_wait = Histogram(
            "ome_workqueue_queue_duration_seconds",
            "Seconds a key waited in a work queue, from being queued to being taken "
            "(queue: inferenceservice|inferencereplica).",
            ["queue"],
            buckets=QUEUE_WAIT_BUCKETS,
            registry=registry,
        )
        self.api_requests = Counter(
            "ome_api_requests_total",
            "Requests to the API server (verb: the HTTP method, WATCH for a watch stream; "
            'code: the HTTP status, "0" when no answer came).',
            ["verb", "code"],
            registry=registry,
        )
        self.watch_failures = Counter(
            "ome_watch_failures_total",
            "Failed LISTs and WATCHes of the operator's informers, each retried with backoff "
            "(resource: <plural>.<group>); an expired version (410 Gone) is no failure.",
            ["resource"],
            registry=registry,
        )
        self.build_info = Gauge(
            "ome_build_info",
            "Always 1 (version: of the ome-operator; ome: the OME release it follows).",
            ["version", "ome"],
            registry=registry,
        )
        self.build_info.labels(__version__, OME_VERSION).set(1)
        self._api_children: dict[tuple[str, int], Any] = {}

    def record_selection(
        self, source: str, outcome: str, scope: str, exclusions: Iterable[str] = ()
    ) -> None:
        self.selection.labels(source, outcome, scope).inc()
        for reason, count in sorted(collections.Counter(exclusions).items()):
            self.exclusions.labels(reason).inc(count)

    def record_named(self, outcome: str) -> None:
        self.named.labels(outcome).inc()

    def record_reconcile(self, result: str, seconds: float) -> None:
        self.reconciles.labels(result).inc()
        self.reconcile_seconds.labels(result).observe(seconds)

    def record_replica_pass(self, failed: bool) -> None:
        self.replica_passes.labels("error" if failed else "success").inc()

    def record_component_error(self, component: str, reason: str) -> None:
        self.component_errors.labels(component, reason).inc()

    def set_components_in_mode(self, component: str, mode: str, count: int) -> None:
        """A pair with no components leaves the exposition rather than showing 0."""
        if count:
            self.components_by_mode.labels(component, mode).set(count)
            return
        try:
            self.components_by_mode.remove(component, mode)
        except KeyError:
            pass  # never set

    def set_unresolved(self, count: int) -> None:
        self.unresolved.set(count)

    # -- the gauges kept per InferenceService --------------------------------------------------

    def track_modes(self, key: Hashable, modes: tuple[tuple[str, str], ...]) -> None:
        """The (component, mode) pairs of one InferenceService now (``()``: it is gone);
        only the gauges of pairs that moved are set."""
        before = self._modes.pop(key, ())
        if modes:
            self._modes[key] = modes
        if before == modes:
            return
        self._mode_counts.subtract(before)
        self._mode_counts.update(modes)
        for pair in sorted(set(before) | set(modes)):
            self.set_components_in_mode(*pair, self._mode_counts[pair])

    def track_unresolved(self, key: Hashable, unresolved: bool) -> None:
        """Whether one InferenceService has no runtime now (its RuntimeReady is False)."""
        if unresolved:
            self._unresolved.add(key)
        else:
            self._unresolved.discard(key)
        self.set_unresolved(len(self._unresolved))

    def record_admission(
        self, kind: str, operation: str, allowed: bool, warnings: Iterable[str] = ()
    ) -> None:
        self.webhook_requests.labels(kind, operation, "true" if allowed else "false").inc()
        for warning in warnings:
            self.webhook_warnings.labels(warning).inc()

    def record_admission_duration(self, kind: str, operation: str, seconds: float) -> None:
        self.webhook_seconds.labels(kind, operation).observe(seconds)

    def record_runtime_change(self, kind: str, operation: str, moved: int) -> None:
        self.moved.labels(kind, operation).observe(moved)

    # -- the controller runtime and the API edge -------------------------------------------------

    def set_queue_depth(self, queue: str, depth: int) -> None:
        self.queue_depth.labels(queue).set(depth)

    def record_queue_wait(self, queue: str, seconds: float) -> None:
        self.queue_wait.labels(queue).observe(seconds)

    def record_api_request(self, verb: str, code: int) -> None:
        """Counted once per request, from the writers' threads: the child of each (verb, code)
        is looked up once (``labels`` formats and locks on every call)."""
        child = self._api_children.get((verb, code))
        if child is None:
            child = self._api_children[verb, code] = self.api_requests.labels(verb, str(code))
        child.inc()

    def record_watch_failure(self, resource: str) -> None:
        self.watch_failures.labels(resource).inc()
