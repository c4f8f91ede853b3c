"""The controller runtime: nothing is taken before the watches have listed; each key is processed
by one task at a time; what a pass returns decides the next one, and a pass that raises comes
back with backoff while the worker lives on; stop() lets a pass under way finish its writes; the
rules every controller shares (no pass for an object going, or whose owner is going; a
terminating namespace is left alone); a follower queues nothing until it works; triggers."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from ome_operator.cluster.errors import Unreachable, api_error
from ome_operator.cluster.leases import NotLeading
from ome_operator.controller.queue import Backoff
from ome_operator.controller.runtime import (
    DONE,
    RETRY,
    ControllerRuntime,
    ControllerSpec,
    OwnerGoing,
    Result,
    Trigger,
    gone_or_going,
    recheck_owner,
)

logger = logging.getLogger("test.runtime")
A, B = ("ns", "a"), ("ns", "b")
GOING = {"deletionTimestamp": "2024-05-01T00:00:00Z"}
REFUSAL = "unable to create new content in namespace ns because it is being terminated"
TERMINATING = api_error(403, REFUSAL, "Forbidden", ("NamespaceTerminating",))
OWNER = {"metadata": {"namespace": "ns", "name": "o", "uid": "uid-o"}}
REPLACED = {"metadata": {**OWNER["metadata"], "uid": "uid-new"}}
LEAVING = {"metadata": {**OWNER["metadata"], **GOING}}


def thing(key, **metadata) -> dict:
    return {"metadata": {"namespace": key[0], "name": key[1], "uid": f"uid-{key[1]}", **metadata}}


def reference(kind: str = "Owner", uid: str = "uid-o", controller: bool = True) -> dict:
    return {"ownerReferences": [{"kind": kind, "name": "o", "uid": uid, "controller": controller}]}


class Reconciler:
    """Records each pass (its key and loop time) and answers the next of ``answers`` (the last
    one again once they run out); an exception is raised."""

    def __init__(self, *answers: Result | Exception) -> None:
        self.answers, self.passes, self.times = answers or (DONE,), [], []

    async def __call__(self, key, obj) -> Result:
        self.passes.append(key)
        self.times.append(asyncio.get_running_loop().time())
        answer = self.answers[min(len(self.passes), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def controller(reconcile, things: dict, owners=None, *, owns=(), watches=(), **options):
    spec = ControllerSpec(
        kind="Thing",
        key_field="thing",
        read=things.get,
        keys=lambda: list(things),
        adopts="pods",
        owns=owns,
        watches=watches,
        owner_kind="Owner",
        owner=(owners or {}).get,
    )
    options.setdefault("backoff", Backoff(first=0.01))
    return ControllerRuntime(spec, reconcile, logger=logger, **options)


def settled(pool: ControllerRuntime) -> bool:
    """No key is queued, in a pass, or waiting out a delay: no pass comes without a change."""
    return len(pool.queue) == 0


async def until(predicate, timeout: float = 2.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not true in time"
        await asyncio.sleep(0.005)


def lines(caplog) -> list[tuple]:
    """Each line logged: level, message, the key's fields and the exception it carries."""
    fields = [(vars(r).get("namespace"), vars(r).get("thing")) for r in caplog.records]
    return [
        (r.levelname, r.getMessage(), *key, r.exc_info and repr(r.exc_info[1]))
        for r, key in zip(caplog.records, fields, strict=True)
    ]


async def test_no_key_is_taken_before_the_watches_have_listed() -> None:
    first, second = asyncio.Event(), asyncio.Event()
    waiting, control = Reconciler(), Reconciler()
    pool = controller(waiting, {A: thing(A)})
    other = controller(control, {B: thing(B)})
    pool.enqueue(A)
    pool.work(2, first, second)
    first.set()
    other.work(1)  # started after the first, it lists and passes while the first waits
    await until(lambda: control.passes == [B])
    assert waiting.passes == []
    second.set()
    await until(lambda: waiting.passes and settled(pool))
    assert waiting.passes == [A]  # the key queued before and the listing's: one pass
    await pool.stop()
    await other.stop()


@pytest.mark.parametrize(
    ("answers", "backoff", "passes", "gap", "logged"),
    [
        pytest.param(
            (RETRY, DONE), 0.01, [A, A], 0.01, [], id="a pass asking for a retry comes back"
        ),
        pytest.param(
            (RuntimeError("bug"), DONE),
            0.01,
            [A, A],
            0.01,
            [("ERROR", "Unexpected error reconciling Thing", "ns", "a", "RuntimeError('bug')")],
            id="a pass that raises is logged with its key and comes back after its backoff",
        ),
        pytest.param(
            (Result(after=0.05), DONE),
            30.0,
            [A, A],
            0.05,
            [],
            id="one asking for a later pass gets it then, without backoff (30 s)",
        ),
        pytest.param((DONE,), 0.01, [A], None, [], id="a pass that is done brings no other"),
    ],
)
async def test_what_a_pass_returns_decides_the_next_and_the_worker_lives_on(
    caplog, answers, backoff, passes, gap, logged
) -> None:
    caplog.set_level(logging.INFO, logger=logger.name)
    reconcile, things = Reconciler(*answers), {A: thing(A)}
    pool = controller(reconcile, things, backoff=Backoff(first=backoff))
    pool.work(1)
    await until(lambda: len(reconcile.passes) == len(passes) and settled(pool))
    assert lines(caplog) == logged
    if gap is not None:
        assert reconcile.times[1] - reconcile.times[0] >= gap
    things[B] = thing(B)
    pool.enqueue(B)  # the one worker still takes keys
    await until(lambda: reconcile.passes[-1] == B and settled(pool))
    assert reconcile.passes == [*passes, B]
    await pool.stop()


