"""Reading an AdmissionReview's body before kopf sees it: JSON, nested no deeper than an API
server sends, and shaped as the fields kopf reads (docs/webhook.md, "What the webhook refuses
to read").

kopf indexes the review as it finds it: a body that is not JSON, has no ``request``, or holds a
string where an object goes failed with a traceback (a 500, which the API server reports as the
webhook failing). Here every such body is a ``MalformedReview`` naming the field and what was
found, which the server answers with 400 and that sentence.

Depth: an API server stores objects nested up to ``MAX_DOCUMENT_NESTING`` levels, and a review
carries the object two levels down (``request.object``), so a review may nest
``MAX_REVIEW_NESTING`` levels. One nested deeper is never decoded (decoding recurses): its
envelope (the first two levels, everything deeper cut out) is read instead, and a readable
``request.uid`` makes it a ``TooDeepReview`` the server denies in an AdmissionReview; otherwise it
is a ``MalformedReview``. The depth is counted only when the body holds more brackets than the
limit, which a review of an ordinary object never does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..cluster.decoding import MAX_DOCUMENT_NESTING, DocumentError, decode_json
from ..models.base import field_path, shown

__all__ = [
    "MAX_REVIEW_NESTING",
    "MalformedReview",
    "TooDeepReview",
    "read_review",
]

#: Levels a review may nest: the deepest object an API server stores, two levels down.
MAX_REVIEW_NESTING = MAX_DOCUMENT_NESTING + 2
#: Levels of the envelope read from a review nested too deep: the review and its ``request``.
_ENVELOPE_LEVELS = 2
#: A JSON string (skipped whole: brackets in it do not nest) or a bracket.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")


class MalformedReview(ValueError):
    """A body that is not an AdmissionReview kopf can read: where (``path``, empty for the body
    itself) and what is wrong."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"the AdmissionReview {problem}" if not path else f"{path}: {problem}")
        self.path = path
        self.problem = problem


class TooDeepReview(ValueError):
    """A review nested deeper than ``MAX_REVIEW_NESTING`` whose envelope names its ``uid``: it is
    answered (denied) rather than refused."""

    def __init__(self, envelope: dict[str, Any], limit: int) -> None:
        super().__init__(_too_deep(limit))
        self.envelope = envelope
        self.limit = limit


def read_review(body: bytes, limit: int = MAX_REVIEW_NESTING) -> dict[str, Any]:
    """The review ``body`` holds, checked as kopf reads it; MalformedReview or TooDeepReview."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedReview("", f"is not JSON: invalid UTF-8 at byte {exc.start}") from None
    if body.count(b"{") + body.count(b"[") > limit:
        envelope = _envelope_if_too_deep(body, limit)
        if envelope is not None:
            raise TooDeepReview(envelope, limit)
    try:
        review = decode_json(text)
    except DocumentError as exc:  # deeper than any limit decoding allows: counted above
        raise MalformedReview("", str(exc)) from None
    except ValueError as exc:
        raise MalformedReview("", f"is not JSON: {exc}") from None
    _check_review(review)
    return review


def _too_deep(limit: int) -> str:
    return f"the AdmissionReview is nested more than {limit} levels deep (the limit is {limit})"


def _envelope_if_too_deep(body: bytes, limit: int) -> dict[str, Any] | None:
    """None when ``body`` nests at most ``limit`` levels; else the review's first levels (a
    TooDeepReview's envelope), or MalformedReview when they do not name a ``request.uid``."""
    depth = deepest = 0
    kept: list[bytes] = []
    start = cut = 0  # the envelope's text runs up to ``cut``; ``start`` opens a cut-out value
    for token in _TOKEN.finditer(body):
        char = token.group()[0]
        if char in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
            if depth == _ENVELOPE_LEVELS + 1:
                start = token.start()
        elif char != ord('"'):
            if depth == _ENVELOPE_LEVELS + 1:
                kept += [body[cut:start], b"null"]
                cut = token.end()
            depth -= 1
    if deepest <= limit:
        return None
    try:
        envelope = json.loads(b"".join([*kept, body[cut:]]))
    except ValueError:
        envelope = None
    request = envelope.get("request") if isinstance(envelope, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
        raise MalformedReview("", _too_deep(limit).removeprefix("the AdmissionReview "))
    return envelope


# --- the shape kopf reads --------------------------------------------------------------------


def _require(holds: bool, path: tuple[Any, ...], expected: str, value: Any) -> None:
    if not holds:
        raise MalformedReview(field_path(path), f"must be {expected} (got {shown(value)})")


def _required(mapping: dict[str, Any], path: tuple[Any, ...]) -> Any:
    if mapping.get(path[-1]) is None:
        raise MalformedReview(field_path(path), "is required but not set")
    return mapping[path[-1]]


def _optional_strings(mapping: dict[str, Any], path: tuple[Any, ...], *names: str) -> None:
    for name in names:
        value = mapping.get(name)
        _require(value is None or isinstance(value, str), (*path, name), "a string", value)


def _check_review(review: Any) -> None:
    if not isinstance(review, dict):
        raise MalformedReview("", f"must be an object (got {shown(review)})")
    _optional_strings(review, (), "apiVersion", "kind")
    request = _required(review, ("request",))
    _require(isinstance(request, dict), ("request",), "an object", request)
    for name in ("uid", "operation"):
        value = _required(request, ("request", name))
        _require(isinstance(value, str), ("request", name), "a string", value)
    _optional_strings(request, ("request",), "subResource", "name", "namespace")
    dry_run = request.get("dryRun")
    _require(
        dry_run is None or isinstance(dry_run, bool), ("request", "dryRun"), "a boolean", dry_run
    )
    resource = _required(request, ("request", "resource"))
    _require(isinstance(resource, dict), ("request", "resource"), "an object", resource)
    for name in ("group", "version", "resource"):
        value = resource.get(name)
        _require(isinstance(value, str), ("request", "resource", name), "a string", value)
    user = _required(request, ("request", "userInfo"))
    _require(isinstance(user, dict), ("request", "userInfo"), "an object", user)
    for name in ("object", "oldObject"):
        _check_object(request.get(name), ("request", name))
    if request.get("object") is None and request.get("oldObject") is None:
        raise MalformedReview("request.object", "is required but not set (nor is oldObject)")


def _check_object(obj: Any, path: tuple[Any, ...]) -> None:
    """An object kopf and the handlers take apart: a mapping, its metadata a mapping."""
    if obj is None:
        return
    _require(isinstance(obj, dict), path, "an object or null", obj)
    meta = obj.get("metadata")
    if meta is None:
        return
    _require(isinstance(meta, dict), (*path, "metadata"), "an object", meta)
    _optional_strings(meta, (*path, "metadata"), "uid", "name", "namespace")
