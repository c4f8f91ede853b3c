"""Which events the controller posts again (OPEN-09: an identical decision of one generation is
posted once; RuntimeNotFound once per decision until its status is written), and that what it
remembers for that stays bounded."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.errors import api_error
from ome_operator.controller.running import Controller
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.core.plans import Event
from ome_operator.core.rendering.events import once_name
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


def test_runtime_not_found_is_posted_once_until_its_status_is_written_then_forgotten() -> None:
    """A retry after a failed status write (a new generation in between, too) does not post it
    twice; once the status records it, the core posts it only on its next transition, and
    nothing is remembered for it."""
    controller, api = _controller(), _Api()
    writer = controller.writer

    for generation in (1, 1, 2):  # the pass, and retries after failed status writes
        writer.post(api, KEY, _isvc(generation), NOT_FOUND)
    remembered = dict(writer.posted)
    writer._recorded(KEY)  # the status write went through
    writer.post(api, KEY, _isvc(2), NOT_FOUND)  # the next transition

    assert api.posted == [("1", "RuntimeNotFound"), ("2", "RuntimeNotFound")]
    assert remembered == {KEY: (2, {(NOT_FOUND.reason, NOT_FOUND.message)})}
    assert writer.posted == {KEY: (2, {(NOT_FOUND.reason, NOT_FOUND.message)})}


class _Server(_Api):
    """Events kept by name, as the API server keeps them: a second create of a name is
    refused as AlreadyExists."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str | None] = []

    def create(self, obj):  # type: ignore[override]
        name = obj["metadata"].get("name")
        if name is not None and name in self.names:
            raise api_error(409, f'events "{name}" already exists', "AlreadyExists")
        self.names.append(name)
        return super().create(obj)


def test_a_restarted_operator_posts_no_duplicate_of_a_generation_s_event() -> None:
    server = _Server()
    for _ in range(2):  # the operator, then the same after a restart: it remembers nothing
        writer = _controller().writer
        writer.post(server, KEY, _isvc(1), ADVISORY)
        writer.post(server, KEY, _isvc(1), NOT_FOUND)
    assert server.posted == [
        ("1", "RuntimeCompatibilityAdvisory"),
        ("1", "RuntimeNotFound"),
        ("1", "RuntimeNotFound"),  # the status says whether it was posted: the core decides
    ]
    assert server.names == [once_name(_isvc(1), ADVISORY), None, None]
