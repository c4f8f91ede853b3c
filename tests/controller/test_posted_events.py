"""Which events the controller posts again (an identical decision of one generation is posted
once; RuntimeNotFound once per message while its condition stands, decided from what the
controller told, its status read only by a restarted operator), and that what it remembers for
that stays bounded."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.errors import ApiError, api_error
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
        self.messages: list[str] = []

    def create(self, obj):  # type: ignore[override]
        self.posted.append((obj["involvedObject"]["resourceVersion"], obj["reason"]))
        self.messages.append(obj["message"])
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


def _not_found_status(message: str | None) -> dict:
    """A status whose RuntimeReady records RuntimeNotFound with ``message`` (None: ready)."""
    ready = {"type": "RuntimeReady", "status": "True", "reason": "RuntimeResolved"}
    if message is not None:
        ready = {**ready, "status": "False", "reason": "RuntimeNotFound", "message": message}
    return {"conditions": [ready]}


class _Failing(_Api):
    """Refuses the next event create when told to (a passing failure); applies statuses."""

    fail_next = False

    def create(self, obj):  # type: ignore[override]
        if self.fail_next:
            self.fail_next = False
            raise api_error(500, "etcdserver: request timed out", "InternalError")
        return super().create(obj)

    def apply(self, obj, **_):  # type: ignore[override]
        return {**obj, "metadata": {**obj["metadata"], "resourceVersion": "9"}}


@pytest.mark.parametrize(
    ("steps", "posted"),
    [
        pytest.param(
            [("post", "a", None, 1), ("post", "a", None, 1), ("post", "a", None, 2)],
            ["a"],
            id="it is posted once while its condition stands, new generations too",
        ),
        pytest.param(
            [("post", "a", None, 1), ("post", "b", None, 1)],
            ["a", "b"],
            id="a new message is posted",
        ),
        pytest.param(
            [("post", "a", None, 1), ("status", None), ("post", "a", None, 1)],
            ["a", "a"],
            id="it is posted again once a status left RuntimeNotFound",
        ),
        pytest.param(
            [("post", "a", "a", 1)],
            [],
            id="a restarted operator takes what the status records as told",
        ),
        pytest.param(
            [("post", "a", "b", 1)],
            ["a"],
            id="a restarted operator posts a message the status does not record",
        ),
        pytest.param(
            [("failing", "a", None, 1), ("status", "a"), ("post", "a", "a", 1)],
            ["a"],
            id="a post that failed is posted by the retry, though the status was written",
        ),
    ],
)
def test_runtime_not_found_is_decided_from_what_the_controller_told(steps, posted) -> None:
    controller, api = _controller(), _Failing()
    writer = controller.writer
    for step in steps:
        if step[0] == "status":
            writer.write_status(api, KEY, _isvc(1), _not_found_status(step[1]))
            continue
        _, message, recorded, generation = step
        body = {**_isvc(generation), "status": _not_found_status(recorded)}
        event = Event("Warning", "RuntimeNotFound", message)
        if step[0] == "failing":
            api.fail_next = True
            with pytest.raises(ApiError):
                writer.post(api, KEY, body, event)
        else:
            writer.post(api, KEY, body, event)

    assert [message for message in api.messages] == posted


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
        ("1", "RuntimeNotFound"),  # its status does not record it: posted again
    ]
    assert server.names == [once_name(_isvc(1), ADVISORY), None, None]
