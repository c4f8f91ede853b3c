"""A follower (started without workers, ``--leader-elect``) keeps its caches but queues no
pass; once elected it queues every InferenceService it holds, and only then."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ome_operator.controller.running import Controller
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.metrics import Metrics

BODY = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "spec": {"engine": {}}}


def isvc(name: str) -> dict:
    return {**BODY, "metadata": {"name": name, "namespace": "default", "resourceVersion": "1"}}


async def test_a_follower_queues_nothing_until_it_is_elected():
    controller = Controller(
        api_factory=lambda: None,  # type: ignore[arg-type,return-value]
        config_source=OperatorConfig,
        metrics=Metrics(CollectorRegistry()),
        workers=0,  # the queue only collects
    )
    controller._started = (lambda: None, (None,))  # type: ignore[assignment]  # watches only
    controller.runtime.following = True
    for name in ("b", "a"):
        controller.seen(("default", name), isvc(name))
    controller.requeue()
    waiting_as_follower = len(controller.queue)

    controller.start_working()
    controller.watches.synced.set()  # every watch has listed
    await controller.runtime.listed.wait()
    try:
        assert (waiting_as_follower, sorted(controller.isvcs), len(controller.queue)) == (
            0,
            [("default", "a"), ("default", "b")],
            2,
        )
    finally:
        await controller.runtime.stop()
