"""The clients start-up makes: the controllers' asks the fence before every write (under leader
election, ``Leadership.fence``), the watches' only reads, and every request names the replica in
its user agent (the audit log tells two replicas of one ServiceAccount apart by it)."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from ome_operator import __version__
from ome_operator.cluster.errors import NotFound
from ome_operator.cluster.leases import NotLeading
from ome_operator.handlers.startup import build_controller
from ome_operator.metrics import Metrics
from ome_operator.settings import RunOptions

CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "default"},
    "data": {"a": "1"},
}


def refuse(method: str, path: str) -> float:
    raise NotLeading.refusing(method, path, None)


async def test_the_controllers_writes_are_fenced_and_every_request_names_the_replica(
    kube, kubeconfig
):
    controller = build_controller(
        RunOptions(metrics_bind_address="0"),
        Metrics(CollectorRegistry()),
        identity="replica-a",
        fence=refuse,
    )
    with pytest.raises(NotLeading) as refused:
        await asyncio.to_thread(controller.api_factory().create, CONFIG_MAP)
    assert controller.watch_api is not None
    with pytest.raises(NotFound):
        await asyncio.to_thread(controller.watch_api().get, CONFIG_MAP)
    with pytest.raises(NotFound):  # a read through the fenced client is not fenced
        await asyncio.to_thread(controller.api_factory().get, CONFIG_MAP)
    assert (
        str(refused.value),
        [(r.method.name, r.headers.get("User-Agent")) for r in kube],
    ) == (
        "POST /api/v1/namespaces/default/configmaps not sent: "
        "this replica does not hold the leader Lease",
        [("GET", f"ome-operator/{__version__} (replica-a)")] * 2,
    )
