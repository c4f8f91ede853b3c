"""The work queue (S9): one pass per key at a time, a change during a pass queues one more, a
failure comes back after an exponential backoff that a success resets and a change supersedes,
and a forgotten key leaves nothing behind."""

from __future__ import annotations

import asyncio

import pytest

from ome_operator.controller.queue import Backoff, WorkQueue


async def ready(queue: WorkQueue) -> list:
    """The keys that can be taken now, in order (taking them)."""
    await asyncio.sleep(0)
    taken = []
    while queue._ready.qsize():
        taken.append(await queue.get())
    return taken


@pytest.mark.parametrize(
    ("failures", "delays"),
    [
        pytest.param(1, [0.5], id="the first retry waits the first delay"),
        pytest.param(4, [0.5, 1.0, 2.0, 4.0], id="each further failure doubles it"),
        pytest.param(9, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0], id="up to the limit"),
    ],
)
def test_backoff_doubles_up_to_its_limit(failures: int, delays: list[float]) -> None:
    assert [Backoff().delay(n) for n in range(1, failures + 1)] == delays


async def test_a_key_queued_twice_is_handed_out_once() -> None:
    queue = WorkQueue()
    queue.add("a")
    queue.add("b")
    queue.add("a")

    assert await ready(queue) == ["a", "b"]


async def test_a_change_during_a_pass_queues_one_more_after_it() -> None:
    queue = WorkQueue()
    queue.add("a")
    [key] = await ready(queue)
    queue.add("a")
    queue.add("a")

    assert await ready(queue) == []  # not while its pass runs
    queue.done(key)
    assert await ready(queue) == ["a"]


async def test_a_failure_comes_back_after_the_backoff_and_a_success_resets_it() -> None:
    queue = WorkQueue(Backoff(first=0.01, limit=0.04))
    delays = []
    queue.add("a")
    for failed in (True, True, False, True):
        [key] = await ready(queue) or [await asyncio.wait_for(queue.get(), 1)]
        delays.append(queue.done(key, failed=failed))
        if not failed:
            queue.add("a")

    assert delays == [0.01, 0.02, None, 0.01]


async def test_a_change_supersedes_a_pending_backoff() -> None:
    queue = WorkQueue(Backoff(first=60, limit=60))
    queue.add("a")
    [key] = await ready(queue)
    queue.done(key, failed=True)

    queue.add("a")

    assert await ready(queue) == ["a"]
    assert len(queue) == 1  # the retry timer is gone: only the key being passed


async def test_a_forgotten_key_leaves_no_retry_behind() -> None:
    queue = WorkQueue(Backoff(first=0.01, limit=0.01))
    queue.add("a")
    [key] = await ready(queue)
    queue.done(key, failed=True)

    queue.forget("a")
    await asyncio.sleep(0.05)

    assert (await ready(queue), len(queue), queue.idle()) == ([], 0, True)
