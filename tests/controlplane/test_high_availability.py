"""Two replicas on a real API server (behind a loopback balancer standing in for the webhook
Service): one holds the leader Lease and reconciles, both answer admission. Killing the leader
hands the Lease to the other within its duration, with no object written twice; a rolling
restart under a client that keeps creating InferenceServices refuses none of them."""

from __future__ import annotations

import threading
import time
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


def replica(cluster: Cluster, name: str, port: int) -> OperatorProcess:
    process = OperatorProcess(
        cluster.operator_kubeconfig,
        cluster.folder / f"operator-ha-{name}.log",
        port,
        ("--leader-elect",),
        env={"POD_NAME": name},
    )
    process.start()
    return process


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
    """Creates InferenceServices one after another (at most ``limit``) until stopped; every
    answer that is not 201 is kept."""

    def __init__(self, cluster: Cluster, namespace: str, limit: int = 300) -> None:
        super().__init__(daemon=True)
        self.cluster, self.namespace, self.limit = cluster, namespace, limit
        self.stopped = threading.Event()
        self.sent = 0
        self.refused: list[tuple[int, Any]] = []

    def run(self) -> None:
        while not self.stopped.is_set() and self.sent < self.limit:
            manifest = isvc(self.namespace, f"load-{self.sent}")
            status, answer = self.cluster.plane.raw("POST", path(ISVC, self.namespace), manifest)
            self.sent += 1
            if status != 201:
                self.refused.append((status, (answer or {}).get("message")))
            time.sleep(0.2)


def test_the_leader_fails_over_and_a_rolling_restart_refuses_no_admission(cluster, namespace):
    ports = {"replica-a": free_port(), "replica-b": free_port()}
    with loopback_balancer(cluster.webhook_port, list(ports.values())):
        running = {name: replica(cluster, name, port) for name, port in ports.items()}
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

            client = Client(cluster, namespace)
            client.start()
            running[leader] = replica(cluster, leader, ports[leader])  # the pod comes back
            assert running[follower].stop() == 0  # a rolling update: the leader goes first
            eventually(lambda: holder(cluster) == leader, timeout=TAKEOVER_SECONDS)
            running[follower] = replica(cluster, follower, ports[follower])
            time.sleep(1)
            client.stopped.set()
            client.join(30)
            assert (client.sent > 10, client.refused) == (True, [])
            eventually(lambda: len(owned(cluster, namespace, f"load-{client.sent - 1}")) == 4)
        finally:
            codes = {name: process.stop() for name, process in running.items()}
    assert codes == dict.fromkeys(ports, 0)