async def test_one_key_is_never_processed_by_two_tasks_at_once() -> None:
    release, running, overlaps, passes = asyncio.Event(), set(), [], []

    async def reconcile(key, obj) -> Result:
        overlaps.append(key in running)
        running.add(key)
        if key == A:
            await release.wait()
        running.discard(key)
        passes.append(key)
        return DONE

    pool = controller(reconcile, {A: thing(A), B: thing(B)})
    pool.work(4)
    await until(lambda: running == {A} and passes == [B])
    pool.enqueue(A)  # changes during the pass: one more pass after it, not two
    pool.enqueue(A)
    release.set()
    await until(lambda: len(passes) == 3 and settled(pool))
    assert (passes, overlaps) == ([B, A, A], [False, False, False])
    await pool.stop()


@pytest.mark.parametrize(
    ("pass_seconds", "drain", "finished"),
    [
        pytest.param(0.1, {}, [A], id="stop lets a pass under way finish"),
        pytest.param(5.0, {"drain": 0.05}, [], id="a pass that outlasts the drain is cut"),
    ],
)
async def test_stop_drains_the_passes_under_way(pass_seconds, drain, finished) -> None:
    started, done = asyncio.Event(), []

    async def reconcile(key, obj) -> Result:
        started.set()
        await asyncio.sleep(pass_seconds)  # a long pass
        done.append(key)
        return DONE

    pool = controller(reconcile, {A: thing(A)})
    pool.work(2)
    await started.wait()
    began = asyncio.get_running_loop().time()
    await pool.stop(**drain)
    assert (done, pool.working) == (finished, False)
    assert asyncio.get_running_loop().time() - began < 1


OWNED, OTHERS = thing(A, **reference()), thing(A, **reference(kind="Other"))
NAMING = thing(A, **reference(controller=False))


@pytest.mark.parametrize(
    ("obj", "owner", "called"),
    [
        pytest.param(None, OWNER, False, id="a key with no object gets no pass"),
        pytest.param(thing(A, **GOING), OWNER, False, id="an object being deleted gets none"),
        pytest.param(OWNED, None, False, id="an object whose owner is gone gets none"),
        pytest.param(OWNED, REPLACED, False, id="one whose owner was replaced gets none"),
        pytest.param(OWNED, LEAVING, False, id="one whose owner is being deleted gets none"),
        pytest.param(OWNED, OWNER, True, id="an object whose owner stays gets a pass"),
        pytest.param(thing(A), None, True, id="an object with no owner gets a pass"),
        pytest.param(OTHERS, None, True, id="an object controlled by another kind gets one"),
        pytest.param(NAMING, None, True, id="one naming a gone owner not its controller gets one"),
    ],
)
async def test_the_shared_rules_decide_which_objects_get_a_pass(obj, owner, called) -> None:
    reconcile = Reconciler(Result(after=7.0))
    things = {} if obj is None else {A: obj}
    pool = controller(reconcile, things, {("ns", "o"): owner} if owner else {})
    expected = (Result(after=7.0), [A]) if called else (DONE, [])
    assert (await pool.process(A), reconcile.passes) == expected


@pytest.mark.parametrize(
    ("raised", "result", "logged", "terminating"),
    [
        pytest.param(
            OwnerGoing(),
            DONE,
            [("INFO", "Thing is being deleted; its pods are not adopted", "ns", "a", None)],
            set(),
            id="an owner found going ends the pass without adopting",
        ),
        pytest.param(
            TERMINATING,
            DONE,
            [("INFO", "Namespace is being deleted; Thing not reconciled", "ns", "a", None)],
            {"ns"},
            id="a terminating namespace ends the pass and is held as terminating",
        ),
        pytest.param(
            NotLeading.refusing("PATCH", "/apis/ome.io/v1beta1/things/a", None),
            RETRY,
            [],
            set(),
            id="a write refused for not leading is retried",
        ),
    ],
)
async def test_the_shared_exceptions_end_a_pass_as_such(
    caplog, raised, result, logged, terminating
) -> None:
    caplog.set_level(logging.INFO, logger=logger.name)
    pool = controller(Reconciler(raised), {A: thing(A)})
    outcome = (await pool.process(A), lines(caplog), pool.terminating)
    assert outcome == (result, logged, terminating)


