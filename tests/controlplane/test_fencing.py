"""Fenced leadership on a real API server: a leader that is paused (SIGSTOP) or whose connections
stall for longer than the Lease's duration, while InferenceServices keep arriving, sends no write
that lands after the new leader's first. The two replicas authenticate as one ServiceAccount;
the audit log tells them apart by the user agent each sends (``ome-operator/<version>
(<identity>)``). Short Lease terms (6 s, 4 s, 1 s) keep each test to seconds."""

from __future__ import annotations

import contextlib
import datetime
import pathlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from tests.controlplane.scenarios import isvc, seed
from tests.support.control_plane import free_port, write_kubeconfig
from tests.support.installed_cluster import ISVC, WRITE_VERBS, Cluster, eventually, path
from tests.support.operator_process import OperatorProcess
from tests.support.stalling_proxy import StallingProxy, stalling_proxy
from tests.support.tcp_proxy import loopback_balancer

pytestmark = pytest.mark.controlplane

LEASE = "coordination.k8s.io/v1/leases"
#: Lease terms of these tests: duration, renew deadline, retry period (seconds).
TERMS = (6.0, 4.0, 1.0)
TERMS_FLAGS = (
    f"--leader-elect-lease-duration={TERMS[0]:g}",
    f"--leader-elect-renew-deadline={TERMS[1]:g}",
    f"--leader-elect-retry-period={TERMS[2]:g}",
)
#: How long a takeover may take: the duration, a retry period, and a margin for a loaded machine.
TAKEOVER_SECONDS = TERMS[0] + TERMS[2] + 10
OLD, NEW = "replica-a", "replica-b"


def holder(cluster: Cluster) -> str | None:
    lease = cluster.get(LEASE, "ome", "ome-operator")
    return ((lease or {}).get("spec") or {}).get("holderIdentity") or None


def start_replica(
    cluster: Cluster, namespace: str, name: str, webhook: int, metrics: int, kubeconfig: Any = None
) -> OperatorProcess:
    process = OperatorProcess(
        kubeconfig or cluster.operator_kubeconfig,
        cluster.folder / f"operator-{namespace}-{name}.log",
        webhook,
        ("--leader-elect", *TERMS_FLAGS),
        env={"POD_NAME": name},
        metrics_port=metrics,
    )
    process.start()
    eventually(lambda: process.readiness()[0] == 200)
    return process


class Changes(threading.Thread):
    """Creates InferenceServices one after another (through the webhook) until stopped."""

    def __init__(self, cluster: Cluster, namespace: str, prefix: str, limit: int = 200) -> None:
        super().__init__(daemon=True)
        self.cluster, self.namespace, self.limit = cluster, namespace, limit
        self.prefix = prefix
        self.stopped = threading.Event()
        self.sent = 0

    def run(self) -> None:
        while not self.stopped.is_set() and self.sent < self.limit:
            manifest = isvc(self.namespace, f"{self.prefix}-{self.sent}")
            self.cluster.plane.raw("POST", path(ISVC, self.namespace), manifest)
            self.sent += 1
            self.stopped.wait(0.1)


def _received(record: dict[str, Any]) -> datetime.datetime:
    return datetime.datetime.fromisoformat(
        record["requestReceivedTimestamp"].replace("Z", "+00:00")
    )


def writes_of(records: list[dict[str, Any]], identity: str) -> list[dict[str, Any]]:
    """The write requests (no GET, LIST or WATCH) sent by the replica ``identity``."""
    return [
        r
        for r in records
        if r.get("verb") in WRITE_VERBS and str(r.get("userAgent", "")).endswith(f"({identity})")
    ]


def describe(record: dict[str, Any]) -> str:
    ref = record.get("objectRef") or {}
    return (
        f"{record['requestReceivedTimestamp']} {record['verb']} {ref.get('resource')} "
        f"{ref.get('namespace')}/{ref.get('name')}: {record.get('responseStatus', {}).get('code')}"
    )


def stale_writes(cluster: Cluster, mark: int) -> tuple[list[str], dict[str, float]]:
    """The old leader's writes that landed at or after the new leader's first write (its own
    Lease writes only when they succeeded), and the measured gaps (seconds)."""
    records = cluster.plane.audit_since(mark)
    old, new = writes_of(records, OLD), writes_of(records, NEW)
    assert new, "the new leader wrote nothing"
    first_new = min(_received(r) for r in new)
    work = [r for r in old if (r.get("objectRef") or {}).get("resource") != "leases"]
    assert work, "the old leader wrote nothing: nothing was fenced"
    late = [
        describe(r)
        for r in old
        if _received(r) >= first_new
        and not (
            (r.get("objectRef") or {}).get("resource") == "leases"
            and r.get("responseStatus", {}).get("code", 0) >= 400
        )
    ]
    last_old = max(_received(r) for r in work)
    return late, {"last old write to first new write": (first_new - last_old).total_seconds()}


