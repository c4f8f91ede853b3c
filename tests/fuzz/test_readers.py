"""The manifest readers refuse what an API server could not hold with a ManifestError, and
read everything else into JSON trees, the same on every run."""

from __future__ import annotations

import io
import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ome_operator.cluster.decoding import MAX_DOCUMENT_NESTING
from ome_operator.cluster.manifests import (
    ManifestError,
    ManifestReader,
    read_manifests,
)
from ome_operator.cluster.objects import (
    ACCELERATOR_CLASS,
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    CLUSTER_SERVING_RUNTIME,
    INFERENCE_SERVICE,
    SERVING_RUNTIME,
    NotFoundError,
    Resource,
)
from tests.fuzz.mutations import deep_enough, fuzz, manifest_sets, manifest_text

CONTROLLER_REVISION = Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True)
RESOURCES = (
    INFERENCE_SERVICE,
    SERVING_RUNTIME,
    CLUSTER_SERVING_RUNTIME,
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    ACCELERATOR_CLASS,
    CONTROLLER_REVISION,
)


def json_tree_problem(value: Any) -> str | None:
    """What in ``value`` is not a JSON value an API server stores (a loop: any depth)."""
    pending = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict | list) and depth > MAX_DOCUMENT_NESTING:
            return "too deep"
        if isinstance(node, dict):
            if not all(isinstance(key, str) for key in node):
                return f"a key that is not a string: {list(node)!r:.80}"
            pending.extend((item, depth + 1) for item in node.values())
        elif isinstance(node, list):
            pending.extend((item, depth + 1) for item in node)
        elif isinstance(node, float) and not math.isfinite(node):
            return f"a number that is not finite: {node}"
        elif isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**63:
            return "an integer out of range"
        elif isinstance(node, str) and any("\ud800" <= c <= "\udfff" for c in node):
            return "a lone surrogate"
        elif node is not None and not isinstance(node, bool | int | float | str):
            return f"a {type(node).__name__}"
    return None


def answers(reader: ManifestReader, names: list[str]) -> list[Any]:
    """What the reader answers for every resource: the list, and a get of each name."""
    found: list[Any] = []
    for resource in RESOURCES:
        found.append(reader.list(resource, None))
        for name in names:
            try:
                found.append(reader.get(resource, "default", name))
            except NotFoundError as exc:
                found.append(str(exc))
    return found


def read(text: str) -> tuple[str, Any]:
    """("error", message), or ("read", objects with their sources, the reader's answers)."""
    try:
        found = read_manifests(["-"], io.StringIO(text))
    except ManifestError as exc:
        return "error", str(exc)
    for where, obj in found:
        assert isinstance(obj, dict), where
        assert isinstance(obj["apiVersion"], str) and isinstance(obj["kind"], str), where
        assert json_tree_problem(obj) is None, (where, json_tree_problem(obj))
    try:
        reader = ManifestReader([obj for _, obj in found], sources=[where for where, _ in found])
    except ManifestError as exc:
        return "unreadable", str(exc)
    names = sorted(
        {
            obj["metadata"]["name"]
            for _, obj in found
            if isinstance(obj.get("metadata"), dict) and obj["metadata"].get("name")
        }
    )
    return "read", (found, answers(reader, names[:5]))


def same(first: Any, second: Any) -> bool:
    with deep_enough():
        return json.dumps(first) == json.dumps(second)


@fuzz(150)
@given(st.data())
def test_a_mutated_manifest_is_read_or_refused_the_same_way_twice(data: st.DataObject) -> None:
    text = data.draw(manifest_text(data.draw(manifest_sets())))

    first, second = read(text), read(text)

    if first[0] != "read":
        assert first[1].startswith(("error parsing ", "error reading ", "the path ")), first[1]
    assert same(first, second)
