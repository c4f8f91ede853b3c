"""Pod creates the API server refuses (docs/troubleshooting.md, ``PodsRefused``), against the
emulator: the InferenceReplica's status names the answer once, passes before the retry is due
create nothing, the retry comes after a growing delay or at once for a new spec, and a create
that succeeds ends the refusal."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.cluster.errors import api_error
from ome_operator.controller.owned import OwnedObjects
from ome_operator.controller.queue import Backoff
from ome_operator.controller.refusals import REFUSAL_BACKOFF, Refusal, Refusals
from ome_operator.controller.replicas import ReplicaController
from ome_operator.controller.runtime import DONE, Result
from ome_operator.controller.write_record import EXPECTATION_SECONDS
from tests.controller.test_replicas import KEY, controller_with, pod_writes
from tests.core.instances.replicas import replica_of
from tests.integration.observing import requests

FORBIDDEN = (
    'pods "chat-engine-0-default-0" is forbidden: violates PodSecurity "baseline:latest": '
    'hostPath volumes (volume "llama")'
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def status_writes(kube) -> list[dict[str, Any]]:
    return [
        r.data["status"]
        for r in requests(kube)
        if r.url.path.endswith("chat-engine/status") and r.method.name == "PATCH"
    ]


def test_refusals_are_tried_again_after_5_seconds_doubling_up_to_5_minutes() -> None:
    assert (REFUSAL_BACKOFF, [REFUSAL_BACKOFF.delay(n) for n in range(1, 9)]) == (
        Backoff(first=5.0, limit=300.0),
        [5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0],
    )


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param([], None, id="no refusal: a create may be tried"),
        pytest.param([("refused", 1)], 5.0, id="after one refusal, 5 s"),
        pytest.param([("refused", 1), ("refused", 1)], 10.0, id="after two in a row, 10 s"),
        pytest.param([("refused", 1), ("wait", 5.0)], None, id="once the delay is over, now"),
        pytest.param([("refused", 1)] * 3, 20.0, id="three in a row for the same spec, 20 s"),
        pytest.param([("refused", 1), ("generation", 2)], None, id="a new spec is tried at once"),
        pytest.param(
            [("refused", 1), ("refused", 1), ("refused", 2)],
            5.0,
            id="a new spec refused starts the delays again",
        ),
        pytest.param([("refused", 1), ("forget", 1)], None, id="a create that succeeded ends it"),
    ],
)
def test_when_a_create_is_due(steps: list[tuple[str, float]], expected: float | None) -> None:
    clock = Clock()
    refusals = Refusals(clock=clock)
    generation = 1
    for step, value in steps:
        if step == "refused":
            generation = int(value)
            refusals.refused(KEY, {"metadata": {"generation": generation}}, FORBIDDEN)
        elif step == "wait":
            clock.now += value
        elif step == "generation":
            generation = int(value)
        else:
            refusals.forget(KEY)
    assert refusals.wait(KEY, {"metadata": {"generation": generation}}) == expected


async def test_a_refused_create_is_told_once_and_tried_again_only_when_due(kube, api):
    refused = kube.inject_fault(
        403, action="create", resource="v1/pods", times=2, message=FORBIDDEN
    )
    controller = await controller_with(kube, api, replica_of())
    clock = Clock()
    controller.refusals = Refusals(clock=clock)

    assert await controller.process(KEY) == Result(after=5.0)  # tried again when due
    told = status_writes(kube)
    assert [c for s in told for c in s["conditions"]] == [
        {
            "type": "Ready",
            "status": "False",
            "reason": "PodsRefused",
            "message": f"pods cannot be created: {FORBIDDEN}",
            "lastTransitionTime": told[0]["conditions"][0]["lastTransitionTime"],
        }
    ]
    assert controller.refusals.get(KEY) == Refusal(FORBIDDEN, 1, 1, 105.0)
    controller.replicas._change(
        {**controller.replicas.named(*KEY), "status": told[0]}, deleted=False, report=False
    )

    for _ in range(3):  # passes brought by other changes before the retry is due
        assert await controller.process(KEY) == Result(after=5.0)
    assert (pod_writes(kube), len(status_writes(kube))) == (["POST pods"], 1)

    clock.now += 5.0
    assert await controller.process(KEY) == Result(after=10.0)
    assert (pod_writes(kube), len(status_writes(kube)), refused.hits) == (["POST pods"] * 2, 1, 2)
    assert controller.refusals.get(KEY) == Refusal(FORBIDDEN, 1, 2, 115.0)

    replica = controller.replicas.named(*KEY)
    newer = {**replica, "metadata": {**replica["metadata"], "generation": 2}}
    controller.replicas._change(newer, deleted=False, report=False)
    # a new spec: tried at once, and created (looked at again once its expectations end)
    assert await controller.process(KEY) == Result(after=EXPECTATION_SECONDS)
    assert (pod_writes(kube), controller.refusals.get(KEY)) == (["POST pods"] * 3, None)


TERMINATING = (
    'pods "chat-engine-0-default-0" is forbidden: unable to create new content in namespace '
    "default because it is being terminated"
)


class TerminatingNamespace:
    """An API whose pod creates are refused because the namespace is being deleted."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(f"create {obj['kind']}")
        raise api_error(403, TERMINATING, "Forbidden", ("NamespaceTerminating",))

    def apply(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls.append(f"apply {obj['kind']}")
        return obj


async def test_a_create_refused_because_the_namespace_goes_is_no_refusal_to_tell():
    api = TerminatingNamespace()
    owned = OwnedObjects()
    controller = ReplicaController(lambda: api, owned, inference_services=lambda key: None)
    owned.caches["InferenceReplica"]._change(replica_of(), deleted=False, report=False)

    assert await controller.process(KEY) == DONE
    assert await controller.process(KEY) == DONE  # its InferenceReplicas go with it
    assert (api.calls, controller.refusals.get(KEY)) == (["create Pod"], None)
