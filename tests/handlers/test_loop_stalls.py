"""/readyz after a pause: a replica whose event loop stands still (a paused process, once it runs
again) is unready until the loop ran for a few seconds, so the webhook Service sends it no review
its stale caches would answer."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ome_operator.handlers.loop_stalls import StallWatch
from ome_operator.handlers.startup import unready_reason


class Monotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def watched(steps: list[tuple[float, bool]]) -> StallWatch:
    """A watch after ``steps``: (seconds passing, whether the loop ticks then)."""
    clock = Monotonic()
    watch = StallWatch(clock=clock)
    for seconds, ticks in steps:
        clock.now += seconds
        if ticks:
            watch.tick()
    return watch


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param([], None, id="just started"),
        pytest.param([(0.5, True)] * 20, None, id="ticking every half second"),
        pytest.param([(0.5, True), (2.9, False)], None, id="2.9 s without a tick: no stall yet"),
        pytest.param(
            [(0.5, True), (3.0, False)],
            "the event loop has not run for 3 s",
            id="3 s without a tick: stalled now",
        ),
        pytest.param(
            [(60.0, True), (1.0, True)],
            "the event loop stood still for 60 s; ready 5 s after it ran again",
            id="resumed after a 60 s pause: settling",
        ),
        pytest.param(
            [(60.0, True), *[(0.5, True)] * 10], None, id="5 s after a pause: ready again"
        ),
    ],
)
def test_a_stalled_loop_makes_the_replica_unready_for_a_while(steps, expected):
    assert watched(steps).unready_reason() == expected


SYNCED = SimpleNamespace(watches=SimpleNamespace(synced=SimpleNamespace(is_set=lambda: True)))


def test_readyz_says_the_stall_unless_the_replica_is_stopping():
    stalled = watched([(60.0, True)])
    assert (
        unready_reason(SYNCED, SimpleNamespace(stopping=False), stalled),
        unready_reason(SYNCED, SimpleNamespace(stopping=True), stalled),
        unready_reason(SYNCED, SimpleNamespace(stopping=False), watched([])),
    ) == (
        "the event loop stood still for 60 s; ready 5 s after it ran again",
        "the operator is stopping",
        None,
    )
