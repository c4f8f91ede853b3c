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

from .. import __version__
from ..cluster.api import KubeApi, WriteFence
from ..cluster.credentials import kube_api
from ..cluster.errors import ApiError, NotFound
from ..cluster.leases import LeaseElector, LeaseTerms
from ..cluster.resources import resource_named
from ..controller.configuring import ConfigSource
from ..controller.leading import Leadership
from ..controller.namespace_labels import NamespaceLabels
from ..controller.queue import Backoff
from ..controller.replicas import ReplicaController
from ..controller.running import Controller
from ..controller.runtime import DRAIN_SECONDS
from ..core.operator_config import StartupConfigError
from ..core.other_controllers import (
    MANAGER,
    WEBHOOK_CONFIGURATIONS,
    FoundObject,
    allowed_warning,
    found_objects,
    refusal_message,
)
from ..metrics import Metrics, serve_metrics
from ..settings import RunOptions, parse_bind_address
from .certificates import ManagedCertificate
from .loop_stalls import StallWatch
from .metrics_access import secured_serving
from .review_server import ConnectionTimeouts, ReviewServer

__all__ = [
    "OPTIONAL_KINDS",
    "build_controller",
    "gang_placement",
    "missing_kinds",
    "other_controllers",
    "replica_identity",
    "unready_reason",
    "user_agent",
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


#: The optional APIs looked up at start: MultiNode needs LeaderWorkerSets, the KEDA autoscaler
#: class ScaledObjects, gang placement PodGroups.
OPTIONAL_KINDS = ("LeaderWorkerSet", "ScaledObject", "PodGroup")


def served(api: KubeApi, kind: str) -> bool:
    """Whether the API server serves ``kind`` (its group version lists its resource)."""
    resource = resource_named(kind)
    try:
        found = api.request("GET", f"/apis/{resource.api_version}")
    except ApiError:
        return False
    return any(r.get("name") == resource.plural for r in found.get("resources", []))


def _found(kind: str, missing: frozenset[str]) -> str:
    return "not installed" if kind in missing else "installed"


def gang_placement(options: RunOptions, missing: frozenset[str]) -> str:
    """``on`` when multi-pod Instances are placed whole; else why not."""
    if options.gang_placement == "off":
        return "off (--gang-placement=off)"
    return "off (no PodGroup API)" if "PodGroup" in missing else "on"


def missing_kinds(api: KubeApi) -> frozenset[str]:
    """The optional kinds (``OPTIONAL_KINDS``) the API server does not serve."""
    return frozenset(kind for kind in OPTIONAL_KINDS if not served(api, kind))


_WEBHOOKS = "/apis/admissionregistration.k8s.io/v1"


def _looked_up(api: KubeApi, path: str) -> dict | None:
    """What a GET of ``path`` answers (None: not found, or the API failed it: logged)."""
    try:
        return api.request("GET", path)
    except NotFound:
        return None
    except ApiError as exc:
        logger.warning(
            "Failed to look for another controller of ome.io InferenceServices; starting "
            "without knowing whether one runs",
            extra={"path": path, "error": str(exc), "status": exc.status},
        )
        return None


def other_controllers(api: KubeApi, options: RunOptions) -> tuple[FoundObject, ...]:
    """OME's running manager and its webhook configurations in the cluster, one GET each
    (``core.other_controllers``). The manager is looked for only when the operator watches every
    namespace: with ``-n`` its RBAC grants no read outside its namespaces."""
    path = "/apis/apps/v1/namespaces/{}/deployments/{}".format(*MANAGER)
    manager = _looked_up(api, path) if not options.namespaces else None
    configurations = [
        (kind, name)
        for kind, name in WEBHOOK_CONFIGURATIONS
        if _looked_up(api, f"{_WEBHOOKS}/{kind.lower()}s/{name}") is not None
    ]
    managers = [manager] if manager is not None else []
    return found_objects(managers, configurations, options.webhook_configuration)


async def _refuse_other_controllers(options: RunOptions, api: KubeApi, memo: kopf.Memo) -> None:
    """Stop the start when another controller of ome.io InferenceServices is found, unless
    ``--allow-other-controller`` says to start beside it (a warning names it)."""
    found = await asyncio.to_thread(other_controllers, api, options)
    memo.others_checked = True
    if not found:
        return
    if options.allow_other_controller:
        logger.warning(allowed_warning(found))
        return
    message = refusal_message(found)
    logger.error(message)
    memo.startup_failure = message  # what `ome-operator run` exits with
    raise kopf.PermanentError(message)


def replica_identity() -> str:
    """This replica's name in the leader Lease and in its user agent: the pod's name, else the
    host name with a random suffix."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def user_agent(identity: str) -> str:
    """What every request of this replica says it is: the API server's audit log records it
    (``userAgent``), so two replicas of one ServiceAccount can be told apart."""
    return f"ome-operator/{__version__} ({identity})"


def build_controller(
    options: RunOptions,
    metrics: Metrics | None = None,
    *,
    identity: str | None = None,
    fence: WriteFence | None = None,
    backoff: Backoff | None = None,
) -> Controller:
    """The controllers, whose client asks ``fence`` before every write (under leader election:
    ``Leadership.fence``), retrying failures and watches after ``backoff`` (by default
    ``Backoff()``)."""
    backoff = backoff or Backoff()
    api: list[KubeApi] = []

    metrics = metrics or Metrics()
    agent = user_agent(identity or replica_identity())

    def counted_api() -> KubeApi:
        return kube_api(on_request=metrics.record_api_request, user_agent=agent)

    def shared_api() -> KubeApi:
        if not api:
            api.append(
                kube_api(on_request=metrics.record_api_request, user_agent=agent, fence=fence)
            )
        return api[0]

    controller = Controller(
        api_factory=shared_api,
        config_source=ConfigSource(shared_api, options.operator_namespace),
        metrics=metrics,
        workers=options.workers,
        backoff=backoff,
        namespace_labels=NamespaceLabels(shared_api, ttl=options.config_cache_ttl),
    )
    controller.replicas = ReplicaController(
        shared_api,
        controller.caches.objects,
        inference_services=controller.store.get,
        workers=options.workers,
        backoff=backoff,
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
        # Every replica keeps the certificate, leader or not: a client without the fence.
        client = kube_api(user_agent=user_agent(memo.identity))
        managed = ManagedCertificate(lambda: client, options)
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
        timeouts=ConnectionTimeouts(idle=options.webhook_idle_timeout),
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
    if memo.get("identity") is None:
        memo.identity = replica_identity()
    if options.leader_elect and memo.get("leadership") is None:
        memo.leadership = _leadership(options, memo)
    leadership: Leadership | None = memo.get("leadership")
    if memo.get("controller") is None:
        fence = leadership.fence if leadership is not None else None
        memo.controller = build_controller(options, identity=memo.identity, fence=fence)
    controller: Controller = memo.controller
    if memo.get("others_checked") is None:  # before any write: OME's Secret is named as ours
        await _refuse_other_controllers(options, controller.api_factory(), memo)
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
    controller.missing = await asyncio.to_thread(missing_kinds, controller.api_factory())
    # Optional APIs, looked up once: a MultiNode component without one is parked with the
    # condition and event LeaderWorkerSetNotInstalled, a KEDA-scaled one with
    # KEDANotInstalled, until a restart finds it; without PodGroups, pods are placed one by one.
    gangs = gang_placement(options, controller.missing)
    if controller.replicas is not None:
        controller.replicas.gang_placement = gangs == "on"
    logger.info(
        "Optional APIs found at start",
        extra={
            "leaderWorkerSet": _found("LeaderWorkerSet", controller.missing),
            "keda": _found("ScaledObject", controller.missing),
            "podGroups": _found("PodGroup", controller.missing),
            "gangPlacement": gangs,
        },
    )
    controller.start(
        controller.watch_api or kube_api,
        tuple(options.namespaces) or (None,),
        work=not options.leader_elect,
    )
    if leadership is not None:
        leadership.start()
    if memo.get("stalls") is None:
        memo.stalls = StallWatch()
        memo.stalls_task = asyncio.create_task(memo.stalls.run())
    stalls: StallWatch = memo.stalls
    bind = parse_bind_address(options.metrics_bind_address)
    if bind is not None and memo.get("metrics_started") is None:
        serve_metrics(
            *bind,
            unready=lambda: unready_reason(controller, settings.admission.server, stalls),
            **secured_serving(
                options.metrics_secure, settings.admission.server, user_agent(memo.identity)
            ),
        )
        memo.metrics_started = True


def unready_reason(
    controller: Controller, server: Any, stalls: StallWatch | None = None
) -> str | None:
    """Why a review sent to this replica now would not be answered, or not from current caches
    (None: it would be)."""
    if getattr(server, "stopping", False):
        return "the operator is stopping"
    stalled = stalls.unready_reason() if stalls is not None else None
    if stalled is not None:
        return stalled
    if not controller.watches.synced.is_set():
        return "the caches have not listed the cluster yet"
    if not getattr(server, "listening", True):
        return "the webhook is not listening yet"
    return None


def _leadership(options: RunOptions, memo: kopf.Memo) -> Leadership:
    """Campaign for the leader Lease; the controller's workers start once it is held. A leader
    that loses it ends the process (SIGTERM to itself: a clean stop), to restart as a follower.
    The renewals have a client of their own: each request sent once, answered within the terms'
    ``request_timeout`` (4 s by default), and not fenced."""
    terms = LeaseTerms(
        duration=options.leader_elect_lease_duration,
        renew_deadline=options.leader_elect_renew_deadline,
        retry=options.leader_elect_retry_period,
    )
    client: list[KubeApi] = []

    def renewals_api() -> KubeApi:
        if not client:
            client.append(
                kube_api(
                    on_request=lambda verb, code: memo.controller.metrics.record_api_request(
                        verb, code
                    ),
                    timeout=terms.request_timeout,
                    user_agent=user_agent(memo.identity),
                )
            )
        return client[0]

    elector = LeaseElector(
        renewals_api,
        options.operator_namespace,
        options.leader_election_id,
        memo.identity,
        terms=terms,
    )
    return Leadership(
        elector,
        on_elected=lambda: memo.controller.start_working(),
        on_lost=lambda: os.kill(os.getpid(), signal.SIGTERM),
    )


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    for name in ("certificate_task", "stalls_task"):
        task = memo.get(name)
        if task is not None:
            task.cancel()
    leadership = memo.get("leadership")
    if leadership is not None:
        await leadership.stop()
    controller = memo.get("controller")
    if controller is not None:
        # Its passes finish while the fence lets them write (after a loss: not at all).
        drain = DRAIN_SECONDS if leadership is None else min(DRAIN_SECONDS, leadership.held_for())
        await controller.stop(drain)
    if leadership is not None:
        await leadership.release()  # the next leader need not wait for the Lease to expire


@kopf.on.probe(id="queued")
async def queued(memo: kopf.Memo, **_: Any) -> int:
    """Liveness detail: how many InferenceServices wait for a reconcile."""
    controller = memo.get("controller")
    return len(controller.queue) if controller is not None else 0
