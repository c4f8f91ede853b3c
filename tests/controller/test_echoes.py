"""A watch event that only echoes the controller's own write does not re-queue its owner; other
changes to owned objects do."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from ome_operator.cluster.api import KubeApi
from ome_operator.controller.running import Controller
from ome_operator.controller.writing import BY
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.metrics import Metrics

KEY = ("default", "chat")


class _Api(KubeApi):
    """Answers every create and apply with the object at resourceVersion "7"."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def apply(self, obj, **_):  # type: ignore[override]
        self.seen.append(obj)
        return {**obj, "metadata": {**obj["metadata"], "resourceVersion": "7"}}

    create = apply  # type: ignore[assignment]


def _deployment(version: str | None) -> dict:
    meta = {
        "name": "chat-engine",
        "namespace": "default",
        "labels": {"ome.io/inferenceservice": "chat"},
    }
    if version is not None:
        meta["resourceVersion"] = version
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {}}


def _controller() -> Controller:
    controller = Controller(
        api_factory=_Api, config_source=OperatorConfig, metrics=Metrics(CollectorRegistry())
    )
    controller._loop = asyncio.get_running_loop()  # no workers: the queue only collects
    controller.store.seen(KEY, {"metadata": {"name": "chat", "namespace": "default"}})
    return controller


def _watch_shows(controller: Controller, obj: dict, deleted: bool = False) -> None:
    """The Deployment watch delivers ``obj`` (as a change after the first listing)."""
    controller.caches.objects.caches["Deployment"]._change(obj, deleted=deleted, report=True)


@pytest.mark.parametrize(
    ("event_version", "deleted", "queued"),
    [
        pytest.param(
            "7", False, False, id="the echo of the controller's own write re-queues nothing"
        ),
        pytest.param("8", False, True, id="a later change by someone else re-queues the owner"),
        pytest.param("7", True, True, id="a deletion always re-queues the owner"),
    ],
)
async def test_events_after_a_write(event_version: str, deleted: bool, queued: bool) -> None:
    controller = _controller()
    writer = controller.writer
    await asyncio.to_thread(writer.apply, writer.client(), KEY, _deployment(None), None)
    _watch_shows(controller, _deployment(event_version), deleted=deleted)
    assert (not controller.queue.idle()) is queued


@pytest.mark.parametrize(
    ("event_version", "queued"),
    [
        pytest.param("7", False, id="an echo that arrives before the write's answer is dropped"),
        pytest.param("6", True, id="another change seen while writing re-queues after the write"),
    ],
)
async def test_events_during_a_write(event_version: str, queued: bool) -> None:
    controller = _controller()
    writer = controller.writer
    identity = ("Deployment", "default", "chat-engine")
    writer.record.writing(identity, BY)  # the worker is between its request and the answer
    _watch_shows(controller, _deployment(event_version))
    assert controller.queue.idle()
    await asyncio.to_thread(writer.apply, writer.client(), KEY, _deployment(None), None)
    # The worker's call to re-queue came before the end of the thread: it has run.
    assert (not controller.queue.idle()) is queued
