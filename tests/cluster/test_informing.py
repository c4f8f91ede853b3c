"""The informer against the API-server-like emulator: list in pages, watch from the listed
version, resume after a watch ends, list again after 410 Gone, retry failures with a log line,
and stop promptly. Nothing is lost and nothing is listed more often than needed."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import kmock
import pytest

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.informing import Changed, Informer, Message, Relisted
from ome_operator.cluster.resources import Resource, resource_named
from ome_operator.handlers.startup import allow_deep_objects
from tests.support.kube_access import apply_object, eventually

DEPLOYMENTS = "apps/v1/deployments"
DEPLOYMENT = resource_named("Deployment")
OWNER = "ome.io/inferenceservice"
META = ["creationTimestamp", "generation", "labels", "name", "namespace"]
GONE = {
    "type": "ERROR",
    "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410},
}


def deployment(name: str, *, owner: str | None = "chat", replicas: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner is not None:
        meta["labels"] = {OWNER: owner}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"replicas": replicas},
    }


class Received:
    """What an informer handed over, from its thread."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._lock = threading.Lock()

    def __call__(self, batch: list[Message]) -> None:
        with self._lock:
            self.messages.extend(batch)

    def listings(self) -> list[list[str]]:
        return [
            [i["metadata"]["name"] for i in m.items]
            for m in list(self.messages)
            if isinstance(m, Relisted)
        ]

    def changes(self) -> list[tuple[str, str, Any]]:
        return [
            (m.type, m.object["metadata"]["name"], m.object.get("spec", {}).get("replicas"))
            for m in list(self.messages)
            if isinstance(m, Changed)
        ]


@pytest.fixture
def received() -> Received:
    return Received()


@pytest.fixture
async def informer(api: KubeApi, received: Received) -> AsyncIterator[Informer]:
    watcher = Informer(
        api,
        DEPLOYMENT,
        "default",
        received,
        retry_delay=lambda failures: 0.05,
        label_selector=OWNER,
        page_size=2,
        # A watch that stop() broke off stays open on the emulator's side until it ends: the
        # emulator's stop waits that long.
        watch_seconds=1,
    )
    yield watcher
    await asyncio.to_thread(watcher.stop)


def calls(kube, action: kmock.action) -> int:
    return sum(
        1
        for r in kube
        if r.action == action and r.resource is not None and r.resource.plural == "deployments"
    )


async def test_lists_in_pages_then_hands_over_each_change(kube, informer, received):
    for name in ("a", "b", "c"):
        await apply_object(kube, deployment(name))
    await apply_object(kube, deployment("unlabelled", owner=None))

    informer.start()
    await eventually(lambda: received.listings())
    await apply_object(kube, deployment("d"))
    await apply_object(kube, deployment("a", replicas=3))
    async with kube.delete("/apis/apps/v1/namespaces/default/deployments/b") as response:
        assert response.status == 200
    await eventually(lambda: len(received.changes()) == 3)

    assert received.listings() == [["a", "b", "c"]]
    listing = received.messages[0]
    assert isinstance(listing, Relisted) and listing.namespace == "default"
    assert {(i["apiVersion"], i["kind"]) for i in listing.items} == {("apps/v1", "Deployment")}
    assert received.changes() == [("ADDED", "d", 1), ("MODIFIED", "a", 3), ("DELETED", "b", 1)]
    assert calls(kube, kmock.action.LIST) == 2  # two pages of two


@pytest.fixture(
    params=[
        pytest.param(((b"",), 1, []), id="a watch that ends is resumed from the last version"),
        pytest.param(((b"", GONE), 2, []), id="a watch answered 410 Gone is followed by a relist"),
        pytest.param(
            (
                (b"", {"type": "ERROR", "object": {"kind": "Status", "code": 500}}),
                1,
                [("watch /apis/apps/v1/namespaces/default/deployments: HTTP 500", 500)],
            ),
            id="a watch that fails in the stream is resumed after a backoff",
        ),
        pytest.param(
            (
                (b"", b"<html>proxy error</html>\n"),
                1,
                [("JSONDecodeError: Expecting value: line 1 column 1 (char 0)", 0)],
            ),
            id="a watch that sends something else than events is resumed after a backoff",
        ),
        pytest.param(
            (
                (b"", b'{"type": "ADDED", "object": "x"}\n'),
                1,
                [('ValueError: not a watch event: b\'{"type": "ADDED", "object": "x"}\'', 0)],
            ),
            id="an event without an object is resumed after a backoff",
        ),
    ]
)
def broken_watch(kube, request) -> tuple[int, list[tuple[str, int]]]:
    """The first watch breaks at once; how many lists follow, and the failures logged."""
    script, lists, failures = request.param
    kube[kmock.action.WATCH, kmock.resource(DEPLOYMENTS)][:1] << script
    return lists, failures


