"""YAML output: the text ``yaml.dump(document, sort_keys=False)`` writes with the safe dumper.

PyYAML's dumper represents every value as a node, then serializes the nodes, calling back into
Python twice per scalar to resolve its tag; on the render report of 5,000 InferenceServices that
took 8 of the 12 s the command ran (and the cyclic collector walked the millions of nodes while
they lived). ``yaml_text`` hands libyaml's emitter the events that dumper would give it, straight
from the tree of JSON values: one event per collection kind, reused, and one per distinct string
(a report repeats its strings), resolved once; 1.1 s on that report, the same text byte for byte.

What is not a tree of JSON values is written by PyYAML's dumper itself, as before: a map or list
met twice (it writes anchors and aliases), any other type (it writes some, refuses the rest),
anything nested deeper than ``_MAX_LEVELS``; and everything, where PyYAML has no libyaml.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

__all__ = ["yaml_text"]

#: libyaml's emitter where PyYAML was built with it, else the pure-Python one.
_C_DUMPER: Any = getattr(yaml, "CSafeDumper", None)
_DUMPER: Any = _C_DUMPER or yaml.SafeDumper
#: Levels of maps and lists the events go down; deeper, PyYAML's dumper decides.
_MAX_LEVELS = 100
_TAG = "tag:yaml.org,2002:"
_MAP_START = MappingStartEvent(None, _TAG + "map", True, flow_style=False)
_SEQ_START = SequenceStartEvent(None, _TAG + "seq", True, flow_style=False)
_MAP_END, _SEQ_END = MappingEndEvent(), SequenceEndEvent()


def yaml_text(document: Any, *, allow_unicode: bool = True) -> str:
    """``document`` as YAML, keys in their order."""
    if _C_DUMPER is not None:
        try:
            return _emitted(document, allow_unicode)
        except _NotATree:
            pass
    return yaml.dump(document, Dumper=_DUMPER, sort_keys=False, allow_unicode=allow_unicode)


class _NotATree(Exception):
    """A value the events do not say as PyYAML's representer would: its dumper writes it."""


def _emitted(document: Any, allow_unicode: bool) -> str:
    stream = io.StringIO()
    dumper = _C_DUMPER(
        stream, default_flow_style=False, allow_unicode=allow_unicode, sort_keys=False
    )
    try:
        dumper.open()
        dumper.emit(DocumentStartEvent(explicit=False))
        _Events(dumper).emit(document, 1)
        dumper.emit(DocumentEndEvent(explicit=False))
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()


class _Events:
    """The events of one document, emitted as ``dumper.serialize`` emits a represented one."""

    def __init__(self, dumper: Any) -> None:
        self._emit: Callable[[Any], None] = dumper.emit
        self._dumper = dumper
        self._strings: dict[str, ScalarEvent] = {}
        self._met: set[int] = set()

    def emit(self, value: Any, level: int) -> None:
        kind = type(value)
        if kind is str:
            event = self._strings.get(value)
            if event is None:
                event = self._strings[value] = self._scalar(_TAG + "str", value)
            self._emit(event)
        elif kind is dict or kind is list:
            if id(value) in self._met or level > _MAX_LEVELS:
                raise _NotATree
            self._met.add(id(value))
            if kind is dict:
                self._emit(_MAP_START)
                for key, item in value.items():
                    self.emit(key, level + 1)
                    self.emit(item, level + 1)
                self._emit(_MAP_END)
            else:
                self._emit(_SEQ_START)
                for item in value:
                    self.emit(item, level + 1)
                self._emit(_SEQ_END)
        else:
            self._emit(self._other_scalar(value, kind))

    def _other_scalar(self, value: Any, kind: type) -> ScalarEvent:
        """A boolean, integer, float or null as SafeRepresenter writes it."""
        if kind is bool:
            return self._scalar(_TAG + "bool", "true" if value else "false")
        if kind is int:
            return self._scalar(_TAG + "int", str(value))
        if kind is float:
            node = self._dumper.represent_float(value)
            return self._scalar(node.tag, node.value)
        if value is None:
            return self._scalar(_TAG + "null", "null")
        raise _NotATree

    def _scalar(self, tag: str, text: str) -> ScalarEvent:
        """The event of a scalar: plain when the text resolves to its tag, as serialize does."""
        resolve = self._dumper.resolve
        implicit = (
            resolve(yaml.ScalarNode, text, (True, False)) == tag,
            resolve(yaml.ScalarNode, text, (False, True)) == tag,
        )
        return ScalarEvent(None, tag, implicit, text)
