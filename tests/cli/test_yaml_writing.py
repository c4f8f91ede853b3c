"""``yaml_text`` writes, byte for byte, what PyYAML's safe dumper writes for the same document."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ome_operator.cli.yaml_writing import yaml_text
from tests.fuzz.mutations import fuzz, json_values

#: Strings every resolver and quoting rule has an opinion on.
TRICKY = (
    *("", " ", "null", "~", "true", "No", "on", "y", "1", "0x1f", "1e3", ".inf", "-.5", "12:30"),
    *("2001-01-01", "a: b", "- a", "#c", "&a", "*a", "!t", "%x", "@x", "`x", "'q'", '"q"', "?"),
    *("a\nb", "a\n", "\n", " a", "a ", "a\tb", "\x85", "\u2028", "é", "名", "🙂", "\x07", "<<"),
    *("x" * 200, "word " * 40, "=", "{a}", "[a]", "a,b", "a #b", "---", "...", "\ufeff"),
)
_values = st.recursive(
    st.one_of(json_values, st.sampled_from(TRICKY)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(TRICKY), inner, max_size=4)
    ),
    max_leaves=20,
)


def dumped(document: Any, allow_unicode: bool = True) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(document, Dumper=dumper, sort_keys=False, allow_unicode=allow_unicode)


def outcome(write: Callable[[], str]) -> tuple[str, str]:
    """The text written, or the error raised (a lone surrogate cannot be encoded)."""
    try:
        return "text", write()
    except Exception as exc:
        return type(exc).__name__, str(exc)


@fuzz(300)
@given(_values, st.booleans())
def test_a_tree_of_json_values_is_written_as_pyyaml_writes_it(document, allow_unicode):
    assert outcome(lambda: yaml_text(document, allow_unicode=allow_unicode)) == outcome(
        lambda: dumped(document, allow_unicode)
    )


SHARED: list[Any] = [1]
RECURSIVE: list[Any] = []
RECURSIVE.append(RECURSIVE)


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"a": SHARED, "b": SHARED}, id="a list met twice: anchors"),
        pytest.param(RECURSIVE, id="a list inside itself"),
        pytest.param({"a": (1, 2)}, id="a tuple PyYAML refuses"),
        pytest.param({"a": {1, 2}}, id="a set"),
        pytest.param({"a": b"x"}, id="bytes"),
        pytest.param({2: 2.5, True: None, 0.1: -0.0, None: 1}, id="keys that are not strings"),
        pytest.param({"a": [{}, [], ""], "b": [[[[]]]]}, id="empty maps, lists and strings"),
        pytest.param([1e20, 1e-7, float("nan"), float("inf"), -0.0, 2**70], id="numbers"),
    ],
)
def test_what_is_not_a_tree_of_json_values_is_written_as_before(document):
    assert outcome(lambda: yaml_text(document)) == outcome(lambda: dumped(document))


def test_a_document_deeper_than_the_events_go_is_written_as_before():
    document: Any = "tip"
    for _ in range(150):
        document = {"a": [document]}
    assert yaml_text(document) == dumped(document)
