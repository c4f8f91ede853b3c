"""The InferenceService store: a change that a decision can read is news, a status or
bookkeeping move is not; the status a pass wrote is kept until the watch shows a newer version."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from ome_operator.controller.store import InferenceServiceStore
from tests.builders import isvc_manifest, nested

KEY = ("default", "chat")


def isvc(version: str, *, replicas: int = 1, status: Any = None, labels: Any = None) -> dict:
    meta: dict[str, Any] = {"name": "chat", "namespace": "default", "resourceVersion": version}
    if labels is not None:
        meta["labels"] = labels
    body: dict[str, Any] = {"metadata": meta, "spec": {"engine": {"minReplicas": replicas}}}
    if status is not None:
        body["status"] = status
    return body


@pytest.mark.parametrize(
    ("later", "news"),
    [
        pytest.param(isvc("2", replicas=2), True, id="a spec change is news"),
        pytest.param(isvc("2", labels={"team": "a"}), True, id="a label change is news (S9)"),
        pytest.param(isvc("2", status={"url": "x"}), False, id="a status move is not"),
        pytest.param(isvc("2"), False, id="a new resourceVersion alone is not"),
    ],
)
def test_only_what_a_decision_reads_is_news(later: dict, news: bool) -> None:
    store = InferenceServiceStore()
    assert store.seen(KEY, isvc("1")) is True  # a first sight always is

    assert store.seen(KEY, later) is news
    assert store.get(KEY) == later


def test_a_forgotten_service_leaves_its_namespace_empty() -> None:
    store = InferenceServiceStore()
    store.seen(KEY, isvc("1"))

    store.forget(KEY)

    assert (KEY in store, store.holds_namespace("default")) == (False, False)


# --- held packed; the resolution part parsed once per change of it ---------------------------


def test_a_body_read_is_a_copy_that_cannot_change_the_store() -> None:
    store = InferenceServiceStore()
    store.seen(KEY, _body())

    read = store.get(KEY)
    read["spec"]["engine"]["minReplicas"] = 9

    assert store.get(KEY) == _body() and store.bodies[KEY] == _body()


def test_the_resolution_is_parsed_again_only_when_its_part_changes() -> None:
    store = InferenceServiceStore()
    store.seen(KEY, _body())
    first = store.resolution(KEY)

    store.seen(KEY, {**_body(), "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    same = store.resolution(KEY)
    unresolved = {"conditions": [{"type": "RuntimeReady", "status": "False"}]}
    store.seen(KEY, {**_body(), "status": unresolved})
    changed = store.resolution(KEY)

    assert same is first
    assert changed is not first and changed.status == unresolved
    assert first.spec.model.name == "llama" and first.metadata.labels == {}


def _body() -> dict:
    manifest = isvc_manifest("chat")
    manifest["metadata"]["labels"] = {"team": "a"}
    return manifest | {"status": {}}


def _deep(extra: int = 0, **status: Any) -> dict[str, Any]:
    """An InferenceService too deep to pickle at the recursion limit in force when called."""
    levels = sys.getrecursionlimit() * 2 + extra
    manifest = isvc_manifest("chat", engine={"runner": {"x": nested(levels)}})
    return manifest | {"status": status} if status else manifest


def test_a_body_too_deep_to_pack_is_held_as_it_is() -> None:
    store = InferenceServiceStore()
    deep = _deep()

    assert store.seen(KEY, deep) is True
    assert store.get(KEY) is deep
    assert store.resolution(KEY).spec.model.name == "llama"  # the runner is no part of it


@pytest.mark.parametrize(
    ("extra", "status", "news"),
    [
        pytest.param(0, {}, False, id="the same content again is not news"),
        pytest.param(0, {"url": "x"}, False, id="nor is its status written (the echo)"),
        pytest.param(1, {}, True, id="a deeper runner is"),
    ],
)
def test_a_body_too_deep_to_pack_is_news_only_when_its_content_changes(extra, status, news):
    store = InferenceServiceStore()
    assert store.seen(KEY, _deep()) is True
    later = _deep(extra, **status)
    assert store.seen(KEY, later) is news
