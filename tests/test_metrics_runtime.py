"""The metrics of the operator's runtime: work queue depth and wait (a ``WorkQueue`` driven on a
fake clock), API requests by verb and code (``KubeApi`` against the emulator), failed LISTs and
WATCHes (an ``Informer`` against the emulator), the build info, and the process's metrics the
API edge reports to by default."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

import kmock
import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from prometheus_client import CollectorRegistry

from ome_operator import OME_VERSION, __version__
from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.errors import ApiError
from ome_operator.cluster.informing import Informer
from ome_operator.cluster.resources import resource_named
from ome_operator.controller.queue import Backoff, WorkQueue
from ome_operator.metrics import Metrics
from tests.support.kube_access import eventually

CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "default"},
    "data": {"a": "1"},
}
CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "apps/v1/deployments"


def samples(registry: CollectorRegistry, name: str) -> dict[tuple[str, ...], float]:
    """Every sample called ``name``, keyed by its label values in label order."""
    return {
        tuple(sample.labels.values()): sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == name
    }


def test_build_info_is_one_with_the_version_and_the_ome_release() -> None:
    registry = CollectorRegistry()
    Metrics(registry)

    assert samples(registry, "ome_build_info") == {(__version__, OME_VERSION): 1.0}
    assert (__version__, OME_VERSION) == ("0.1.0", "v1.3")


# --- the work queue ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


Step = Callable[[WorkQueue, Clock], Any]


def add(key: str) -> Step:
    return lambda queue, clock: queue.add(key)


def at(now: float) -> Step:
    return lambda queue, clock: setattr(clock, "now", now)


def get() -> Step:
    return lambda queue, clock: queue.get()


def done(key: str, *, failed: bool = False) -> Step:
    return lambda queue, clock: queue.done(key, failed=failed)


def backoff_ends() -> Step:
    return lambda queue, clock: asyncio.sleep(0.05)  # past Backoff(first=0.01)


@pytest.mark.parametrize(
    ("steps", "depths", "waits"),
    [
        pytest.param([], [], None, id="a new queue shows depth 0 and no wait"),
        pytest.param(
            [add("a"), at(1), add("b"), at(3), get(), get()],
            [1, 1, 2, 2, 1, 0],
            (2.0, 5.0),
            id="each key waits from its add to its get",
        ),
        pytest.param(
            [add("a"), at(2), add("a"), at(5), get()],
            [1, 1, 1, 1, 0],
            (1.0, 5.0),
            id="a key queued twice counts once and waits from its first add",
        ),
        pytest.param(
            [add("a"), get(), at(2), add("a"), at(5), done("a"), at(6), get()],
            [1, 0, 0, 0, 0, 1, 1, 0],
            (2.0, 1.0),
            id="a key changed during its pass is not waiting until the pass ends",
        ),
        pytest.param(
            [
                add("a"),
                get(),
                at(10),
                done("a", failed=True),
                at(20),
                backoff_ends(),
                at(21),
                get(),
            ],
            [1, 0, 0, 0, 0, 1, 1, 0],
            (2.0, 1.0),
            id="a retry waits from the end of its backoff, not from its failure",
        ),
    ],
)
async def test_the_queue_reports_its_depth_and_each_keys_wait(
    steps: list[Step], depths: list[int], waits: tuple[float, float] | None
) -> None:
    """``depths``: after each step; ``waits``: how many keys were taken and their total wait."""
    registry, clock = CollectorRegistry(), Clock()
    queue = WorkQueue(
        Backoff(first=0.01), name="inferencereplica", metrics=Metrics(registry), clock=clock
    )
    seen = []
    for step in steps:
        result = step(queue, clock)
        if inspect.isawaitable(result):
            await result
        seen.append(samples(registry, "ome_workqueue_depth")[("inferencereplica",)])

    assert seen == depths
    assert samples(registry, "ome_workqueue_depth") == {("inferencereplica",): (depths or [0])[-1]}
    assert (
        samples(registry, "ome_workqueue_queue_duration_seconds_count"),
        samples(registry, "ome_workqueue_queue_duration_seconds_sum"),
    ) == (
        ({("inferencereplica",): waits[0]}, {("inferencereplica",): waits[1]})
        if waits
        else ({}, {})
    )


# --- the API client ---------------------------------------------------------------------------


def client(kubeconfig: str) -> k8s_client.ApiClient:
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config(kubeconfig, client_configuration=configuration)
    configuration.retries = False
    return k8s_client.ApiClient(configuration)


def create_then_get(api: KubeApi) -> None:
    api.create(CONFIG_MAP)
    api.get(CONFIG_MAP)


def watch(api: KubeApi) -> None:
    response = api.open_stream(CONFIG_MAPS, {"watch": "true"}, read_timeout=5)
    response.shutdown()
    response.release_conn()


@pytest.mark.parametrize(
    ("fault", "requests", "counted"),
    [
        pytest.param(
            None,
            create_then_get,
            {("POST", "201"): 1.0, ("GET", "200"): 1.0},
            id="each request is counted by its method and the status of its answer",
        ),
        pytest.param(
            None,
            lambda api: api.delete(CONFIG_MAP),
            {("DELETE", "404"): 1.0},
            id="a delete of what is gone is counted as answered 404",
        ),
        pytest.param(
            {"status": 500, "resource": "v1/configmaps"},
            lambda api: api.get(CONFIG_MAP),
            {("GET", "500"): 1.0},
            id="a failed request is counted with the server's status",
        ),
        pytest.param(
            None,
            watch,
            {("WATCH", "200"): 1.0},
            id="a watch is counted as WATCH once its stream opens",
        ),
        pytest.param(
            {"status": 403, "action": "watch", "resource": "v1/configmaps"},
            watch,
            {("WATCH", "403"): 1.0},
            id="a refused watch is counted with its status",
        ),
    ],
)
async def test_the_api_client_counts_requests_by_verb_and_code(
    kube, kubeconfig, fault, requests, counted
) -> None:
    registry = CollectorRegistry()
    api = KubeApi(client(kubeconfig), on_request=Metrics(registry).record_api_request)
    if fault is not None:
        kube.inject_fault(fault.pop("status"), **fault)

    with contextlib.suppress(ApiError):
        await asyncio.to_thread(requests, api)

    assert samples(registry, "ome_api_requests_total") == counted


async def test_a_request_with_no_answer_is_counted_with_code_0() -> None:
    configuration = k8s_client.Configuration(host="http://127.0.0.1:9")
    configuration.retries = False
    registry = CollectorRegistry()
    api = KubeApi(
        k8s_client.ApiClient(configuration), on_request=Metrics(registry).record_api_request
    )

    with contextlib.suppress(ApiError):
        await asyncio.to_thread(api.get, CONFIG_MAP)

    assert samples(registry, "ome_api_requests_total") == {("GET", "0"): 1.0}


# --- the informer -----------------------------------------------------------------------------


@pytest.fixture
async def informer(kubeconfig: str) -> AsyncIterator[tuple[Informer, CollectorRegistry]]:
    """An informer of the default namespace's Deployments (not started), and the registry it
    counts its failures in."""
    registry = CollectorRegistry()
    watcher = Informer(
        KubeApi(client(kubeconfig)),
        resource_named("Deployment"),
        "default",
        lambda batch: None,
        retry_delay=lambda failures: 0.05,
        watch_seconds=1,  # bounds stop() when it comes as a watch request is under way
        on_failure=Metrics(registry).record_watch_failure,
    )
    yield watcher, registry
    await asyncio.to_thread(watcher.stop)


def calls(kube, action: str) -> int:
    return sum(
        1
        for r in kube
        if r.action == kmock.action(action)
        and r.resource is not None
        and r.resource.plural == "deployments"
    )


@pytest.mark.parametrize(
    ("action", "status", "times", "counted"),
    [
        pytest.param("list", 503, 2, {("deployments.apps",): 2.0}, id="each failed list"),
        pytest.param("watch", 403, 1, {("deployments.apps",): 1.0}, id="a refused watch"),
        pytest.param("watch", 500, 3, {("deployments.apps",): 3.0}, id="each failed watch"),
        pytest.param("watch", 410, 1, {}, id="no expired version (410 Gone): it is listed again"),
    ],
)
async def test_the_informer_counts_each_failed_list_and_watch(
    kube, informer, action, status, times, counted
) -> None:
    watcher, registry = informer
    kube.inject_fault(status, action=action, resource=DEPLOYMENTS, times=times)
    watcher.start()

    # The request after the last fault comes once the failure before it was counted.
    await eventually(lambda: calls(kube, action) > times)

    assert samples(registry, "ome_watch_failures_total") == counted
