"""kubectl's JSONPath templates (``-o jsonpath=<template>``), over the document ``-o json`` prints.

The path expressions are ``jsonpath_ng``'s (its ``ext`` parser, for ``?()`` filters); this
module is only the template layer kubectl puts around them
(https://kubernetes.io/docs/reference/kubectl/jsonpath/):

- text outside braces is printed as it is;
- ``{.path}`` prints what the path finds, several results separated by one space: strings as
  they are, numbers and booleans as JSON writes them, objects and lists as compact JSON; a
  path that finds nothing prints nothing (kubectl's ``--allow-missing-template-keys=true``);
  ``$`` and ``@`` at the start are optional, as in kubectl;
- ``{"text"}`` prints a quoted string, its escapes (``\\n``, ``\\t``...) decoded;
- ``{range .path}...{end}`` prints its body once for every result (a list result once for
  every element), ``@`` and relative paths then starting at that element; ranges nest.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["JSONPathError", "Template", "parse_template"]


class JSONPathError(ValueError):
    """A template that does not parse; kubectl's wording."""

    def __init__(self, template: str, reason: str) -> None:
        super().__init__(f"error parsing jsonpath {template}, {reason}")
        self.template = template
        self.reason = reason


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Path:
    source: str
    finder: Any  #: a ``jsonpath_ng`` expression, or None for the current object


@dataclass(frozen=True)
class _Range:
    path: _Path
    body: tuple[_Text | _Path | _Range, ...]


_Node = _Text | _Path | _Range


@dataclass(frozen=True)
class Template:
    """A parsed template; ``render(document)`` is the text kubectl would print."""

    source: str
    nodes: tuple[_Node, ...]

    def render(self, document: Any) -> str:
        try:
            return "".join(_render(self.nodes, document))
        except NotImplementedError:  # jsonpath_ng parses ``a & b`` but cannot evaluate it
            raise JSONPathError(self.source, "'&' (intersection) is not supported") from None


def parse_template(template: str) -> Template:
    """Parse ``template``; raises JSONPathError naming what is wrong."""
    stack: list[list[_Node]] = [[]]
    ranges: list[_Path] = []
    for kind, text in _actions(template):
        if kind == "text":
            stack[-1].append(_Text(text))
        elif text == "end":
            if not ranges:
                raise JSONPathError(template, "not in range, nothing to end")
            body = stack.pop()
            stack[-1].append(_Range(ranges.pop(), tuple(body)))
        elif text.startswith("range ") or text == "range":
            ranges.append(_path(template, text.removeprefix("range").strip()))
            stack.append([])
        elif text.startswith('"'):
            stack[-1].append(_Text(_quoted(template, text)))
        else:
            stack[-1].append(_path(template, text))
    if ranges:
        raise JSONPathError(template, "unclosed range: {end} is missing")
    return Template(template, tuple(stack[0]))


def _actions(template: str) -> Iterator[tuple[str, str]]:
    """``("text", ...)`` and ``("action", ...)`` pieces; a quoted ``}`` does not close."""
    i, text = 0, []
    while i < len(template):
        if template[i] != "{":
            text.append(template[i])
            i += 1
            continue
        if text:
            yield "text", "".join(text)
            text = []
        end, quoted = i + 1, False
        while end < len(template) and (quoted or template[end] != "}"):
            if template[end] == "\\" and quoted:
                end += 1
            elif template[end] == '"':
                quoted = not quoted
            end += 1
        if end >= len(template):
            raise JSONPathError(template, "unclosed action")
        yield "action", template[i + 1 : end].strip()
        i = end + 1
    if text:
        yield "text", "".join(text)


def _quoted(template: str, text: str) -> str:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise JSONPathError(template, f"invalid quoted text {text}") from None
    if not isinstance(value, str):
        raise JSONPathError(template, f"invalid quoted text {text}")
    return value


def _path(template: str, text: str) -> _Path:
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
    from jsonpath_ng.ext import parse

    if not text:
        raise JSONPathError(template, "empty expression")
    rest = text[1:] if text[0] in "$@" else text
    if not rest:
        return _Path(text, None)
    expression = "$" + rest if rest[0] in ".[" else "$." + rest
    try:
        with warnings.catch_warnings():  # ``&`` is deprecated there; render refuses it anyway
            warnings.simplefilter("ignore", DeprecationWarning)
            return _Path(text, parse(expression))
    except (JsonPathLexerError, JsonPathParserError) as exc:
        raise JSONPathError(template, f"invalid expression {text}: {exc}") from None


def _found(path: _Path, current: Any) -> list[Any]:
    if path.finder is None:
        return [current]
    return [match.value for match in path.finder.find(current)]


def _render(nodes: tuple[_Node, ...], current: Any) -> Iterator[str]:
    for node in nodes:
        if isinstance(node, _Text):
            yield node.text
        elif isinstance(node, _Path):
            yield " ".join(_printed(value) for value in _found(node, current))
        else:
            for value in _found(node.path, current):
                for element in value if isinstance(value, list) else [value]:
                    yield from _render(node.body, element)


def _printed(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))