async def test_no_object_of_a_terminating_namespace_gets_a_pass_until_its_last_is_gone() -> None:
    elsewhere, again = ("other", "c"), ("ns", "d")
    reconcile = Reconciler(TERMINATING, DONE)
    things = {A: thing(A), B: thing(B), elsewhere: thing(elsewhere)}
    pool = controller(reconcile, things)
    assert [await pool.process(key) for key in (A, B, elsewhere)] == [DONE, DONE, DONE]
    del things[A]
    pool.gone(A)  # B is still there
    assert (await pool.process(B), pool.terminating) == (DONE, {"ns"})
    del things[B]
    pool.gone(B)
    things[again] = thing(again)  # the namespace made again, and an object in it
    assert (await pool.process(again), pool.terminating) == (DONE, set())
    assert reconcile.passes == [A, elsewhere, again]


async def test_a_namespace_whose_last_object_went_during_the_pass_is_not_held() -> None:
    things, passes = {A: thing(A)}, []

    async def reconcile(key, obj) -> Result:
        passes.append(key)
        if key == A:  # its deletion event comes while the pass writes, refused
            del things[A]
            pool.gone(A)
            raise TERMINATING
        return DONE

    pool = controller(reconcile, things)
    assert await pool.process(A) == DONE
    things[B] = thing(B)  # the namespace made again, and an object in it
    assert (await pool.process(B), pool.terminating) == (DONE, set())
    assert passes == [A, B]


async def test_a_follower_queues_nothing_and_once_working_passes_every_key_in_order() -> None:
    told, ready = {}, (asyncio.Event(), asyncio.Event())
    keys = [("ns", "c"), A, ("another", "b")]
    reconcile = Reconciler()
    pods = Trigger("Pod", subscribe=told.setdefault("Pod", []).append, keys=lambda pod: [A])
    pool = controller(reconcile, {k: thing(k) for k in keys}, owns=(pods,), following=True)
    pool.enqueue(A)
    told["Pod"][0]("a-0")
    assert len(pool.queue) == 0
    pool.work(1, *ready)
    assert pool.following is False
    for event in ready:
        event.set()
    await until(lambda: len(reconcile.passes) == 3 and settled(pool))
    assert reconcile.passes == [("another", "b"), A, ("ns", "c")]
    await pool.stop()


CHANGES = {("Pod", "a-0"): [A], ("Pod", "x-0"): [], ("ConfigMap", "old", "new"): [B, A, B]}


@pytest.mark.parametrize(
    ("kind", "change", "queued"),
    [
        pytest.param("Pod", ("a-0",), [A], id="a change to an owned Pod re-queues its owner"),
        pytest.param(
            "ConfigMap",
            ("old", "new"),
            [B, A],
            id="a change to a watched ConfigMap re-queues each key it maps to, once",
        ),
        pytest.param("Pod", ("x-0",), [], id="a change that maps to no key re-queues none"),
    ],
)
async def test_each_trigger_re_queues_the_keys_its_change_maps_to(kind, change, queued) -> None:
    told: dict[str, list] = {}

    def trigger(name: str) -> Trigger:
        def keys(*change):
            return CHANGES[(name, *change)]

        return Trigger(name, subscribe=told.setdefault(name, []).append, keys=keys)

    pool = controller(Reconciler(), {}, owns=(trigger("Pod"),), watches=(trigger("ConfigMap"),))
    assert {name: len(callbacks) for name, callbacks in told.items()} == {"Pod": 1, "ConfigMap": 1}
    told[kind][0](*change)
    assert [await pool.queue.get() for _ in range(len(pool.queue))] == queued


@pytest.mark.parametrize(
    ("found", "going"),
    [
        pytest.param(None, True, id="an owner not found is gone"),
        pytest.param(REPLACED, True, id="an owner replaced by another of its name is gone"),
        pytest.param(LEAVING, True, id="an owner being deleted is going"),
        pytest.param(OWNER, False, id="an owner there and not going stays"),
    ],
)
def test_gone_or_going(found, going) -> None:
    assert gone_or_going(found, "uid-o") is going


class Api:
    """Answers each read with ``answer``, or raises it."""

    def __init__(self, answer) -> None:
        self.answer, self.asked = answer, []

    def get(self, obj):
        self.asked.append(obj)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "raised"),
    [
        pytest.param(
            api_error(404, 'owners "o" not found', "NotFound"),
            OwnerGoing,
            id="an owner the server no longer has is going",
        ),
        pytest.param(REPLACED, OwnerGoing, id="an owner replaced by another is going"),
        pytest.param(LEAVING, OwnerGoing, id="an owner the server says is being deleted is going"),
        pytest.param(OWNER, None, id="an owner there and not going lets the adoption go on"),
        pytest.param(Unreachable(0, "refused"), Unreachable, id="a read unanswered raises as is"),
    ],
)
def test_recheck_owner_reads_the_owner_itself(answer, raised) -> None:
    api = Api(answer)
    with pytest.raises(raised) if raised else contextlib.nullcontext():
        recheck_owner(api, OWNER)
    assert api.asked == [OWNER]