@contextlib.contextmanager
def webhook_service(cluster: Cluster) -> Iterator[tuple[dict[str, int], dict[str, int]]]:
    """The webhook Service in front of both replicas: their webhook and metrics ports."""
    webhooks = {OLD: free_port(), NEW: free_port()}
    metrics = {OLD: free_port(), NEW: free_port()}
    ready = {webhooks[n]: f"http://127.0.0.1:{metrics[n]}/readyz" for n in (OLD, NEW)}
    with loopback_balancer(cluster.webhook_port, list(webhooks.values()), ready):
        yield webhooks, metrics


def lost_the_lease(process: OperatorProcess) -> list[dict[str, Any]]:
    return [
        r for r in process.records() if r.get("message", "").startswith("Lost the leader Lease")
    ]


@contextlib.contextmanager
def paused(old: OperatorProcess) -> Iterator[None]:
    """The old leader stopped (SIGSTOP) for the block, then resumed (SIGCONT)."""
    assert old.popen is not None
    old.popen.send_signal(signal.SIGSTOP)
    try:
        assert old.readiness() == (0, "")  # a paused replica answers no probe
        yield
    finally:
        old.popen.send_signal(signal.SIGCONT)


@contextlib.contextmanager
def stalled(proxy: StallingProxy) -> Iterator[None]:
    """Every connection through ``proxy`` stalled for the block, then healed."""
    proxy.stall()
    try:
        yield
    finally:
        proxy.heal()


def assert_fenced_takeover(
    cluster: Cluster,
    namespace: str,
    cut_off: Callable[[OperatorProcess], contextlib.AbstractContextManager[None]],
    cut_off_as: str,
    exit_seconds: float,
    old_kubeconfig: pathlib.Path | None = None,
) -> None:
    """While InferenceServices keep arriving, the old leader is cut off by ``cut_off`` until the
    new leader took over and wrote: the old leader then exits having given the Lease up, and
    none of its writes lands after the new leader's first. Prints the FENCING line (the cut-off
    named ``cut_off_as``, its seconds, what was sent and the measured gaps)."""
    with webhook_service(cluster) as (webhooks, metrics):
        old = start_replica(cluster, namespace, OLD, webhooks[OLD], metrics[OLD], old_kubeconfig)
        running = [old]
        try:
            seed(cluster, namespace, isvc(namespace, "chat"))
            eventually(lambda: holder(cluster) == OLD)
            running.append(start_replica(cluster, namespace, NEW, webhooks[NEW], metrics[NEW]))
            mark = cluster.plane.audit_mark()
            # Three clients: a review pinned to a paused replica holds its client for 10 s.
            changes = [Changes(cluster, namespace, f"load{k}") for k in range(3)]
            for client in changes:
                client.start()
            eventually(lambda: writes_of(cluster.plane.audit_since(mark), OLD)[5:])
            cut = time.monotonic()
            with cut_off(old):
                eventually(lambda: holder(cluster) == NEW, timeout=TAKEOVER_SECONDS)
                eventually(lambda: writes_of(cluster.plane.audit_since(mark), NEW)[5:])
            restored = time.monotonic()
            eventually(lambda: not old.alive(), timeout=exit_seconds)
            for client in changes:
                client.stopped.set()
                client.join(30)
            late, gaps = stale_writes(cluster, mark)
            print(
                f"FENCING {cut_off_as}={restored - cut:.1f}s sent={sum(c.sent for c in changes)} "
                f"given up by={lost_the_lease(old)[0].get('noticedBy')} "
                + " ".join(f"{k}={v:.2f}s" for k, v in gaps.items())
            )
            assert late == []
            assert old.popen is not None
            assert (old.popen.returncode, len(lost_the_lease(old))) == (0, 1)
        finally:
            for process in running:
                process.stop()


def test_a_paused_leader_sends_no_write_after_the_new_leader_took_over(cluster, namespace):
    assert_fenced_takeover(cluster, namespace, paused, "paused", exit_seconds=20)


def test_a_leader_whose_connections_stall_sends_no_write_after_the_new_leader_took_over(
    cluster, namespace
):
    """The old leader reaches the API server through a proxy that stalls every connection (a
    partition) until the new leader wrote, then heals: what the old leader sent into the stall
    was abandoned (its connections reset) before the Lease could change hands."""
    server_port = int(cluster.plane.url.rsplit(":", 1)[1])
    token = yaml.safe_load(cluster.operator_kubeconfig.read_text())["users"][0]["user"]["token"]
    with stalling_proxy(server_port) as proxy:
        kubeconfig = write_kubeconfig(
            cluster.folder / "operator-stalled.kubeconfig",
            f"https://127.0.0.1:{proxy.port}",
            cluster.plane.ca_file,
            token,
        )
        assert_fenced_takeover(
            cluster,
            namespace,
            lambda _old: stalled(proxy),
            "stalled",
            exit_seconds=30,
            old_kubeconfig=kubeconfig,
        )
