"""Two replicas on a real API server (behind a loopback balancer standing in for the webhook
Service): one holds the leader Lease and reconciles, both answer admission. Killing the leader
hands the Lease to the other within its duration, with no object written twice; a rolling
restart under clients that keep sending InferenceServices refuses none of them: a stopping
replica fails /readyz and answers what still reaches it."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.controlplane.scenarios import converged, isvc, owned, seed
from tests.support.control_plane import free_port
from tests.support.installed_cluster import ISVC, Cluster, eventually, path
from tests.support.operator_process import OperatorProcess
from tests.support.tcp_proxy import loopback_balancer

pytestmark = pytest.mark.controlplane

LEASE = "coordination.k8s.io/v1/leases"
#: The Lease's duration, and what a follower may add: a retry period and a margin.
TAKEOVER_SECONDS = 15 + 2 + 3


#: The two replicas: a webhook port and a metrics port each, kept across restarts (a pod's).
NAMES = ("replica-a", "replica-b")


@dataclass(frozen=True)
class Ports:
    webhook: int = field(default_factory=free_port)
    metrics: int = field(default_factory=free_port)


def replica(cluster: Cluster, name: str, ports: Ports, shutdown_grace: float) -> OperatorProcess:
    process = OperatorProcess(
        cluster.operator_kubeconfig,
        cluster.folder / f"operator-ha-{name}.log",
        ports.webhook,
        ("--leader-elect",),
        env={"POD_NAME": name},
        shutdown_grace=shutdown_grace,
        metrics_port=ports.metrics,
    )
    process.start()
    eventually(lambda: process.readiness()[0] == 200)  # what a Service waits for
    return process


@contextlib.contextmanager
def service(cluster: Cluster, ports: dict[str, Ports]) -> Iterator[None]:
    """The webhook Service: the balancer on the webhook's port, routing to Ready replicas."""
    ready = {p.webhook: f"http://127.0.0.1:{p.metrics}/readyz" for p in ports.values()}
    with loopback_balancer(cluster.webhook_port, [p.webhook for p in ports.values()], ready):
        yield


def not_ready(process: OperatorProcess) -> tuple[int, str] | None:
    found = process.readiness()
    return found if found[0] != 200 else None


def holder(cluster: Cluster) -> str | None:
    lease = cluster.get(LEASE, "ome", "ome-operator")
    return ((lease or {}).get("spec") or {}).get("holderIdentity") or None


def creations(cluster: Cluster, mark: int) -> dict[tuple[str, str, str], int]:
    """How often the operator created each object since ``mark`` (Events aside)."""
    found: dict[tuple[str, str, str], int] = {}
    for record in cluster.operator_requests(mark, ("create",)):
        ref = record.get("objectRef") or {}
        if ref.get("resource") == "events" or record.get("responseStatus", {}).get("code") != 201:
            continue
        key = (ref.get("resource", ""), ref.get("namespace", ""), ref.get("name", ""))
        found[key] = found.get(key, 0) + 1
    return found


class Client(threading.Thread):
    """Sends InferenceService creates one after another (at most ``limit``, every ``pause``
    seconds; ``dry_run``: admission only) until stopped; every answer that is not 201 is kept."""

    def __init__(
        self,
        cluster: Cluster,
        namespace: str,
        prefix: str,
        *,
        limit: int = 300,
        pause: float = 0.2,
        dry_run: bool = False,
    ) -> None:
        super().__init__(daemon=True)
        self.cluster, self.namespace, self.prefix = cluster, namespace, prefix
        self.limit, self.pause = limit, pause
        self.url = path(ISVC, namespace) + ("?dryRun=All" if dry_run else "")
        self.stopped = threading.Event()
        self.sent = 0
        self.refused: list[tuple[int, Any]] = []

    def run(self) -> None:
        while not self.stopped.is_set() and self.sent < self.limit:
            manifest = isvc(self.namespace, f"{self.prefix}-{self.sent}")
            status, answer = self.cluster.plane.raw("POST", self.url, manifest)
            self.sent += 1
            if status != 201:
                self.refused.append((status, (answer or {}).get("message")))
            time.sleep(self.pause)


def test_the_leader_fails_over_within_the_lease_and_nothing_is_made_twice(cluster, namespace):
    ports = {name: Ports() for name in NAMES}
    with service(cluster, ports):
        running = {name: replica(cluster, name, ports[name], 0.5) for name in NAMES}
        try:
            seed(cluster, namespace, isvc(namespace, "chat"))
            eventually(lambda: len(owned(cluster, namespace, "chat")) == 4)
            converged(cluster, namespace)
            leader = eventually(lambda: holder(cluster))
            (follower,) = set(running) - {leader}

            mark = cluster.plane.audit_mark()
            killed = time.monotonic()
            running[leader].kill()
            eventually(lambda: holder(cluster) == follower, timeout=2 * TAKEOVER_SECONDS)
            assert time.monotonic() - killed < TAKEOVER_SECONDS
            seed(cluster, namespace, isvc(namespace, "after"))
            eventually(lambda: len(owned(cluster, namespace, "after")) == 4)
            converged(cluster, namespace)
            made = creations(cluster, mark)
            assert {k: n for k, n in made.items() if n != 1} == {}
            assert {k[2] for k in made if k[2].startswith("chat")} == set()  # nothing re-made
        finally:
            codes = {name: process.stop() for name, process in running.items()}
    assert codes == {follower: 0, leader: -9}


#: The replicas' --webhook-shutdown-grace in the rolling restart: long enough to see /readyz
#: fail while the port still answers.
GRACE = 2.0


def test_a_rolling_restart_under_load_refuses_no_admission(cluster, namespace):
    """Each replica is stopped and started again in turn, twice, while reviews keep arriving
    (three clients: creates, and two sending dry runs as fast as they are answered). Before,
    a review half read or sent on an idle connection when the stop began failed (EOF, or
    "context deadline exceeded" after 10 s, which the stop then waited for)."""
    ports = {name: Ports() for name in NAMES}
    with service(cluster, ports):
        running = {name: replica(cluster, name, ports[name], GRACE) for name in NAMES}
        try:
            seed(cluster, namespace, isvc(namespace, "chat"))
            eventually(lambda: len(owned(cluster, namespace, "chat")) == 4)
            clients = [
                Client(cluster, namespace, "load"),
                *(
                    Client(cluster, namespace, f"dry{k}", limit=20_000, pause=0, dry_run=True)
                    for k in (1, 2)
                ),
            ]
            for client in clients:
                client.start()
            stops, readiness = [], []
            for name in [*NAMES, *NAMES]:
                process, started = running[name], time.monotonic()
                process.terminate()
                readiness.append(eventually(lambda p=process: not_ready(p), interval=0.05))
                assert process.popen is not None
                process.popen.wait(30)
                stops.append(
                    (name, process.popen.returncode, time.monotonic() - started < GRACE + 3)
                )
                running[name] = replica(cluster, name, ports[name], GRACE)
            for client in clients:
                client.stopped.set()
                client.join(30)
            # each sent through the whole roll (none ran out of its limit), and none was refused
            assert [(10 < c.sent < c.limit, c.refused) for c in clients] == [(True, [])] * 3
            assert stops == [(name, 0, True) for name in [*NAMES, *NAMES]]
            assert set(readiness) == {(503, "not ready: the operator is stopping\n")}
            last = f"load-{clients[0].sent - 1}"
            eventually(lambda: len(owned(cluster, namespace, last)) == 4)
        finally:
            codes = {name: process.stop() for name, process in running.items()}
    assert codes == dict.fromkeys(NAMES, 0)
