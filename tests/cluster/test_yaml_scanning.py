"""The pure-Python YAML reader scans in linear time (``yaml_scanning.LinearSimpleKeys``): a
deep flow document is read, and refused, without looking at every possible simple key before
every token, and the scanner still gives PyYAML's tokens and errors."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
import yaml.scanner

from ome_operator.cluster.decoding import yaml_documents
from ome_operator.cluster.yaml_loading import PureLoader


def flow(levels: int) -> str:
    """``levels`` flow sequences on one line (libyaml stops at 1,000: the pure-Python
    reader reads it)."""
    return "a: " + "[" * levels + "1" + "]" * levels + "\n"


class _CountingKey(yaml.scanner.SimpleKey):
    """A possible simple key that counts how often the scanner looks at it (its line is
    the first thing any look reads)."""

    looks = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "line":
            _CountingKey.looks += 1
        return object.__getattribute__(self, name)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(flow(3_000), id="3,000 flow levels on one line"),
        pytest.param(
            "#\t\n" + flow(800), id="800 flow levels that only the pure-Python reader reads"
        ),
        pytest.param("a: " + "{b: " * 3_000 + "1" + "}" * 3_000 + "\n", id="3,000 flow mappings"),
    ],
)
def test_the_scanner_looks_at_a_few_possible_keys_a_character_however_deep_the_text(
    monkeypatch, text: str
) -> None:
    # Counted, not timed: PyYAML's scanner looked at every possible key (up to one a
    # character for 1,024 characters) before every token, over 5,000 looks a character here.
    monkeypatch.setattr(yaml.scanner, "SimpleKey", _CountingKey)
    _CountingKey.looks = 0

    (document,) = yaml_documents(text)

    assert isinstance(document["a"], list | dict)
    assert _CountingKey.looks <= 10 * len(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(flow(1_200), id="deep flow sequences"),
        pytest.param("{a: [b, {c: d}],\n  e: f, g: [h,\n i]}\n", id="flow over several lines"),
        pytest.param("a: 1\nb\nc: 2\n", id="a key without its colon"),
        pytest.param("{a: 1, b\n: 2}\n", id="a flow key whose colon is on the next line"),
        pytest.param("a: [" + "x" * 1_100 + ": 1]\n", id="a flow key longer than 1,024"),
        pytest.param("? a\n: b\n[c, d]: e\n&x f: *x\n!!str g: h\n", id="complex keys and tags"),
        pytest.param("- " + "b" * 1_030 + ": 1\n", id="a block key longer than 1,024"),
    ],
)
def test_the_scanner_gives_pyyamls_tokens_and_errors(text: str) -> None:
    assert _scanned(text, PureLoader) == _scanned(text, yaml.SafeLoader)


def _scanned(text: str, loader: Any) -> list[str]:
    """Each token with where it starts and ends, then the error, if any, as its text."""
    found = []
    try:
        for token in yaml.scan(text, Loader=loader):
            start, end = token.start_mark, token.end_mark
            found.append(f"{token!r} {start.index}-{end.index}")
    except yaml.YAMLError as exc:
        found.append(str(exc))
    return found
