"""The record of what the operator's controllers wrote: echoes, answers that stand for an object
until the watch catches up, created objects not yet shown, what was last applied, deletions
since, fields taken back, and forgetting an owner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ome_operator.controller.write_record import WriteRecord

OWNER = ("ns", "chat")
#: The managedFields of an answer: the operator's apply and update, and another manager's.
MANAGED = [
    {"manager": "ome-operator", "operation": "Apply", "fieldsV1": {"f:spec": {}}},
    {"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}},
    {"manager": "ome-operator", "operation": "Update", "fieldsV1": {"f:status": {}}},
]
#: The same, as the record keeps them: only the operator's, its update without its fields.
LEAN = [
    {"manager": "ome-operator", "operation": "Apply", "fieldsV1": {"f:spec": {}}},
    {"manager": "ome-operator", "operation": "Update"},
]
#: The two controllers that write, as the record names them.
ME, PODS = "owned", "pods"
#: Fields a forced apply takes back.
F, G = ("spec.replicas",), ("spec.paused",)
#: Metadata naming the InferenceService "chat" by label.
LABELLED: dict[str, Any] = {"labels": {"ome.io/inferenceservice": "chat"}}


def _refs(name: str, controller: bool = True) -> dict[str, Any]:
    """Metadata with an owner reference to the InferenceService ``name``."""
    ref = {"kind": "InferenceService", "name": name, "controller": controller}
    return {"ownerReferences": [ref]}


#: Controlled by "chat"; by "other"; and referring to "other" without it being the controller.
CONTROLLED, OTHERS, NOT_CONTROLLER = _refs("chat"), _refs("other"), _refs("other", False)


class _Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


Step = Callable[[WriteRecord, _Clock], None]


def _obj(version: str, name: str = "a", **meta: Any) -> dict[str, Any]:
    metadata = {"name": name, "namespace": "ns", "resourceVersion": version, **meta}
    return {"kind": "Deployment", "metadata": metadata}


def _id(name: str = "a") -> tuple[str, str, str]:
    return ("Deployment", "ns", name)


def row(*values: Any) -> tuple:
    """One row of a table: the values its test takes."""
    return values


def _table(rows: dict[str, tuple]) -> list:
    """A table's rows as pytest params, each named by its sentence."""
    return [pytest.param(*values, id=sentence) for sentence, values in rows.items()]


def wrote(
    version: str, by: str = ME, name: str = "a", created: bool = False, owner=None, **meta: Any
) -> Step:
    return lambda r, _: r.wrote(by, _obj(version, name, **meta), created=created, owner=owner)


def made(version: str, name: str = "a", **meta: Any) -> Step:
    return wrote(version, name=name, created=True, **meta)


def writing(by: str = ME) -> Step:
    return lambda r, _: r.writing(_id(), by)


def saw(version: str, deleted: bool = False) -> Step:
    return lambda r, _: r.saw(_obj(version), deleted)


def applied(compacted: bytes, name: str = "a", owner=OWNER) -> Step:
    return lambda r, _: r.applied(_id(name), owner, compacted)


def tick(seconds: float) -> Step:
    return lambda _, clock: setattr(clock, "now", clock.now + seconds)


def _record(steps: list[Step]) -> WriteRecord:
    clock = _Clock()
    record = WriteRecord(expectation_seconds=30.0, clock=clock)
    for step in steps:
        step(record, clock)
    return record


IS_ECHO = {
    "the version a controller wrote is its echo": row([wrote("5")], "5", False, True),
    "another controller's write is not its echo": row([wrote("5", by=PODS)], "5", False, False),
    "a later version is not an echo": row([wrote("5")], "6", False, False),
    "a deletion is never an echo": row([wrote("5")], "5", True, False),
    "a deletion during a write is not an echo either": row([writing()], "5", True, False),
    "an object nobody wrote has no echo": row([], "5", False, False),
    "an echo stays one once the watch caught up": row([wrote("5"), saw("5")], "5", False, True),
}


@pytest.mark.parametrize(("steps", "version", "deleted", "echo"), _table(IS_ECHO))
def test_is_echo(steps: list[Step], version: str, deleted: bool, echo: bool) -> None:
    assert _record(steps).is_echo(_obj(version), ME, deleted) is echo


