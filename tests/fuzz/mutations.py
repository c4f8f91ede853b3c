"""Manifests for the fuzz suite: the samples and render cases, mutated.

A draw takes one seed (the sample manifests, one render case's input, or a set built by
``tests.builders``) and applies a few mutations: a value replaced by another JSON type, a huge
string, unicode or a value nested past the limits; a key or item deleted; a kind or a name
changed; a document duplicated or replaced by something that is not a mapping. ``manifest_text``
writes the documents as multi-document YAML, a JSON document or a JSON ``List``, sometimes with
the text itself damaged. ``FUZZ`` is the one setting every property runs with: a fixed number of
examples, derandomized (the same examples on every run), no deadline, no example database.
"""

from __future__ import annotations

import contextlib
import copy
import json
import pathlib
import sys
from collections.abc import Iterator
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOW = "2026-01-01T00:00:00Z"


def fuzz(examples: int) -> settings:
    """The settings of a property: ``examples`` examples, the same on every run."""
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _documents(path: pathlib.Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def _seeds() -> list[list[Any]]:
    samples = [
        doc
        for path in sorted((ROOT / "manifests" / "samples").glob("*.yaml"))
        for doc in _documents(path)
    ]
    cases = [
        _documents(path)
        for path in sorted((ROOT / "tests" / "render" / "cases").glob("*/input.yaml"))
    ]
    built = [
        model_manifest("llama"),
        model_manifest("llama", cluster=False, namespace="demo"),
        runtime_manifest("vllm", formats=[entry(autoSelect=True)], size_range=("1B", "70B")),
        runtime_manifest("sr", cluster=False, namespace="demo"),
        isvc_manifest("svc", namespace="demo"),
        isvc_manifest("named", namespace="demo", runtime={"name": "vllm"}),
    ]
    return [samples, built, *cases]


SEEDS = _seeds()

#: Kinds a mutation may give a document: the ome.io kinds, the kinds render takes as cluster
#: state, and a List.
KINDS = (
    "InferenceService",
    "ServingRuntime",
    "ClusterServingRuntime",
    "BaseModel",
    "ClusterBaseModel",
    "AcceleratorClass",
    "InferenceReplica",
    "Deployment",
    "LeaderWorkerSet",
    "PodDisruptionBudget",
    "ConfigMap",
    "ControllerRevision",
    "List",
)
#: Levels of nesting around the limits: the models' (100), the old recursion limit (~490), the
#: C JSON decoder's (~1,000).
DEPTHS = (3, 99, 100, 101, 150, 495, 1100)

_SURROGATE = "\ud800"
_text = st.one_of(
    st.text(max_size=12),
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.sampled_from(["", "a", "A-b", "llama", "x" * 300, "ü", "名前", "\u202e", _SURROGATE, "0"]),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "é", "🙂"]), st.integers(1_000, 20_000)),
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    _text,
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=12,
)


def nested(depth: int, kind: str) -> Any:
    """``depth`` levels of lists or maps around a string, built without recursion."""
    value: Any = "tip"
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


_deep = st.builds(nested, st.sampled_from(DEPTHS), st.sampled_from(["list", "map"]))


@st.composite
def _location(draw: st.DrawFn, doc: Any) -> tuple[Any, ...]:
    """A location in ``doc`` at least one level down: each step goes down a level, three
    times in four, while there is one."""
    loc: tuple[Any, ...] = ()
    node = doc
    while isinstance(node, dict | list) and node and (not loc or draw(st.integers(0, 3))):
        key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
        loc, node = (*loc, key), node[key]
    return loc


def _parent(doc: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc[:-1]:
        doc = doc[part]
    return doc


@st.composite
def _mutation(draw: st.DrawFn, docs: list[Any]) -> list[Any]:
    if not docs:
        return [draw(json_values)]
    index = draw(st.integers(0, len(docs) - 1))
    doc = docs[index]
    op = draw(
        st.sampled_from(
            ["replace", "replace", "deep", "delete", "kind", "name", "root", "duplicate", "huge"]
        )
    )
    if op == "root":
        docs[index] = _copied(draw(st.one_of(json_values, st.lists(st.just(doc), max_size=2))))
        return docs
    if op == "duplicate":
        docs.insert(draw(st.integers(0, len(docs))), _copied(doc))
        return docs
    if not isinstance(doc, dict):
        docs[index] = _copied(draw(st.sampled_from(SEEDS[1])))
        return docs
    if op == "kind":
        doc["kind"] = draw(st.sampled_from(KINDS))
        if doc["kind"] == "List":
            doc["items"] = _copied(draw(st.lists(st.sampled_from(SEEDS[1]), max_size=3)))
        return docs
    if op == "name":
        field = draw(st.sampled_from(["name", "namespace"]))
        meta = doc.get("metadata")
        if isinstance(meta, dict):
            meta[field] = _copied(draw(st.one_of(_text, json_values)))
        return docs
    loc = draw(_location(doc))
    if not loc:
        return docs
    parent = _parent(doc, loc)
    if op == "delete":
        del parent[loc[-1]]
    elif op == "deep":
        parent[loc[-1]] = _copied(draw(_deep))
    elif op == "huge":
        parent[loc[-1]] = draw(st.sampled_from(["x", "ü", "🙂"])) * 100_000
    else:
        parent[loc[-1]] = _copied(draw(json_values))
    return docs


@st.composite
def manifest_sets(draw: st.DrawFn, most: int = 3) -> list[Any]:
    """Documents from a seed with up to ``most`` mutations (maybe none)."""
    docs = _copied(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, most))):
        docs = draw(_mutation(docs))
    return docs


def _copied(value: Any) -> Any:
    with deep_enough():
        return copy.deepcopy(value)


@contextlib.contextmanager
def deep_enough() -> Iterator[None]:
    """Room for the test's own (recursive) YAML and JSON writers on the deepest values drawn."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, 20 * max(DEPTHS)))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


_SNIPPETS = (
    ":",
    "- ",
    "\t",
    "{",
    "]",
    "&a ",
    "*a",
    "*b",
    "!!binary ",
    "!!set ",
    "!!timestamp ",
    "!!int ",
    "!!float x",
    "? ",
    "<<: *a",
    "\n---\n",
    "0x_",
    "0x" + "f" * 5000,
    "1" * 5000,
    ".nan",
    "2001-02-30",
    "\x00",
    "\ufeff",
    '"\\ud800"',
)


@st.composite
def manifest_text(draw: st.DrawFn, docs: list[Any]) -> str:
    """``docs`` as YAML or JSON, the text maybe damaged (cut, or a snippet put in)."""
    form = draw(st.sampled_from(["yaml", "yaml", "json", "json-list"]))
    with deep_enough():
        if form == "yaml":
            text = yaml.safe_dump_all(docs, allow_unicode=draw(st.booleans()), sort_keys=False)
        elif form == "json" and len(docs) == 1:
            text = json.dumps(docs[0])
        else:
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    damage = draw(st.sampled_from(["none", "none", "none", "cut", "insert"]))
    if damage != "none" and text:
        at = draw(st.integers(0, len(text)))
        snippet = draw(st.sampled_from(_SNIPPETS)) if damage == "insert" else ""
        text = text[:at] + snippet + (text[at:] if damage == "insert" else "")
    return text