@pytest.mark.kmock(strict=False)
async def test_a_broken_watch_loses_nothing(kube, broken_watch, informer, received, caplog):
    caplog.set_level(logging.WARNING, logger="ome_operator.watch")
    lists, failures = broken_watch
    await apply_object(kube, deployment("a"))
    informer.start()
    await eventually(lambda: calls(kube, kmock.action.WATCH) >= 2)
    await apply_object(kube, deployment("b"))
    await eventually(lambda: received.changes())

    assert received.changes() == [("ADDED", "b", 1)]
    assert received.listings() == [["a"]] * lists
    assert calls(kube, kmock.action.LIST) == lists
    logged = [(r.error, r.status) for r in caplog.records if r.name == "ome_operator.watch"]
    assert logged == failures


def expire_in_streams(kube) -> None:
    kube[kmock.action.WATCH, kmock.resource(DEPLOYMENTS)][:3] << (b"", GONE)


def expire_requests(kube) -> None:
    kube.inject_fault(410, action="watch", resource=DEPLOYMENTS, times=3)


@pytest.mark.kmock(strict=False)
@pytest.mark.parametrize(
    "expire",
    [
        pytest.param(expire_in_streams, id="410 Gone in the watch stream"),
        pytest.param(expire_requests, id="the watch request itself answered 410 Gone"),
    ],
)
async def test_a_version_that_keeps_expiring_is_listed_again_with_backoff(
    api, kube, received, expire
):
    expire(kube)
    delays: list[int] = []
    watcher = Informer(
        api, DEPLOYMENT, "default", received, retry_delay=lambda n: delays.append(n) or 0.05
    )
    watcher.start()
    try:
        await eventually(lambda: calls(kube, kmock.action.WATCH) >= 4)
        await apply_object(kube, deployment("a"))
        await eventually(lambda: received.changes())
    finally:
        await asyncio.to_thread(watcher.stop)

    assert calls(kube, kmock.action.LIST) == 4
    assert delays == [1, 2]  # the first expiry lists again at once, the next ones back off
    assert received.changes() == [("ADDED", "a", 1)]


@pytest.mark.parametrize(
    ("fault", "status", "error"),
    [
        pytest.param(500, 500, "injected fault: HTTP 500", id="a 500 on the list"),
        pytest.param(403, 403, "injected fault: HTTP 403", id="a 403 on the list"),
    ],
)
async def test_a_failed_list_is_logged_and_retried(
    kube, informer, received, caplog, fault, status, error
):
    caplog.set_level(logging.WARNING, logger="ome_operator.watch")
    await apply_object(kube, deployment("a"))
    kube.inject_fault(fault, action="list", resource=DEPLOYMENTS, times=2)

    informer.start()
    await eventually(lambda: received.listings())

    assert received.listings() == [["a"]]
    failures = [
        {k: getattr(r, k) for k in ("levelname", "message", "path", "error", "status", "retryIn")}
        for r in caplog.records
        if r.name == "ome_operator.watch"
    ]
    assert (
        failures
        == [
            {
                "levelname": "WARNING",
                "message": "Watch failed",
                "path": "/apis/apps/v1/namespaces/default/deployments",
                "error": error,
                "status": status,
                "retryIn": 0.05,
            }
        ]
        * 2
    )


async def test_a_kind_the_server_does_not_serve_is_empty_and_retried(api, kube, received):
    widgets = Resource("example.io", "v1", "widgets", "Widget")
    watcher = Informer(api, widgets, None, received, retry_delay=lambda failures: 0.05)
    watcher.start()
    try:
        await eventually(lambda: len(received.listings()) >= 2)
    finally:
        await asyncio.to_thread(watcher.stop)

    assert set(map(tuple, received.listings())) == {()}


async def test_stop_breaks_off_a_watch_in_progress(kube, informer, received):
    informer.start()
    await eventually(lambda: calls(kube, kmock.action.WATCH) >= 1)
    loop = asyncio.get_running_loop()
    started = loop.time()

    await asyncio.to_thread(informer.stop)

    assert loop.time() - started < 1.0
    assert not informer.running


async def test_objects_are_handed_over_without_managed_fields_however_deep(
    kube, informer, received
):
    allow_deep_objects()  # as ome-operator run does at start
    nested: dict[str, Any] = {}
    fields, tip = {"f:spec": nested}, nested
    for _ in range(9_000):
        tip["f:a"] = {}
        tip = tip["f:a"]
    listed = {**deployment("a"), "metadata": {**deployment("a")["metadata"]}}
    listed["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": fields}]
    changed = {**deployment("b"), "metadata": {**deployment("b")["metadata"]}}
    changed["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": fields}]
    await apply_object(kube, listed)

    informer.start()
    await eventually(lambda: received.listings())
    await apply_object(kube, changed)
    await eventually(lambda: received.changes())

    handed = [m.items[0] if isinstance(m, Relisted) else m.object for m in received.messages]
    assert [(h["metadata"]["name"], sorted(h["metadata"])) for h in handed] == [
        (name, [*META, "resourceVersion", "uid"]) for name in "ab"
    ]