UNDER_WAY = {
    "its echo seen before its answer re-queues nothing": row([("7", ME)], "7", ([True], False)),
    "a change other than its answer seen meanwhile re-queues": row(
        [("6", ME)], "7", ([True], True)
    ),
    "a failed write with an event seen meanwhile re-queues": row([("6", ME)], None, ([True], True)),
    "a write with nothing seen meanwhile re-queues nothing": row([], "7", ([], False)),
    "a failed write with nothing seen meanwhile re-queues nothing": row([], None, ([], False)),
    "another controller's event is not this write's echo": row(
        [("6", PODS)], "7", ([False], False)
    ),
    "a change by someone else seen before the write's own echo still re-queues": row(
        [("6", ME), ("7", ME)], "7", ([True, True], True)
    ),
}


@pytest.mark.parametrize(("events", "answer", "expected"), _table(UNDER_WAY))
def test_write_under_way(events: list[tuple], answer: str | None, expected: tuple) -> None:
    record = _record([writing(ME)])
    echoes = [record.is_echo(_obj(version), by) for version, by in events]
    answered = record.answered(_id(), None if answer is None else _obj(answer))
    assert (echoes, answered) == expected


CURRENT = {
    "with nothing written the cached object is current": row([], _obj("5"), _obj("5")),
    "a newer answer stands for the cached object, with only the operator's managedFields": row(
        [wrote("7", managedFields=MANAGED)], _obj("5"), _obj("7", managedFields=LEAN)
    ),
    "a cached object newer than the answer is current": row([wrote("5")], _obj("7"), _obj("7")),
    "a cached object as new as the answer is current": row([wrote("5")], _obj("5"), _obj("5")),
    "once the watch showed the answer's version the answer no longer stands": row(
        [wrote("7"), saw("7")], _obj("5"), _obj("5")
    ),
    "an older event leaves the answer standing": row([wrote("7"), saw("6")], _obj("6"), _obj("7")),
    "versions not integers never make the answer newer": row([wrote("b")], _obj("a"), _obj("a")),
    "a created answer the watch has not shown stands while it is expected": row(
        [made("7"), tick(29)], None, _obj("7")
    ),
    "a created answer the watch has not shown reads as absent once the expectation ends": row(
        [made("7"), tick(30)], None, None
    ),
    "a created object the watch showed deleted is gone": row(
        [made("7"), saw("7", deleted=True)], None, None
    ),
    "an answer to a write that created nothing reads as deleted when nothing is cached": row(
        [wrote("7")], None, None
    ),
}


@pytest.mark.parametrize(("steps", "cached", "expected"), _table(CURRENT))
def test_current(steps: list[Step], cached: dict | None, expected: dict | None) -> None:
    assert _record(steps).current(_id(), cached) == expected


def test_the_answer_kept_is_a_copy() -> None:
    answer = _obj("7", managedFields=list(MANAGED))
    record = _record([])
    record.wrote(ME, answer)
    record.current(_id(), _obj("5"))["metadata"]["name"] = "changed"
    assert (answer, record.current(_id(), _obj("5"))) == (
        _obj("7", managedFields=MANAGED),
        _obj("7", managedFields=LEAN),
    )


CHAT = ("Deployment", "ns", "chat")
UNSEEN = {
    "an object created for its controller counts as there until the watch shows it": row(
        [made("7", **CONTROLLED)], CHAT, [_obj("7", **CONTROLLED)]
    ),
    "an object without a controller counts for the InferenceService its label names": row(
        [made("7", **LABELLED)], CHAT, [_obj("7", **LABELLED)]
    ),
    "the controller reference wins over the label": row(
        [made("7", **OTHERS, **LABELLED)], CHAT, []
    ),
    "a reference that is not the controller's leaves the label to decide": row(
        [made("7", **NOT_CONTROLLER, **LABELLED)], CHAT, [_obj("7", **NOT_CONTROLLER, **LABELLED)]
    ),
    "an object is not counted once the watch has shown it": row(
        [made("7", **LABELLED), saw("7")], CHAT, []
    ),
    "an object is not counted once the expectation ends": row(
        [made("7", **LABELLED), tick(30)], CHAT, []
    ),
    "an object written but not created is not counted": row([wrote("7", **LABELLED)], CHAT, []),
    "several objects are listed by name": row(
        [made("7", n, **LABELLED) for n in "cab"], CHAT, [_obj("7", n, **LABELLED) for n in "abc"]
    ),
    "an object in another namespace is not counted": row(
        [made("7", **LABELLED)], ("Deployment", "other", "chat"), []
    ),
    "an object of another kind is not counted": row(
        [made("7", **LABELLED)], ("Service", "ns", "chat"), []
    ),
    "an object created for another owner is not counted": row(
        [made("7", **LABELLED)], ("Deployment", "ns", "other"), []
    ),
}


