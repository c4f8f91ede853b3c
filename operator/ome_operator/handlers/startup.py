"""Operator start-up and shutdown: kopf settings, the controller, metrics, the webhook server."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import kopf
import prometheus_client
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from ..cluster.api import ApiError, KubeApi
from ..controller.configuring import ConfigSource
from ..controller.running import Controller
from ..core.operator_config import StartupConfigError
from ..metrics import Metrics
from ..settings import RunOptions, parse_bind_address
from .certificates import ManagedCertificate

__all__ = [
    "NoDiffBase",
    "build_controller",
    "credentials_problem",
    "kube_api",
    "leader_worker_sets_installed",
]

logger = logging.getLogger("ome_operator.startup")


def kube_api() -> KubeApi:
    """A client for the cluster: in-cluster credentials, else the kubeconfig."""
    configuration = k8s_client.Configuration()
    try:
        k8s_config.load_incluster_config(client_configuration=configuration)
    except k8s_config.ConfigException:
        k8s_config.load_kube_config(client_configuration=configuration)
    return KubeApi(k8s_client.ApiClient(configuration))


def credentials_problem() -> str | None:
    """Why no client for a cluster can be made (None: one can), before anything starts."""
    try:
        kube_api()
    except (k8s_config.ConfigException, OSError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return (
            "no cluster to connect to (no in-cluster service account, no usable kubeconfig): "
            f"{reason}"
        )
    return None


def leader_worker_sets_installed(api: KubeApi) -> bool:
    """S5.3: MultiNode needs the LeaderWorkerSet API when the manager starts."""
    try:
        found = api.request("GET", "/apis/leaderworkerset.x-k8s.io/v1")
    except ApiError:
        return False
    return any(r.get("name") == "leaderworkersets" for r in found.get("resources", []))


def build_controller(options: RunOptions, metrics: Metrics | None = None) -> Controller:
    api: list[KubeApi] = []

    def shared_api() -> KubeApi:
        if not api:
            api.append(kube_api())
        return api[0]

    return Controller(
        api_factory=shared_api,
        config_source=ConfigSource(
            shared_api, options.operator_namespace, ttl=options.config_cache_ttl
        ),
        metrics=metrics or Metrics(),
        workers=options.workers,
    )


class NoDiffBase(kopf.DiffBaseStorage):
    """No last-handled state: this operator registers no change-detecting handlers
    (``on.create``/``on.update``/``on.field``), only event, index, probe and admission ones.

    kopf otherwise builds a deep-copied essence of every watched object on every event only to
    diff it for such handlers; nothing is stored on the objects either way.
    """

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> Any:
        return {}

    def fetch(self, *, body: kopf.Body) -> None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: Any) -> None:
        return None


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
    return kopf.WebhookServer(
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
    # The ome.io CRDs are installed before the operator: no CRD or namespace watch (and no RBAC
    # for one) to discover them later.
    settings.scanning.disabled = True
    settings.networking.request_timeout = 60
    settings.persistence.diffbase_storage = NoDiffBase()
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
            raise kopf.PermanentError(str(exc)) from None
    controller.lws_installed = await asyncio.to_thread(
        leader_worker_sets_installed, controller.api_factory()
    )
    controller.caches.objects.start(
        kube_api,
        options.namespaces or (None,),
        retry_delay=controller.backoff.delay,
        leader_worker_sets=controller.lws_installed,
    )
    bind = parse_bind_address(options.metrics_bind_address)
    if bind is not None and memo.get("metrics_started") is None:
        prometheus_client.start_http_server(bind[1], addr=bind[0])
        memo.metrics_started = True


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    task = memo.get("certificate_task")
    if task is not None:
        task.cancel()
    controller = memo.get("controller")
    if controller is not None:
        await controller.stop()


@kopf.on.probe(id="queued")
async def queued(memo: kopf.Memo, **_: Any) -> int:
    """Liveness detail: how many InferenceServices wait for a reconcile."""
    controller = memo.get("controller")
    return len(controller.queue) if controller is not None else 0
