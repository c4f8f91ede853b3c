"""Operator start-up and shutdown: kopf settings, the controller, metrics, the webhook server."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
import threading
import uuid
from typing import Any

import kopf

from ..cluster.api import KubeApi
from ..cluster.credentials import kube_api
from ..cluster.errors import ApiError
from ..cluster.leases import LeaseElector
from ..controller.configuring import ConfigSource
from ..controller.leading import Leadership
from ..controller.replicas import ReplicaController
from ..controller.running import Controller
from ..controller.workers import DRAIN_SECONDS
from ..core.operator_config import StartupConfigError
from ..metrics import Metrics, serve_metrics
from ..settings import RunOptions, parse_bind_address
from .certificates import ManagedCertificate
from .review_server import ReviewServer

__all__ = [
    "build_controller",
    "leader_worker_sets_installed",
    "unready_reason",
]

logger = logging.getLogger("ome_operator.startup")


#: The API server stores objects nested up to 10,000 levels; decoding one takes two levels of
#: recursion per level of nesting, and about 200 bytes of C stack each.
RECURSION_LIMIT = 25_000
#: Stack of every thread started after start-up (informers, workers): ten times what decoding
#: the deepest object the API server stores takes (measured: under 2 MiB).
THREAD_STACK = 16 * 2**20


def allow_deep_objects() -> None:
    """Let watches and reviews decode any object the API server can send: its nesting is
    checked (and refused over ``models.limits.MAX_NESTING``) only once it is decoded."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    threading.stack_size(THREAD_STACK)


def leader_worker_sets_installed(api: KubeApi) -> bool:
    """S5.3: MultiNode needs the LeaderWorkerSet API when the manager starts."""
    try:
        found = api.request("GET", "/apis/leaderworkerset.x-k8s.io/v1")
    except ApiError:
        return False
    return any(r.get("name") == "leaderworkersets" for r in found.get("resources", []))


def build_controller(options: RunOptions, metrics: Metrics | None = None) -> Controller:
    api: list[KubeApi] = []

    metrics = metrics or Metrics()

    def counted_api() -> KubeApi:
        return kube_api(on_request=metrics.record_api_request)

    def shared_api() -> KubeApi:
        if not api:
            api.append(counted_api())
        return api[0]

    controller = Controller(
        api_factory=shared_api,
        config_source=ConfigSource(
            shared_api, options.operator_namespace, ttl=options.config_cache_ttl
        ),
        metrics=metrics,
        workers=options.workers,
    )
    controller.replicas = ReplicaController(
        shared_api,
        controller.caches.objects,
        inference_services=controller.store.get,
        workers=options.workers,
        metrics=metrics,
    )
    controller.watch_api = counted_api  # each informer has a client (a connection) of its own
    return controller


async def _webhook_server(
    options: RunOptions, controller: Controller, memo: kopf.Memo
) -> kopf.WebhookServer:
    """The webhook over TLS: the mounted certificate, else the one the operator manages."""
    if options.webhook_cert_dir:
        folder = options.webhook_cert_dir
        certfile, keyfile = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
    else:
        managed = ManagedCertificate(controller.api_factory, options)
        try:
            await asyncio.to_thread(managed.refresh)
        except ApiError as exc:
            logger.error(
                "Failed to set up the webhook certificate",
                extra={"error": str(exc), "status": exc.status, "retryIn": 10},
            )
            raise kopf.TemporaryError(str(exc), delay=10) from None
        memo.certificate_task = asyncio.create_task(managed.keep_fresh())
        certfile, keyfile = managed.certfile, managed.keyfile
    return ReviewServer(
        grace=options.webhook_shutdown_grace,
        addr=options.webhook_bind_address,
        port=options.webhook_port,
        host=options.webhook_host,
        certfile=certfile,
        pkeyfile=keyfile,
    )


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    options: RunOptions = memo.get("options") or RunOptions()
    settings.posting.enabled = False  # events are the controller's, with their own source
    settings.peering.standalone = True
    # kopf watches nothing: the controller's own informers do (``controller.watches``). Nor does
    # it scan for CRDs or namespaces (no RBAC for either).
    settings.scanning.disabled = True
    allow_deep_objects()
    settings.networking.request_timeout = 60
    if memo.get("controller") is None:
        memo.controller = build_controller(options)
    controller: Controller = memo.controller
    if settings.admission.server is None:
        settings.admission.server = await _webhook_server(options, controller, memo)
    config_source = controller.config_source
    if isinstance(config_source, ConfigSource):
        try:
            await asyncio.to_thread(config_source.load)
        except StartupConfigError as exc:
            logger.error(str(exc))
            memo.startup_failure = str(exc)  # what `ome-operator run` exits with
            raise kopf.PermanentError(str(exc)) from None
    controller.lws_installed = await asyncio.to_thread(
        leader_worker_sets_installed, controller.api_factory()
    )
    # Optional APIs, looked up once: a MultiNode component without one is parked with the
    # condition and event LeaderWorkerSetNotInstalled until a restart finds it.
    logger.info(
        "Optional APIs found at start",
        extra={"leaderWorkerSet": "installed" if controller.lws_installed else "not installed"},
    )
    controller.start(
        controller.watch_api or kube_api,
        tuple(options.namespaces) or (None,),
        work=not options.leader_elect,
    )
    if options.leader_elect:
        memo.leadership = _leadership(options, controller)
        memo.leadership.start()
    bind = parse_bind_address(options.metrics_bind_address)
    if bind is not None and memo.get("metrics_started") is None:
        serve_metrics(*bind, unready=lambda: unready_reason(controller, settings.admission.server))
        memo.metrics_started = True


def unready_reason(controller: Controller, server: Any) -> str | None:
    """Why a review sent to this replica now would not be answered (None: it would be)."""
    if getattr(server, "stopping", False):
        return "the operator is stopping"
    if not controller.watches.synced.is_set():
        return "the caches have not listed the cluster yet"
    if not getattr(server, "listening", True):
        return "the webhook is not listening yet"
    return None


def _leadership(options: RunOptions, controller: Controller) -> Leadership:
    """Campaign for the leader Lease; the controller's workers start once it is held. A leader
    that loses it ends the process (SIGTERM to itself: a clean stop), to restart as a follower."""
    identity = os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
    elector = LeaseElector(
        controller.api_factory, options.operator_namespace, options.leader_election_id, identity
    )
    return Leadership(
        elector,
        on_elected=controller.start_working,
        on_lost=lambda: os.kill(os.getpid(), signal.SIGTERM),
    )


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    task = memo.get("certificate_task")
    if task is not None:
        task.cancel()
    leadership = memo.get("leadership")
    if leadership is not None:
        await leadership.stop()
    controller = memo.get("controller")
    if controller is not None:
        # Its passes finish while the Lease still holds (after a loss: a few seconds at most).
        drain = DRAIN_SECONDS if leadership is None else min(DRAIN_SECONDS, leadership.held_for())
        await controller.stop(drain)
    if leadership is not None:
        await leadership.release()  # the next leader need not wait for the Lease to expire


@kopf.on.probe(id="queued")
async def queued(memo: kopf.Memo, **_: Any) -> int:
    """Liveness detail: how many InferenceServices wait for a reconcile."""
    controller = memo.get("controller")
    return len(controller.queue) if controller is not None else 0
