"""Leadership: the controllers start once the Lease is held, a leader that cannot renew for the
renew deadline stops (never two writers), and a clean stop releases the Lease after the passes
drained."""

from __future__ import annotations

import asyncio

import pytest

from ome_operator.cluster.errors import ApiError
from ome_operator.cluster.leases import LeaseTerms, NotLeading
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


async def test_the_drain_never_outlasts_the_fence():
    """The passes may drain for what the fence still lets through: nothing after a loss, up to
    the renew deadline (0.2 s) after a clean stop."""
    script = Script(True)
    script.answers_end = False
    at_loss: list[float] = []
    leadership = Leadership(script, lambda: None, lambda: at_loss.append(leadership.held_for()))
    assert leadership.held_for() == 0.0  # never held: nothing to drain
    await run_for(leadership, 0.4)
    assert at_loss == [0.0]

    renewing = Leadership(Script(True), lambda: None, lambda: None)
    await run_for(renewing, 0.1)
    assert 0.0 < renewing.held_for() <= 0.2


class Monotonic:
    """A monotonic clock the test moves (a pause: a jump)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


TERMS = LeaseTerms(duration=15.0, renew_deadline=10.0, retry=0.01)


class Counting(Script):
    """A scripted elector with the default terms' deadlines (a short retry) that counts tries."""

    def __init__(self, *answers) -> None:
        super().__init__(*answers)
        self.terms = TERMS
        self.tries = 0

    def try_acquire_or_renew(self) -> bool:
        self.tries += 1
        return super().try_acquire_or_renew()


async def elected(clock: Monotonic, elector: Script | None = None) -> tuple[Leadership, list[str]]:
    """A leader whose last renewal was sent at the clock's time, its loop stopped."""
    happened: list[str] = []
    leadership = Leadership(
        elector or Counting(True),
        lambda: happened.append("elected"),
        lambda: happened.append("lost"),
        clock=clock,
    )
    leadership.start()
    while not leadership.leading:
        await asyncio.sleep(0.001)
    await leadership.stop()
    return leadership, happened


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        pytest.param(0.0, (10.0, True, ["elected"]), id="just renewed: the whole deadline"),
        pytest.param(9.5, (0.5, True, ["elected"]), id="renewed 9.5 s ago: half a second"),
        pytest.param(
            10.0,
            (
                "POST /x not sent: the leader Lease was last renewed 10.0 s ago",
                False,
                ["elected", "lost"],
            ),
            id="renewed as long ago as the deadline: refused, and leadership given up",
        ),
        pytest.param(
            60.0,
            (
                "POST /x not sent: the leader Lease was last renewed 60.0 s ago",
                False,
                ["elected", "lost"],
            ),
            id="after a 60 s pause: refused, and leadership given up",
        ),
    ],
)
async def test_a_write_passes_the_fence_only_within_the_renew_deadline(after, expected):
    clock = Monotonic()
    leadership, happened = await elected(clock)
    clock.now += after
    try:
        answer: float | str = leadership.fence("POST", "/x")
    except NotLeading as refused:
        answer = str(refused)
    assert (answer, leadership.leading, happened) == expected


async def test_a_replica_that_never_led_refuses_every_write_and_loses_nothing():
    happened: list[str] = []
    leadership = Leadership(Counting(False), lambda: None, lambda: happened.append("lost"))
    with pytest.raises(NotLeading) as refused:
        leadership.fence("DELETE", "/y")
    assert (str(refused.value), happened) == (
        "DELETE /y not sent: this replica does not hold the leader Lease",
        [],
    )


async def test_leadership_is_given_up_once_however_many_writes_are_refused():
    clock = Monotonic()
    leadership, happened = await elected(clock)
    clock.now += 11
    for _ in range(3):
        with pytest.raises(NotLeading):
            leadership.fence("PATCH", "/z")
    assert happened == ["elected", "lost"]


async def test_after_a_pause_the_loop_gives_up_before_it_tries_to_renew():
    """Resumed after a pause longer than the renew deadline, the loop's first act is to give up:
    no renewal is sent (it could succeed over a Lease the new leader took and released)."""
    clock = Monotonic()
    elector = Counting(True)
    happened: list[str] = []
    leadership = Leadership(
        elector, lambda: happened.append("elected"), lambda: happened.append("lost"), clock=clock
    )
    leadership.start()
    while not leadership.leading:
        await asyncio.sleep(0.001)
    tries = elector.tries
    clock.now += 60  # the process was stopped for a minute
    for _ in range(100):
        if "lost" in happened:
            break
        await asyncio.sleep(0.01)
    await leadership.stop()
    assert (happened, elector.tries - tries, leadership.held_for()) == (["elected", "lost"], 0, 0.0)


@pytest.mark.parametrize(
    ("failed", "expected"),
    [
        pytest.param(2, ["elected"], id="two failed tries of 4 s: 8 s, still leading"),
        pytest.param(3, ["elected", "lost"], id="three failed tries of 4 s: 12 s, lost"),
    ],
)
async def test_failed_renewals_count_from_the_last_one_sent(failed, expected):
    """Each try after the first takes 4 s of the fake clock (a renewal timing out)."""
    clock = Monotonic()

    class Slow(Counting):
        def try_acquire_or_renew(self) -> bool:
            clock.now += 4 if self.tries else 0
            return super().try_acquire_or_renew()

    elector = Slow(True, *[ApiError(0, "timed out")] * failed)
    elector.answers_end = True
    happened: list[str] = []
    leadership = Leadership(
        elector, lambda: happened.append("elected"), lambda: happened.append("lost"), clock=clock
    )
    leadership.start()
    for _ in range(200):  # until the loop gave up, or started the try after the failed ones
        if "lost" in happened or elector.tries > failed + 1:
            break
        await asyncio.sleep(0.005)
    await leadership.stop()
    assert happened == expected
