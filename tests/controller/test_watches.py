"""The InferenceService feed: every listed InferenceService is seen (all are reconciled at
start), a relist says what changed or vanished while the watch was down, and nothing more."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.cluster.informing import Changed, Relisted
from ome_operator.controller.watches import InferenceServiceFeed


def isvc(name: str, version: str = "1", namespace: str = "team-a") -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "resourceVersion": version}
    return {"kind": "InferenceService", "metadata": meta}


def heard(*batches: list[Any], scopes: tuple[str | None, ...] = (None,)) -> tuple[list, bool]:
    """What the controller heard, and whether the feed counts as listed."""
    held: dict[tuple[str, str], Any] = {}
    told: list[tuple[str, str, str | None]] = []

    def seen(key: tuple[str, str], obj: Any) -> None:
        held[key] = obj
        told.append(("seen", key[1], obj["metadata"]["resourceVersion"]))

    def gone(key: tuple[str, str]) -> None:
        held.pop(key, None)
        told.append(("gone", key[1], None))

    feed = InferenceServiceFeed(lambda: held, seen, gone)
    feed.scopes = frozenset(scopes)
    for batch in batches:
        feed.apply(batch)
    return told, feed.synced


@pytest.mark.parametrize(
    ("batches", "told"),
    [
        pytest.param(
            [[Relisted(None, (isvc("b"), isvc("a")))]],
            [("seen", "a", "1"), ("seen", "b", "1")],
            id="the first listing shows every InferenceService, in name order",
        ),
        pytest.param(
            [[Relisted(None, (isvc("a"),))], [Changed("MODIFIED", isvc("a", "2"))]],
            [("seen", "a", "1"), ("seen", "a", "2")],
            id="a change is seen",
        ),
        pytest.param(
            [[Relisted(None, (isvc("a"),))], [Changed("DELETED", isvc("a", "2"))]],
            [("seen", "a", "1"), ("gone", "a", None)],
            id="a deletion is gone",
        ),
        pytest.param(
            [
                [Relisted(None, (isvc("a"), isvc("b"), isvc("c")))],
                [Relisted(None, (isvc("b"), isvc("c", "5")))],
            ],
            [
                *[("seen", "a", "1"), ("seen", "b", "1"), ("seen", "c", "1")],
                *[("gone", "a", None), ("seen", "c", "5")],
            ],
            id="a relist tells only what vanished and what changed meanwhile",
        ),
        pytest.param(
            [
                [
                    Relisted("team-a", (isvc("a"),)),
                    Relisted("team-b", (isvc("x", namespace="team-b"),)),
                ],
                [Relisted("team-b", ())],
            ],
            [("seen", "a", "1"), ("seen", "x", "1"), ("gone", "x", None)],
            id="a namespace's relist says nothing of another namespace",
        ),
    ],
)
def test_the_feed_tells_what_the_watch_shows(batches, told) -> None:
    assert heard(*batches, scopes=("team-a", "team-b"))[0] == told


@pytest.mark.parametrize(
    ("batches", "synced"),
    [
        pytest.param([], False, id="nothing listed yet"),
        pytest.param([[Relisted("team-a", ())]], False, id="one of two namespaces listed"),
        pytest.param([[Relisted("team-a", ())], [Relisted("team-b", ())]], True, id="both listed"),
    ],
)
def test_the_feed_is_synced_once_every_namespace_is_listed(batches, synced) -> None:
    assert heard(*batches, scopes=("team-a", "team-b"))[1] is synced
