"""PyYAML's two readers, made to read manifests alike: libyaml's where it reads as PyYAML's does.

Both construct with the same constructors (``_read_as_kubectl``): timestamps stay the text
written, ``!!binary`` is its text, sets, ordered maps and pairs are the maps and lists they are
written as, a value that cannot be constructed is a YAMLError with its line, and so is a
mapping that sets a key twice (``DuplicateKeyError``: ``key "x" already set in map``, go-yaml's
words; a key merged in with ``<<`` may be set again).

``PureLoader`` is PyYAML's pure-Python reader (its scanner in linear time:
``yaml_scanning.LinearSimpleKeys``); its composer counts what aliases expand to, as
kubectl's reader (go-yaml) does, and refuses an anchor inside its own value and "excessive
aliasing". It is the reference: its results and its error messages are the ones the readers give.

``fast_documents`` reads with libyaml (``CSafeLoader``: 0.2 s instead of 1.8 s for 5,000
InferenceServices) and answers None for a text it cannot vouch for, which the caller then reads
with ``PureLoader``:

- any error at all (libyaml words its errors differently, and stops at 1,000 levels of
  nesting where an API server stores 10,000): ``PureLoader`` says what is wrong, in its words;
- a text of the kinds on which the two scanners were found to differ, comparing them on
  generated texts (``tests/fuzz/test_yaml_loaders.py``): any tab (libyaml takes one as a
  separator in places where PyYAML refuses it), any byte order mark (libyaml skips one at
  the start of any line, PyYAML only at the start of the stream), a block scalar's indicator
  followed by ``#`` (``|#``: libyaml reads a comment, PyYAML refuses it), and a ``?`` in a
  text with a flow collection (in ``[a?b]`` PyYAML ends the plain scalar, libyaml does not);
- a document whose aliases ``PureLoader`` refuses, counted on libyaml's node graph (where an
  alias is the anchored node met again), only when the text has both ``&`` and ``*``.

The one difference found in what both read, an empty node tagged ``!`` (PyYAML resolves it as
a plain scalar, null; libyaml as a string), ``FastLoader.resolve`` resolves as PyYAML does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from ome_operator.cluster.yaml_scanning import LinearSimpleKeys

__all__ = ["DuplicateKeyError", "PureLoader", "excessive_aliasing", "fast_documents"]

#: libyaml's reader, where PyYAML was built with it.
_C_LOADER: Any = getattr(yaml, "CSafeLoader", None)
#: Texts the two scanners read differently (see the module docstring).
_DIVERGENT = re.compile(r"[\t\ufeff]|[|>][-+0-9]*#")
_FLOW_START = re.compile(r"[\[{]")


class DuplicateKeyError(ConstructorError):
    """A mapping that sets a key twice (as kubectl's reader, go-yaml, refuses it): two
    documents written one after the other without ``---`` between them are one such."""

    def __init__(self, key: Any, mark: Any) -> None:
        super().__init__(None, None, f"key {_shown_key(key)} already set in map", mark)
        self.key = key


def _shown_key(key: Any) -> str:
    return json.dumps(key if isinstance(key, str) else str(key), ensure_ascii=False)


class _Constructing:
    """What both readers construct differently from PyYAML's safe loader."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A mapping whose keys are written once each (merged keys, ``<<``, may be set
        again: that is what merging is for)."""
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue
                key = self.construct_object(key_node)  # type: ignore[attr-defined]
                if key in seen:
                    raise DuplicateKeyError(key, key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)  # type: ignore[misc]

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except (yaml.YAMLError, RecursionError):
            raise
        except Exception as exc:  # PyYAML's constructors raise ValueError, KeyError, ...
            tag = node.tag.rpartition(":")[2]
            raise ConstructorError(
                None, None, f"cannot read {_shown_scalar(node)} as {tag}", node.start_mark
            ) from exc

    def _binary_text(self, node: Any) -> str:
        """``!!binary`` as kubectl reads it: the decoded bytes as text."""
        return self.construct_yaml_binary(node).decode("utf-8", "replace")  # type: ignore[attr-defined]


def _shown_scalar(node: Any) -> str:
    text = node.value if isinstance(node.value, str) else ""
    return json.dumps(text if len(text) <= 40 else text[:37] + "...", ensure_ascii=False)


def _read_as_kubectl(loader: Any) -> None:
    """As kubectl's reader: timestamps stay the text written; sets, ordered maps and pairs are
    the maps and lists they are written as (PyYAML's Python sets and tuples have no JSON form)."""
    loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
    loader.add_constructor("tag:yaml.org,2002:set", yaml.SafeLoader.construct_yaml_map)
    loader.add_constructor("tag:yaml.org,2002:omap", yaml.SafeLoader.construct_yaml_seq)
    loader.add_constructor("tag:yaml.org,2002:pairs", yaml.SafeLoader.construct_yaml_seq)
    loader.add_constructor("tag:yaml.org,2002:binary", _Constructing._binary_text)


class PureLoader(_Constructing, LinearSimpleKeys, yaml.SafeLoader):
    """PyYAML's pure-Python reader, composing aliases as kubectl's reader (go-yaml) does."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._open_anchors: set[str] = set()
        self._anchor_sizes: dict[str, int] = {}
        self._sizes: list[int] = [0]
        self._aliased = 0

    def compose_document(self) -> Any:
        self._anchor_sizes, self._sizes, self._aliased = {}, [0], 0
        node = super().compose_document()
        if excessive_aliasing(self._aliased, self._sizes[0]):
            raise ComposerError(None, None, "document contains excessive aliasing", node.start_mark)
        return node

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Count the nodes the document holds with its aliases expanded (go-yaml's decode
        count); an alias of an anchor still being composed is an error, not a cycle."""
        event = self.peek_event()
        anchor = event.anchor
        if isinstance(event, yaml.AliasEvent):
            if anchor in self._open_anchors:
                raise ComposerError(
                    None, None, f"anchor {anchor!r} value contains itself", event.start_mark
                )
            node = super().compose_node(parent, index)
            size = self._anchor_sizes[anchor]
            self._aliased += size
            self._sizes[-1] += 1 + size
            return node
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._sizes.append(0)
        node = super().compose_node(parent, index)
        size = 1 + self._sizes.pop()
        self._sizes[-1] += size
        if anchor is not None:
            self._open_anchors.discard(anchor)
            self._anchor_sizes[anchor] = size
        return node


_read_as_kubectl(PureLoader)


def excessive_aliasing(aliased: int, decoded: int) -> bool:
    """go-yaml's rule: past 100 aliased of 1,000 nodes, at most 99% of a document may come
    from aliases up to 400,000 nodes, falling to 10% at 4,000,000."""
    if aliased <= 100 or decoded <= 1000:
        return False
    low, high = 400_000, 4_000_000
    allowed = 0.99 - 0.89 * (min(max(decoded, low), high) - low) / (high - low)
    return aliased / decoded > allowed


if _C_LOADER is not None:

    class FastLoader(_Constructing, _C_LOADER):  # type: ignore[misc, valid-type]
        """libyaml's reader, resolving tags as ``PureLoader`` does."""

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            """libyaml gives an empty node tagged ``!`` no implicit flag; PyYAML resolves
            every ``!`` node as plain."""
            if kind is yaml.ScalarNode and implicit == (False, False):
                implicit = (True, False)
            return super().resolve(kind, value, implicit)

    _read_as_kubectl(FastLoader)


def fast_documents(text: str) -> list[Any] | None:
    """Every document of ``text`` as ``PureLoader`` reads it, read by libyaml; None when
    libyaml is not there or the text is one to read with ``PureLoader`` (module docstring)."""
    if _C_LOADER is None or _DIVERGENT.search(text) or _flow_question(text):
        return None
    aliases = "&" in text and "*" in text
    documents = []
    try:
        loader = FastLoader(text)
        while loader.check_node():
            node = loader.get_node()
            if aliases and _refused_aliasing(node):
                return None
            documents.append(loader.construct_document(node))
    except Exception:  # whatever libyaml does not read, PureLoader words the error
        return None
    return documents


def _flow_question(text: str) -> bool:
    return "?" in text and _FLOW_START.search(text) is not None


def _refused_aliasing(root: Any) -> bool:
    """Whether ``PureLoader`` refuses the aliases of the document ``root`` (libyaml's graph):
    an anchored node met again inside itself, or excessive aliasing. A node met again is an
    alias, counted as 1 plus the nodes of its anchor's value. A loop: any depth is safe."""
    sizes: dict[int, int] = {}  # id of a node met: the nodes it holds, aliases expanded
    aliased = 0
    open_nodes = {id(root)}
    stack: list[list[Any]] = [[root, _children(root), 1]]
    while stack:
        frame = stack[-1]
        child = next(frame[1], None)
        if child is None:
            stack.pop()
            open_nodes.discard(id(frame[0]))
            sizes[id(frame[0])] = frame[2]
            if stack:
                stack[-1][2] += frame[2]
        elif id(child) in open_nodes:
            return True
        elif id(child) in sizes:
            aliased += sizes[id(child)]
            frame[2] += 1 + sizes[id(child)]
        elif isinstance(child, yaml.ScalarNode):
            sizes[id(child)] = 1
            frame[2] += 1
        else:
            open_nodes.add(id(child))
            stack.append([child, _children(child), 1])
    return excessive_aliasing(aliased, sizes[id(root)])


def _children(node: Any) -> Iterator[Any]:
    """A node's children in document order: each key, then its value."""
    if isinstance(node, yaml.MappingNode):
        return (child for pair in node.value for child in pair)
    if isinstance(node, yaml.SequenceNode):
        return iter(node.value)
    return iter(())
