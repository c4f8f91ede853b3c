"""libyaml's reader reads what PyYAML's pure-Python reader reads, or leaves the text to it.

``fast_documents`` answers None for any text it does not vouch for, and the manifest readers then
read it with ``PureLoader``, whose results and messages are the reference; where it answers, the
documents are the same values of the same types. Checked on the fuzz suite's manifests and on
texts made of YAML's own tokens, which is how the divergences routed to ``PureLoader`` were found.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ome_operator.cluster.yaml_loading import PureLoader, fast_documents
from tests.fuzz.mutations import deep_enough, fuzz, manifest_sets, manifest_text

pytestmark = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml")

#: Pieces of YAML: indicators, scalars of every resolved type, tags, anchors and aliases,
#: directives, document markers, line breaks of every kind and characters either scanner
#: treats specially.
TOKENS = (
    *("a", "b", "xy", "1", "0x1f", "0o7", "0b1", "+1", "1.5", "-.5", "1e3", ".inf", "12:30"),
    *("true", "No", "on", "y", "null", "~", "2001-01-01", "aGVsbG8=", "é", "名", "🙂"),
    *(":", ": ", " ", "  ", "\n", "\n  ", "\n- ", "- ", "-", "- - ", "? ", "?", "=", "@", "`"),
    *("[", "]", "{", "}", ",", ", ", "'", '"', "\\", "\\n", "\\x41", "\\u00e9", "\\/", "\\ "),
    *("#", " #c", "&a ", "*a", "&b ", "*b", "<<: ", "<<", "|", ">", "|-", ">+", "|2", "%"),
    *("!!str ", "!!int ", "!!binary ", "!!set ", "!!omap ", "!!timestamp ", "!foo ", "!", "! "),
    *("!e!x ", "!<tag:yaml.org,2002:str> ", "---", "\n---\n", "...", "\n...\n"),
    *("%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "%TAG !e! tag:e,2000:\n", '"a b"', "'a''b'"),
    *("a: b\n", "  c: d\n", "? a\n: b\n", "\r\n", "\r", "\x85", "\u2028", "\u2029", "\t"),
    *("\ufeff", "\x00", "\x7f"),
)


def pure_documents(text: str) -> list[Any] | None:
    """The documents as ``PureLoader`` reads them; None when it refuses the text."""
    loader = PureLoader(text)
    documents = []
    try:
        with deep_enough():
            while loader.check_data():
                documents.append(loader.get_data())
    except (yaml.YAMLError, RecursionError):
        return None
    return documents


def assert_read_alike(text: str) -> None:
    fast = fast_documents(text)
    if fast is None:
        return
    pure = pure_documents(text)
    assert pure is not None, "libyaml read a text PyYAML refuses"
    with deep_enough():  # repr tells 1, 1.0, True and "1" apart, keys included
        assert repr(fast) == repr(pure)


@fuzz(300)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=30).map("".join))
def test_a_text_of_yaml_tokens_is_read_alike_or_left_to_pyyaml(text: str) -> None:
    assert_read_alike(text)


@fuzz(100)
@given(st.data())
def test_a_mutated_manifest_is_read_alike_or_left_to_pyyaml(data: st.DataObject) -> None:
    assert_read_alike(data.draw(manifest_text(data.draw(manifest_sets()))))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: [1,\t2]\n", id="a tab PyYAML refuses and libyaml skips"),
        pytest.param("a: 1\n\ufeffb: 2\n", id="a byte order mark inside the stream"),
        pytest.param("a: >#\n", id="a block scalar indicator followed by #"),
        pytest.param("[a?b]\n", id="a question mark in a flow collection"),
        pytest.param("[" * 1_001 + "]" * 1_001 + "\n", id="deeper than libyaml goes"),
        pytest.param("a: &a [*a]\n", id="an anchor inside its own value"),
        pytest.param(
            "a: &a [" + ", ".join(["x"] * 1_000) + "]\nb: [" + ", ".join(["*a"] * 200) + "]\n",
            id="excessive aliasing (99.4% of the nodes from aliases)",
        ),
        pytest.param("a: *b\n", id="an undefined alias"),
    ],
)
def test_a_text_libyaml_reads_differently_or_not_at_all_is_left_to_pyyaml(text: str) -> None:
    assert fast_documents(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a: !\nb: ! x\n", [{"a": None, "b": "x"}], id="an empty node tagged !"),
        pytest.param(
            "a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\ne: *x\n",
            [{"a": {"b": 1}, "c": {"b": 1, "d": 2}, "e": {"b": 1}}],
            id="aliases and merge keys",
        ),
        pytest.param(
            "t: 2001-01-01\nb: !!binary aGk=\ns: !!set {x}\n",
            [{"t": "2001-01-01", "b": "hi", "s": {"x": None}}],
            id="timestamps, binary and sets as kubectl reads them",
        ),
    ],
)
def test_libyaml_reads_what_pyyaml_reads(text: str, expected: list[Any]) -> None:
    assert fast_documents(text) == pure_documents(text) == expected
