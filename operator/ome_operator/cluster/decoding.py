"""Turning decoded YAML and JSON into what an API server holds: JSON values, checked.

Deep documents: an API server stores objects nested up to 10,000 levels (``encoding/json``'s
limit; preserved fields of a custom resource), so ``kubectl get -o yaml`` can print one that
deep. The readers decode up to ``MAX_DOCUMENT_NESTING`` levels, and the models then refuse an
ome.io object nested over ``models.limits.MAX_NESTING`` with the path where it goes over, as
for any bad field; a document nested deeper still is ``document N is nested more than 10000
levels deep``. Measured on CPython 3.11 here, 10,000 levels of ``[`` or ``{``:

- PyYAML's pure-Python loader takes 2 frames a level (3 with ``yaml_loading.PureLoader``'s
  composer), and since 3.11 calls Python functions without C recursion it needs no C stack to
  speak of: the 10,000 levels load in a thread with a 256 KiB stack. Block style (``- - - x``,
  as kubectl writes) takes 0.3 s; flow style (``[[[x]]]`` on one line) 11 s, PyYAML's
  bookkeeping of possible keys being quadratic up to 1,024 characters a line. libyaml's
  ``CSafeLoader`` (9x faster on a large manifest) stops at 1,000 levels ("exceeded maximum
  nesting depth"): it reads a text only where it reads it as the pure-Python loader does
  (``yaml_loading.fast_documents``), and the pure-Python loader reads every other text, the
  deep ones among them, and words every error.
- The C JSON decoder takes a frame and about 150 bytes of C stack a level: 10,000 levels
  need 2 MiB (a thread with 1 MiB crashes with SIGSEGV, not a RecursionError). So JSON is
  decoded by it only within the interpreter's own recursion limit (as any ``json.loads``);
  a deeper document is decoded again by the pure-Python JSON scanner (2 frames a level, no C
  recursion; 0.03 s for 10,000 levels).

Only around those pure-Python decoders is the recursion limit raised, by what 10,000 levels
take; the walk that turns the result into JSON values is a loop, and counts the depth exactly.
YAML aliases are expanded as kubectl expands them: an anchor inside its own value and
"excessive aliasing" (go-yaml's rule, kept from kubectl's reader) are errors, so no alias
bomb reaches anything that walks the objects.
"""

import contextlib
import json
import json.scanner
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

import yaml

from ome_operator.cluster.yaml_loading import DuplicateKeyError, PureLoader, fast_documents
from ome_operator.models.base import field_path, shown

__all__ = [
    "MAX_DOCUMENT_NESTING",
    "DocumentError",
    "DuplicateKeyJSONError",
    "StreamError",
    "checked_identity",
    "checked_object",
    "decode_json",
    "json_tree",
    "yaml_documents",
    "yaml_problem",
]

#: Levels of maps and lists a document may have: what an API server accepts.
MAX_DOCUMENT_NESTING = 10_000
#: Interpreter frames a level of nesting takes in this module's YAML composer and in the
#: pure-Python JSON scanner, and the levels of margin the raised limit adds (the exact limit
#: is counted by ``json_tree``).
_YAML_FRAMES, _JSON_FRAMES, _MARGIN = 3, 2, 100
#: The integers an API server stores as integers (int64).
_INT_RANGE = range(-(2**63), 2**63)
_SURROGATES = re.compile("[\ud800-\udfff]")


