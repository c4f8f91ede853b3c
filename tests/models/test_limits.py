"""The limits every parse checks first (nesting) and admission adds (size): iterative, exact
about where an object goes over, and refused with the limit in the message."""

from __future__ import annotations

import pytest

from ome_operator.models import InvalidResourceError, from_manifest, storable_manifest
from ome_operator.models.limits import MAX_NESTING, nesting_problem, size_problem
from tests.builders import isvc_manifest, nested

OVER = f"nested more than {MAX_NESTING} levels deep (the limit is {MAX_NESTING})"


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(nested(100), None, id="100 levels are within the limit"),
        pytest.param(nested(101), (("a",) * 100, OVER), id="101 levels go over at the 101st"),
        pytest.param(
            nested(50_000), (("a",) * 100, OVER), id="any depth is checked without recursion"
        ),
        pytest.param([[[]]], None, id="lists count as levels too"),
        pytest.param(
            {"x": nested(99), "y": [0, nested(99)]},
            (("y", 1) + ("a",) * 98, OVER),
            id="the path names list indexes",
        ),
        pytest.param(
            {"b": nested(200), "a": nested(200)},
            (("b",) + ("a",) * 99, OVER),
            id="the first place in document order is named",
        ),
        pytest.param("a scalar", None, id="a scalar has no nesting"),
        pytest.param(
            {"metadata": {"managedFields": [{"fieldsV1": nested(200)}]}, "spec": nested(99)},
            None,
            id="the server's managedFields mirror the fields and are not counted",
        ),
    ],
)
def test_nesting_is_checked_iteratively_and_names_where_it_goes_over(obj, expected) -> None:
    assert nesting_problem(obj) == expected


def test_a_parse_refuses_an_object_nested_too_deep_before_reading_it() -> None:
    manifest = isvc_manifest("chat", engine={"runner": {"image": "i", "env": nested(10_000)}})

    with pytest.raises(InvalidResourceError) as raised:
        from_manifest(manifest)

    assert str(raised.value) == (
        'InferenceService "default/chat" is invalid: spec.engine.runner.env'
        + ".a" * 96
        + f": {OVER}"
    )


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        pytest.param("x" * 1_000, None, id="a small object fits"),
        pytest.param(
            "x" * 1_572_830,
            "the object is 1572870 bytes as JSON, over the 1572864 bytes an API server stores "
            "per object (etcd's request limit)",
            id="an object over 1.5 MiB does not",
        ),
        pytest.param(
            "\u00e9" * 786_420,
            "the object is 1572880 bytes as JSON, over the 1572864 bytes an API server stores "
            "per object (etcd's request limit)",
            id="sizes count UTF-8 bytes",
        ),
    ],
)
def test_size_is_the_compact_json_of_the_object(note: str, expected: str | None) -> None:
    assert size_problem({"metadata": {"annotations": {"note": note}}}) == expected


def test_admission_refuses_an_object_too_big_to_store() -> None:
    manifest = isvc_manifest("chat", annotations={"note": "x" * 2_000_000})

    with pytest.raises(InvalidResourceError) as raised:
        storable_manifest(manifest)

    assert str(raised.value).startswith(
        'InferenceService "default/chat" is invalid: (root): the object is 2000'
    )
