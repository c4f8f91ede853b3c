"""A namespace's labels for the pod policy (``controller.namespace_labels``): read with a GET,
kept for the ttl, at most ``max_namespaces`` of them; a namespace not found has none, one that
cannot be read keeps the labels last read."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.cluster.errors import ApiError, NotFound
from ome_operator.controller.namespace_labels import NamespaceLabels


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeApi:
    """Answers GETs of namespaces from ``labels``; ``failure``, when set, is raised instead."""

    def __init__(self, labels: dict[str, dict[str, str]]) -> None:
        self.labels = labels
        self.failure: ApiError | None = None
        self.paths: list[str] = []

    def request(self, method: str, path: str, *_: Any, **__: Any) -> dict[str, Any]:
        assert method == "GET"
        self.paths.append(path)
        if self.failure is not None:
            raise self.failure
        name = path.rsplit("/", 1)[-1]
        if name not in self.labels:
            raise NotFound(404, f'namespaces "{name}" not found')
        return {"metadata": {"name": name, "labels": self.labels[name]}}


def _source(api: FakeApi, clock: Clock, **kwargs: Any) -> NamespaceLabels:
    return NamespaceLabels(lambda: api, ttl=30, clock=clock, **kwargs)


def test_labels_are_read_once_per_ttl() -> None:
    api, clock = FakeApi({"team-a": {"tier": "gpu"}}), Clock()
    labels = _source(api, clock)
    assert [labels("team-a"), labels("team-a")] == [{"tier": "gpu"}] * 2
    api.labels["team-a"] = {"tier": "cpu"}
    clock.now = 30
    assert labels("team-a") == {"tier": "cpu"}
    assert api.paths == ["/api/v1/namespaces/team-a"] * 2


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        pytest.param(NotFound(404, "gone"), {}, id="a namespace no longer found has no labels"),
        pytest.param(
            ApiError(503, "unavailable"),
            {"tier": "gpu"},
            id="a namespace that cannot be read keeps the labels last read",
        ),
    ],
)
def test_a_failed_read(failure: ApiError, expected: dict[str, str]) -> None:
    api, clock = FakeApi({"team-a": {"tier": "gpu"}}), Clock()
    labels = _source(api, clock)
    labels("team-a")
    api.failure, clock.now = failure, 31
    assert labels("team-a") == expected


def test_a_namespace_never_read_that_cannot_be_read_has_no_labels() -> None:
    api = FakeApi({})
    api.failure = ApiError(0, "no answer")
    assert _source(api, Clock())("team-a") == {}


def test_at_most_max_namespaces_are_kept_the_oldest_read_forgotten_first() -> None:
    api, clock = FakeApi({"a": {}, "b": {}, "c": {}}), Clock()
    labels = _source(api, clock, max_namespaces=2)
    for name in ("a", "b", "c", "b", "a"):
        labels(name)
    assert api.paths == [f"/api/v1/namespaces/{n}" for n in ("a", "b", "c", "a")]


def test_peek_holds_the_labels_only_while_they_are_fresh() -> None:
    api, clock = FakeApi({"team-a": {"tier": "gpu"}}), Clock()
    labels = _source(api, clock)
    before = labels.peek("team-a")
    labels("team-a")
    held = labels.peek("team-a")
    clock.now = 30
    assert (before, held, labels.peek("team-a"), len(api.paths)) == (
        None,
        {"tier": "gpu"},
        None,
        1,
    )
