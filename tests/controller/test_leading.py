"""Leadership: the controllers start once the Lease is held, a leader that cannot renew for the
renew deadline stops (never two writers), and a clean stop releases the Lease after the passes
drained."""

from __future__ import annotations

import asyncio

import pytest

from ome_operator.cluster.errors import ApiError
from ome_operator.cluster.leases import LeaseTerms
from ome_operator.controller.leading import Leadership


class Script:
    """An elector whose answers are scripted: True/False, or an exception to raise."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.terms = LeaseTerms(duration=0.3, renew_deadline=0.2, retry=0.02)
        self.identity = "me"
        self.released = 0

    def try_acquire_or_renew(self) -> bool:
        answer = self.answers.pop(0) if self.answers else self.answers_end
        if isinstance(answer, Exception):
            raise answer
        return answer

    answers_end = True

    def release(self) -> None:
        self.released += 1


async def run_for(leadership: Leadership, seconds: float) -> None:
    leadership.start()
    await asyncio.sleep(seconds)
    await leadership.stop()


@pytest.mark.parametrize(
    ("answers", "end", "expected"),
    [
        pytest.param((False, False, True), True, ["elected"], id="elected once, when held"),
        pytest.param((False,), False, [], id="never held: never elected"),
        pytest.param(
            (True, ApiError(500, "etcd"), True),
            True,
            ["elected"],
            id="one failed renewal is no loss",
        ),
        pytest.param((True,), False, ["elected", "lost"], id="no renewal for the deadline: lost"),
    ],
)
async def test_leadership_follows_the_lease(answers, end, expected):
    script = Script(*answers)
    script.answers_end = end
    happened: list[str] = []
    leadership = Leadership(
        script, lambda: happened.append("elected"), lambda: happened.append("lost")
    )
    await run_for(leadership, 0.5)
    assert happened == expected


async def test_a_clean_stop_releases_the_lease_only_when_asked_after_the_drain():
    script = Script(True)
    leadership = Leadership(script, lambda: None, lambda: None)
    await run_for(leadership, 0.1)
    assert (leadership.leading, script.released) == (True, 0)  # stopped, still held
    await leadership.release()
    assert (leadership.leading, script.released) == (False, 1)


async def test_the_drain_never_outlasts_the_lease():
    """The passes may drain for what the last renewal still holds, less a retry period: after a
    loss at the renew deadline (0.2 of 0.3 s) at most 0.08 s, after a clean stop up to 0.28 s."""
    script = Script(True)
    script.answers_end = False
    at_loss: list[float] = []
    leadership = Leadership(script, lambda: None, lambda: at_loss.append(leadership.held_for()))
    assert leadership.held_for() == 0.0  # never held: nothing to drain
    await run_for(leadership, 0.4)
    assert len(at_loss) == 1 and 0.0 <= at_loss[0] <= 0.08

    renewing = Leadership(Script(True), lambda: None, lambda: None)
    await run_for(renewing, 0.1)
    assert 0.08 < renewing.held_for() <= 0.28
