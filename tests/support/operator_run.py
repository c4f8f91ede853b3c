"""Running the real operator (kopf + our handlers) in the test's event loop against the emulator.

testing-stack.md §6: ``kopf.spawn_tasks`` + ``kopf.run_tasks`` with an ``ignored`` set that holds
every task, so kopf's shutdown leaves pytest's and the emulator's tasks alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import kopf
from prometheus_client import CollectorRegistry

import ome_operator.handlers  # noqa: F401  (registers the handlers in kopf's default registry)
from ome_operator.controller.queue import Backoff
from ome_operator.controller.running import Controller
from ome_operator.handlers.review_server import ReviewServer
from ome_operator.handlers.startup import build_controller
from ome_operator.metrics import Metrics
from ome_operator.settings import RunOptions

#: The backoff of every operator the tests run (the controllers' retries and their informers'):
#: whatever failed is tried again within ``limit`` seconds, so a wait for a retry that must not
#: come is a little longer than that (``QUIET_SECONDS``).
BACKOFF = Backoff(first=0.05, limit=0.4)
#: How long a test watches for a retry or a write that must not come: past the longest backoff.
QUIET_SECONDS = BACKOFF.limit + 0.1


class _IgnoreAll(frozenset):
    def __contains__(self, item: object) -> bool:
        return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningOperator:
    controller: Controller
    registry: CollectorRegistry
    webhook_url: str
    liveness_url: str

    def metric(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0

    async def settled(self, timeout: float = 5.0) -> None:
        """Wait until no reconcile is queued or running (watch events included)."""
        deadline = asyncio.get_running_loop().time() + timeout
        quiet = 0
        while quiet < 5:
            await asyncio.sleep(0.02)
            replicas = self.controller.replicas
            idle = self.controller.queue.idle() and (replicas is None or replicas.queue.idle())
            quiet = quiet + 1 if idle else 0
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("the operator did not settle")


@contextlib.asynccontextmanager
async def running_operator(
    *, workers: int = 2, config_namespace: str = "ome", namespaces: tuple[str, ...] = ()
) -> AsyncIterator[RunningOperator]:
    """The operator, watching every namespace or only ``namespaces`` (``run --namespace``)."""
    registry = CollectorRegistry()
    options = RunOptions(
        metrics_bind_address="0",
        operator_namespace=config_namespace,
        workers=workers,
        namespaces=namespaces,
    )
    controller = build_controller(options, Metrics(registry), backoff=BACKOFF)
    settings = kopf.OperatorSettings()
    webhook_port, liveness_port = free_port(), free_port()
    settings.admission.server = ReviewServer(addr="127.0.0.1", port=webhook_port, insecure=True)
    settings.networking.error_backoffs = [0.05, 0.1, 0.2]
    settings.queueing.error_delays = [0.05, 0.1, 0.2]
    settings.execution.default_backoff = 0.2
    settings.watching.reconnect_backoff = 0.05
    memo = kopf.Memo(options=options, controller=controller)
    stop, ready = asyncio.Event(), asyncio.Event()
    liveness = f"http://127.0.0.1:{liveness_port}/healthz"
    tasks = await kopf.spawn_tasks(
        settings=settings,
        standalone=True,
        clusterwide=not namespaces,
        namespaces=namespaces,
        stop_flag=stop,
        ready_flag=ready,
        memo=memo,
        liveness_endpoint=liveness,
    )
    runner = asyncio.create_task(kopf.run_tasks(tasks, ignored=_IgnoreAll()))
    try:
        await asyncio.wait_for(ready.wait(), 10)
        yield RunningOperator(controller, registry, f"http://127.0.0.1:{webhook_port}", liveness)
    finally:
        stop.set()
        await asyncio.wait_for(runner, 15)
