"""A watch event that only echoes the controller's own write does not re-queue its owner (S9:
other changes to owned objects do)."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from ome_operator.cluster.api import KubeApi
from ome_operator.controller.running import Controller
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
    meta = {"name": "chat-engine", "namespace": "default"}
    if version is not None:
        meta["resourceVersion"] = version
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {}}


def _controller() -> Controller:
    controller = Controller(
        api_factory=_Api, config_source=OperatorConfig, metrics=Metrics(CollectorRegistry())
    )
    controller.store.seen(KEY, {"metadata": {"name": "chat", "namespace": "default"}})
    return controller


async def _queued(controller: Controller) -> bool:
    await asyncio.sleep(0)  # let call_soon_threadsafe callbacks run
    return not controller.queue.idle()


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
    writer.loop = asyncio.get_running_loop()  # no workers: the queue only collects
    await asyncio.to_thread(writer.apply, writer.client(), KEY, _deployment(None), None)
    controller.owned_changed(*KEY, _deployment(event_version), deleted=deleted)
    assert await _queued(controller) is queued


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
    writer.loop = asyncio.get_running_loop()  # no workers: the queue only collects
    identity = ("Deployment", "default", "chat-engine")
    writer.echoes.started(identity)  # the worker is between its request and the answer
    controller.owned_changed(*KEY, _deployment(event_version))
    assert await _queued(controller) is False
    await asyncio.to_thread(writer.apply, writer.client(), KEY, _deployment(None), None)
    assert await _queued(controller) is queued
