"""The parsed indexes of what reconciles read: grouped by lookup key in name order, versioned
per key, fed by listings and changes; a malformed object is set aside once per version."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.cluster.informing import Changed, Relisted
from ome_operator.controller.sources import SourceIndex
from tests.builders import nested, runtime_manifest


def runtime(name: str, version: str = "1", namespace: str = "team-a", **spec: Any) -> dict:
    obj = runtime_manifest(name, cluster=False, namespace=namespace, **spec)
    obj["metadata"]["resourceVersion"] = version
    return obj


def malformed(name: str, version: str = "1") -> dict:
    obj = runtime(name, version)
    obj["spec"]["supportedModelFormats"] = "safetensors"
    return obj


def deep(name: str, levels: int) -> dict:
    obj = runtime(name)
    obj["spec"]["engineConfig"] = {"runner": {"name": "r", "image": "i", "x": nested(levels)}}
    return obj


class Index:
    """A ServingRuntime index keyed by namespace, and what it told its listeners."""

    def __init__(self) -> None:
        self.changed: list[str] = []
        self.malformed: list[tuple[str, str]] = []
        self.index = SourceIndex(
            "ServingRuntime",
            lambda obj: obj["metadata"]["namespace"],
            on_change=lambda obj, before, after: self.changed.append(obj["metadata"]["name"]),
            on_malformed=lambda obj, problem: self.malformed.append(
                (obj["metadata"]["name"], problem)
            ),
        )

    def names(self, key: str = "team-a") -> list[str]:
        return [r.name for r in self.index.get(key, ())]


def fed(*batches: list[Any]) -> Index:
    index = Index()
    for batch in batches:
        index.index.apply(batch)
    return index


@pytest.mark.parametrize(
    ("batches", "names", "changed"),
    [
        pytest.param(
            [[Relisted(None, (runtime("b"), runtime("a")))]],
            ["a", "b"],
            [],
            id="values are in name order and the first listing reports nothing",
        ),
        pytest.param(
            [[Relisted(None, (runtime("a"),))], [Changed("ADDED", runtime("b"))]],
            ["a", "b"],
            ["b"],
            id="a change after the listing is reported",
        ),
        pytest.param(
            [[Relisted(None, (runtime("a"), runtime("b")))], [Changed("DELETED", runtime("a"))]],
            ["b"],
            ["a"],
            id="a deletion removes the value",
        ),
        pytest.param(
            [
                [Relisted(None, (runtime("a"), runtime("b")))],
                [Relisted(None, (runtime("b", "2"), runtime("c")))],
            ],
            ["b", "c"],
            ["a", "b", "c"],
            id="a relist reports what changed meanwhile, deletions first",
        ),
        pytest.param(
            [[Relisted(None, (runtime("a"),))], [Relisted(None, (runtime("a"),))]],
            ["a"],
            [],
            id="a relist of the same versions reports nothing",
        ),
        pytest.param(
            [[Relisted(None, (runtime("a"), malformed("b")))]],
            ["a"],
            [],
            id="a malformed object is left out",
        ),
        pytest.param(
            [[Relisted(None, (runtime("a"), malformed("b")))], [Changed("MODIFIED", runtime("b"))]],
            ["a", "b"],
            ["b"],
            id="a malformed object is parsed again when it changes",
        ),
        pytest.param(
            [[Relisted(None, (runtime("a"), runtime("b")))], [Changed("MODIFIED", malformed("b"))]],
            ["a"],
            ["b"],
            id="an object that becomes malformed is no longer found",
        ),
    ],
)
def test_an_index_holds_the_parsed_values_under_their_keys(batches, names, changed) -> None:
    index = fed(*batches)

    assert (index.names(), index.changed) == (names, changed)


def test_a_malformed_object_is_reported_once_per_version() -> None:
    index = fed(
        [Relisted(None, (malformed("b"),))],
        [Relisted(None, (malformed("b"),))],
        [Changed("MODIFIED", malformed("b", "2"))],
    )

    problem = (
        'ServingRuntime "team-a/b" is invalid: '
        'spec.supportedModelFormats: must be a list (got "safetensors")'
    )
    assert index.malformed == [("b", problem), ("b", problem)]


def test_an_object_nested_over_the_limit_is_set_aside_with_its_path() -> None:
    index = fed([Relisted(None, (deep("a", 5000), runtime("b")))])

    assert index.names() == ["b"]
    [(name, problem)] = index.malformed
    assert name == "a"
    assert problem.startswith('ServingRuntime "team-a/a" is invalid: spec.engineConfig.runner.x.a.')
    assert problem.endswith(".a: nested more than 100 levels deep (the limit is 100)")


def test_a_key_version_moves_with_each_change_under_it_only() -> None:
    index = fed([Relisted(None, (runtime("a"), runtime("x", namespace="team-b")))]).index
    before = (index.version("team-a"), index.version("team-b"))

    index.apply([Changed("MODIFIED", runtime("a", "2"))])
    after = (index.version("team-a"), index.version("team-b"))
    index.apply([Changed("DELETED", runtime("a", "3"))])

    assert after[0] != before[0] and after[1] == before[1]
    assert (index.version("team-a"), "team-a" in index) == (0, False)  # nothing under it