@pytest.mark.parametrize(("steps", "query", "expected"), _table(UNSEEN))
def test_unseen(steps: list[Step], query: tuple[str, str, str], expected: list[dict]) -> None:
    assert _record(steps).unseen(*query) == expected


SAW_DELETED = {
    "an entry with nothing applied is dropped when the watch shows it deleted": row(
        [wrote("7"), saw("7", True)], (0, False, None)
    ),
    "an applied object shown deleted keeps what was applied and that it was deleted": row(
        [applied(b"x"), saw("7", True)], (1, True, b"x")
    ),
    "an applied object with an answer shown deleted keeps what was applied": row(
        [applied(b"x"), wrote("7"), saw("7", True)], (1, True, b"x")
    ),
    "applying it again clears the deletion": row(
        [applied(b"x"), saw("7", True), applied(b"y")], (1, False, b"y")
    ),
    "an applied object the watch shows as it is was not deleted": row(
        [applied(b"x"), saw("7")], (1, False, b"x")
    ),
    "the deletion of an object nobody wrote changes nothing": row(
        [saw("7", True)], (0, False, None)
    ),
}


@pytest.mark.parametrize(("steps", "expected"), _table(SAW_DELETED))
def test_saw_deleted(steps: list[Step], expected: tuple) -> None:
    r = _record(steps)
    assert (len(r), r.deleted_since_applied(_id()), r.last_applied(_id())) == expected


TOOK_BACK = {
    "fields taken back the first time are told": row([F], [True]),
    "the same fields taken back again are not told again": row([F, F], [True, False]),
    "different fields taken back are told": row([F, G], [True, True]),
    "fields taken back again after others are told again": row([F, G, F], [True, True, True]),
}


@pytest.mark.parametrize(("taken", "told"), _table(TOOK_BACK))
def test_took_back(taken: list[tuple[str, ...]], told: list[bool]) -> None:
    record = _record([])
    assert [record.took_back(_id(), fields) for fields in taken] == told


ALL = ["a", "b", "c", "d"]
FORGET_OWNER = {
    "forgetting an owner drops what was written for it only": row(OWNER, (2, ["b", "d"])),
    "forgetting an owner nothing was written for drops nothing": row(("ns", "nobody"), (4, ALL)),
    "an owner of the same name in another namespace keeps its own": row(("kube", "chat"), (4, ALL)),
}


@pytest.mark.parametrize(("owner", "expected"), _table(FORGET_OWNER))
def test_forget_owner(owner: tuple[str, str], expected: tuple) -> None:
    """a and c were written for OWNER (applied, and answered), b for another, d for none."""
    record = _record(
        [
            applied(b"a", name="a"),
            applied(b"b", name="b", owner=("ns", "other")),
            wrote("7", name="c", owner=OWNER),
            wrote("7", name="d"),
        ]
    )
    record.forget_owner(owner)
    kept = [n for n in ALL if record.last_applied(_id(n)) or record.is_echo(_obj("7", n), ME)]
    assert (len(record), kept) == expected


@pytest.mark.parametrize(
    "ending",
    [
        pytest.param("shown", id="a created object the watch shows waits no more"),
        pytest.param("deleted", id="a created object the watch shows deleted waits no more"),
        pytest.param("forgotten", id="a created object whose owner goes waits no more"),
    ],
)
def test_nothing_is_left_waiting(ending) -> None:
    record = WriteRecord()
    created = {
        "kind": "PodDisruptionBudget",
        "metadata": {
            "name": "chat",
            "namespace": "ns",
            "resourceVersion": "5",
            "labels": {"ome.io/inferenceservice": "chat"},
        },
    }
    record.wrote("inferenceservice", created, created=True, owner=("ns", "chat"))
    waiting_before = record.waiting
    if ending == "forgotten":
        record.forget_owner(("ns", "chat"))
    else:
        record.saw(created, deleted=ending == "deleted")
    assert (waiting_before, record.waiting) == (1, 0)