class DocumentError(ValueError):
    """A decoded document that is not what an API server holds: ``path`` (empty for the
    document itself) and what is wrong there."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem

    def where(self, document: str) -> str:
        """The sentence for ``document``: ``<document> <problem>``, or with the path
        ``<document>: <path>: <problem>``."""
        return f"{document}: {self}" if self.path else f"{document} {self.problem}"


class StreamError(ValueError):
    """A YAML stream that cannot be read: ``problem``, in ``document`` (1-based; None when
    the reader's message gives the line instead)."""

    def __init__(self, problem: str, document: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.document = document


def yaml_documents(text: str) -> list[Any]:
    """Every document of a YAML stream, decoded up to ``MAX_DOCUMENT_NESTING`` levels (the
    result still to be checked by ``json_tree``); StreamError when it cannot be read."""
    fast = fast_documents(text)
    if fast is not None:
        return fast
    documents: list[Any] = []
    try:
        loader = PureLoader(text)  # the reader refuses unprintable characters at once
        with _raised_recursion_limit(_YAML_FRAMES):
            while loader.check_data():
                documents.append(loader.get_data())
    except DuplicateKeyError as exc:
        raise StreamError(yaml_problem(exc), len(documents) + 1) from None
    except yaml.YAMLError as exc:
        raise StreamError(yaml_problem(exc)) from None
    except RecursionError:
        raise StreamError(_too_deep(), len(documents) + 1) from None
    return documents


def yaml_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"line {exc.problem_mark.line + 1}: {exc.problem}"
    return " ".join(str(exc).split())


def checked_object(document: Any) -> dict[str, Any]:
    """``document`` if it is an object of some kind (a mapping with string ``apiVersion`` and
    ``kind``), else DocumentError. ``document`` is a JSON tree (``json_tree``)."""
    if not isinstance(document, dict):
        raise DocumentError("", "is not a mapping")
    missing = [field for field in ("apiVersion", "kind") if document.get(field) in (None, "")]
    if missing:
        raise DocumentError("", f"has no {' or '.join(missing)}")
    for field in ("apiVersion", "kind"):
        _require(isinstance(document[field], str), field, "a string", document[field])
    return document


def checked_identity(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a ``checked_object``) if an API server could store it under its metadata:
    ``metadata`` a mapping, its ``name`` and ``namespace`` strings when set."""
    meta = obj.get("metadata")
    if meta is None:
        return obj
    _require(isinstance(meta, dict), "metadata", "an object", meta)
    for field in ("name", "namespace"):
        value = meta.get(field)
        _require(value is None or isinstance(value, str), f"metadata.{field}", "a string", value)
    return obj


def _require(holds: bool, path: str, expected: str, value: Any) -> None:
    if not holds:
        raise DocumentError(path, f"must be {expected} (got {shown(value)})")


def decode_json(text: str, *, unique_keys: bool = False) -> Any:
    """JSON ``text`` decoded up to ``MAX_DOCUMENT_NESTING`` levels (and a margin), or
    DocumentError when nested deeper still; another ValueError when it is not JSON, or with
    ``unique_keys`` when an object sets a key twice (``DuplicateKeyJSONError``: as kubectl's
    reader, which reads JSON as YAML, refuses it)."""
    hook = _unique_object if unique_keys else None
    try:
        return json.loads(text, object_pairs_hook=hook)
    except RecursionError:
        pass  # deeper than the C decoder may go on the C stack: see the module docstring
    decoder = json.JSONDecoder(object_pairs_hook=hook)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        with _raised_recursion_limit(_JSON_FRAMES):
            return decoder.decode(text)
    except RecursionError:
        raise DocumentError("", _too_deep()) from None


class DuplicateKeyJSONError(ValueError):
    """A JSON object that sets ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {json.dumps(key, ensure_ascii=False)} already set in map")
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyJSONError(key)
            seen.add(key)
    return found


@contextlib.contextmanager
def _raised_recursion_limit(frames_per_level: int) -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(previous + frames_per_level * (MAX_DOCUMENT_NESTING + _MARGIN))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _too_deep() -> str:
    return f"is nested more than {MAX_DOCUMENT_NESTING} levels deep"


def json_tree(value: Any) -> Any:
    """A new tree of the JSON values in ``value`` (shared parts copied, as YAML aliases are
    expanded), or DocumentError naming the first path, in document order, that an API server
    would not store. A loop: any depth is safe."""
    root: list[Any] = [None]
    # (value, container to put it in, its key there, its location as (parent, key) links)
    pending: list[tuple[Any, Any, Any, Any, int]] = [(value, root, 0, None, 1)]
    while pending:
        node, parent, slot, loc, depth = pending.pop()
        if isinstance(node, dict | list) and depth > MAX_DOCUMENT_NESTING:
            raise DocumentError("", _too_deep())
        if isinstance(node, dict):
            tree: Any = {}
            children = [(_key(key, loc), item) for key, item in node.items()]
            for key, _ in children:
                tree[key] = None
        elif isinstance(node, list):
            tree = [None] * len(node)
            children = list(enumerate(node))
        else:
            parent[slot] = _scalar(node, loc)
            continue
        parent[slot] = tree
        pending.extend((item, tree, key, (loc, key), depth + 1) for key, item in reversed(children))
    return root[0]


def _key(key: Any, loc: Any) -> str:
    """A map key as JSON has it: integer and boolean keys as kubectl writes them."""
    if isinstance(key, str):
        return _SURROGATES.sub("\ufffd", key)
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int) and key in _INT_RANGE:
        return str(key)
    raise DocumentError(_path(loc), f"map key {_scalar_text(key)} is not a string")


def _scalar(value: Any, loc: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        # What Go's decoder makes of a lone UTF-16 surrogate (``"\ud800"``): U+FFFD.
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, int):
        if value not in _INT_RANGE:
            raise DocumentError(
                _path(loc),
                f"must be an integer from {_INT_RANGE.start} to {_INT_RANGE.stop - 1} "
                f"(got {_scalar_text(value)})",
            )
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DocumentError(_path(loc), f"must be a finite number (got {json.dumps(value)})")
        return value
    raise DocumentError(_path(loc), f"is not a JSON value (got {type(value).__name__})")


def _scalar_text(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 256:
        return f"an integer of {value.bit_length()} bits"
    return json.dumps(value, default=str)


def _path(loc: Any) -> str:
    parts = []
    while loc is not None:
        loc, part = loc
        parts.append(part)
    return field_path(reversed(parts))
