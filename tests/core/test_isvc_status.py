"""The events a pass posts when a component's condition takes a cause its pods show
(``core/isvc_status.cause_events``): one per cause taken, not one per pass."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.isvc_status import cause_events
from ome_operator.core.plans import Event

PULL = "chat-engine-0: cannot pull image vllm:9: ErrImagePull"
CRASH = "chat-engine-0: container ome-container is in CrashLoopBackOff (restarted 5 times)"
STUCK = "1 of 1 pods cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu."


def _c(kind: str, reason: str, message: str = "m", status: str = "False") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message}


@pytest.mark.parametrize(
    ("ready", "previous", "expected"),
    [
        pytest.param(
            {"engine": _c("EngineReady", "ImagePullFailed", PULL)},
            [_c("EngineReady", "MinimumReplicasUnavailable"), _c("Ready", "X")],
            (Event("Warning", "ImagePullFailed", f"engine component: {PULL}"),),
            id="a component taking a cause posts one Warning event naming the component",
        ),
        pytest.param(
            {"engine": _c("EngineReady", "ImagePullFailed", PULL)},
            [],
            (Event("Warning", "ImagePullFailed", f"engine component: {PULL}"),),
            id="a first pass with a cause posts it",
        ),
        pytest.param(
            {"engine": _c("EngineReady", "ImagePullFailed", PULL)},
            [_c("EngineReady", "ImagePullFailed", "chat-engine-1: cannot pull image vllm:8")],
            (),
            id="no event when the condition already had that reason, whatever its message",
        ),
        pytest.param(
            {"engine": _c("EngineReady", "CrashLoopBackOff", CRASH)},
            [_c("EngineReady", "ImagePullFailed", PULL)],
            (Event("Warning", "CrashLoopBackOff", f"engine component: {CRASH}"),),
            id="a cause that changes to another posts the new one",
        ),
        pytest.param(
            {"engine": _c("EngineReady", "MinimumReplicasUnavailable")},
            [_c("EngineReady", "ImagePullFailed", PULL)],
            (),
            id="a reason that is not a pods' cause posts nothing",
        ),
        pytest.param(
            {"engine": _c("EngineReady", "MinimumReplicasAvailable", status="True")},
            [],
            (),
            id="a ready component posts nothing",
        ),
        pytest.param(
            {
                "engine": _c("EngineReady", "PodsUnschedulable", STUCK),
                "decoder": _c("DecoderReady", "PodsUnschedulable", STUCK),
                "router": _c("RouterReady", "NodeLost", "r"),
            },
            [_c("EngineReady", "PodsUnschedulable", STUCK), _c("RouterReady", "Initializing")],
            (
                Event("Warning", "PodsUnschedulable", f"decoder component: {STUCK}"),
                Event("Warning", "NodeLost", "router component: r"),
            ),
            id="each component is judged against its own previous condition",
        ),
    ],
)
def test_the_events_of_the_causes_a_pass_takes(
    ready: dict[str, dict[str, Any]], previous: list[dict[str, Any]], expected: tuple[Event, ...]
) -> None:
    assert cause_events(ready, previous) == expected
