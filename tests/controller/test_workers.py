"""The worker loop: nothing is taken before the watches have listed; each key is processed by
one task at a time; a pass that fails (or raises) comes back with backoff and the worker lives
on; stop() lets a pass under way finish its writes."""

from __future__ import annotations

import asyncio
import logging

import pytest

from ome_operator.controller.queue import Backoff, WorkQueue
from ome_operator.controller.workers import Workers

logger = logging.getLogger("test.workers")


def workers(queue: WorkQueue, process) -> Workers:
    return Workers(queue, process, what="Thing", fields=lambda key: {"thing": key}, logger=logger)


async def until(predicate, timeout: float = 2.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not true in time"
        await asyncio.sleep(0.005)


async def test_no_key_is_taken_before_the_watches_have_listed() -> None:
    queue, seen, synced = WorkQueue(), [], asyncio.Event()

    async def process(key: str) -> bool:
        seen.append(key)
        return False

    pool = workers(queue, process)
    queue.add("a")
    pool.start(2, synced)
    await asyncio.sleep(0.05)
    assert seen == []
    synced.set()
    await until(lambda: seen == ["a"])
    await pool.stop()


@pytest.mark.parametrize(
    ("outcome", "passes"),
    [
        pytest.param("failed", ["a", "a"], id="a failed pass comes back after its backoff"),
        pytest.param("raised", ["a", "a"], id="a pass that raises comes back too"),
        pytest.param("done", ["a"], id="a successful pass does not"),
    ],
)
async def test_a_failed_pass_is_retried_and_the_worker_lives_on(
    caplog, outcome: str, passes: list[str]
) -> None:
    queue, seen, synced = WorkQueue(Backoff(first=0.01)), [], asyncio.Event()
    synced.set()

    async def process(key: str) -> bool:
        seen.append(key)
        if len(seen) == 1 and outcome == "raised":
            raise RuntimeError("bug")
        return len(seen) == 1 and outcome == "failed"

    pool = workers(queue, process)
    pool.start(1, synced)
    queue.add("a")
    await asyncio.sleep(0.2)
    assert seen == passes
    assert not any(task.done() for task in pool.tasks)
    logged = [(r.getMessage(), getattr(r, "thing", None)) for r in caplog.records]
    assert logged == ([("Unexpected error reconciling Thing", "a")] if outcome == "raised" else [])
    await pool.stop()


async def test_one_key_is_never_processed_by_two_tasks_at_once() -> None:
    queue, synced = WorkQueue(), asyncio.Event()
    synced.set()
    running, overlaps, passes = set(), [], []

    async def process(key: str) -> bool:
        overlaps.append(key in running)
        running.add(key)
        await asyncio.sleep(0.02)
        running.discard(key)
        passes.append(key)
        return False

    pool = workers(queue, process)
    pool.start(4, synced)
    queue.add("a")
    await until(lambda: running)
    queue.add("a")  # a change during the pass: one more pass after it
    queue.add("b")
    await until(lambda: len(passes) == 3)
    assert (sorted(passes), overlaps) == (["a", "a", "b"], [False, False, False])
    await pool.stop()


@pytest.mark.parametrize(
    ("pass_seconds", "drain", "finished"),
    [
        pytest.param(0.1, {}, ["a"], id="stop lets a pass under way finish"),
        pytest.param(5.0, {"drain": 0.05}, [], id="a pass that outlasts the drain is cut"),
    ],
)
async def test_stop_drains_the_passes_under_way(pass_seconds, drain, finished) -> None:
    queue, synced = WorkQueue(), asyncio.Event()
    synced.set()
    done = []

    async def process(key: str) -> bool:
        await asyncio.sleep(pass_seconds)
        done.append(key)
        return False

    pool = workers(queue, process)
    pool.start(2, synced)
    queue.add("a")
    await asyncio.sleep(0.02)
    started = asyncio.get_running_loop().time()
    await pool.stop(**drain)
    assert (done, pool.tasks) == (finished, ())
    assert asyncio.get_running_loop().time() - started < 1
