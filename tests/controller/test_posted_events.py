"""Which events the controller posts again (OPEN-09: an identical decision of one generation is
posted once; RuntimeNotFound on every pass), and that what it remembers for that stays bounded."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ome_operator.cluster.api import KubeApi
from ome_operator.controller.running import Controller
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.core.plans import Event
from ome_operator.metrics import Metrics

KEY = ("default", "chat")
ADVISORY = Event("Warning", "RuntimeCompatibilityAdvisory", "Runtime x does not declare support")
NOT_FOUND = Event("Warning", "RuntimeNotFound", "runtime ghost not found")


class _Api(KubeApi):
    def __init__(self) -> None:
        self.posted: list[tuple[int, str]] = []

    def create(self, obj):  # type: ignore[override]
        self.posted.append((obj["involvedObject"]["resourceVersion"], obj["reason"]))
        return obj


def _isvc(generation: int) -> dict:
    meta = {
        "name": "chat",
        "namespace": "default",
        "uid": "u",
        "generation": generation,
        "resourceVersion": str(generation),
    }
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "metadata": meta}


def _controller() -> Controller:
    return Controller(
        api_factory=_Api, config_source=OperatorConfig, metrics=Metrics(CollectorRegistry())
    )


def test_a_decision_is_posted_once_per_generation_and_only_the_latest_is_remembered() -> None:
    controller, api = _controller(), _Api()

    for generation in (1, 1, 2, 2, 3):
        controller.writer.post(api, KEY, _isvc(generation), ADVISORY)

    assert api.posted == [
        ("1", "RuntimeCompatibilityAdvisory"),
        ("2", "RuntimeCompatibilityAdvisory"),
        ("3", "RuntimeCompatibilityAdvisory"),
    ]
    assert controller.writer.posted == {KEY: (3, {(ADVISORY.reason, ADVISORY.message)})}


def test_runtime_not_found_is_posted_on_every_pass_and_nothing_is_remembered_for_it() -> None:
    controller, api = _controller(), _Api()

    for _ in range(1000):
        controller.writer.post(api, KEY, _isvc(1), NOT_FOUND)

    assert len(api.posted) == 1000
    assert controller.writer.posted == {KEY: (1, set())}
