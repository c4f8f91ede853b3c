"""What the CLI reads for one decision, through any ``ObjectReader`` (a cluster or ``-f``
manifests alike), parsed: a model as lookups find it, and the runtime candidates
(docs/runtime-selection.md).

A runtime or model that does not parse is left out, as the operator leaves it out: the
operator's ``MalformedResource`` text (``<the parse error>; it is ignored until it changes``)
goes to ``warn`` as a ``Warning:`` line, and a model left out is not found.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..models import InvalidResourceError, ModelResource, ServingRuntime, from_manifest
from .objects import NotFoundError, ObjectReader, TooManyObjectsError
from .resources import BASE_MODEL, CLUSTER_BASE_MODEL, CLUSTER_SERVING_RUNTIME, SERVING_RUNTIME

__all__ = ["CLI_COLLECTION_LIMIT", "read_model", "read_runtimes", "set_aside_warning"]

#: The CLI reads runtimes in pages of 500 and refuses snapshots above this many.
CLI_COLLECTION_LIMIT = 1000
_PAGE_SIZE = 500
_TOO_MANY = "runtime candidate snapshot exceeds the CLI collection limit"


Warn = Callable[[str], None]


def set_aside_warning(problem: str) -> str:
    """The ``Warning:`` line for an object the operator sets aside: its event's text."""
    return f"Warning: {problem}; it is ignored until it changes"


def _parsed(obj: dict[str, Any], warn: Warn | None) -> Any:
    """The object's model, or None when it does not parse (``warn`` is told why)."""
    try:
        return from_manifest(obj)
    except InvalidResourceError as exc:
        if warn is not None:
            warn(set_aside_warning(str(exc)))
        return None


def read_model(
    reader: ObjectReader, namespace: str, name: str, warn: Warn | None = None
) -> ModelResource:
    """A BaseModel in the namespace, else the ClusterBaseModel (its NotFound text);
    one that does not parse is passed over, as if not there."""
    try:
        model = _parsed(reader.get(BASE_MODEL, namespace, name), warn)
    except NotFoundError:
        model = None
    if model is None:
        model = _parsed(reader.get(CLUSTER_BASE_MODEL, None, name), warn)
    if model is None:
        raise NotFoundError(CLUSTER_BASE_MODEL, name)
    return model


def read_runtimes(
    reader: ObjectReader, namespace: str, warn: Warn | None = None
) -> list[ServingRuntime]:
    """The namespace's ServingRuntimes and every ClusterServingRuntime that parse, at most
    1,000."""
    try:
        found = reader.list(
            SERVING_RUNTIME, namespace, page_size=_PAGE_SIZE, limit=CLI_COLLECTION_LIMIT
        )
        left = CLI_COLLECTION_LIMIT - len(found)
        found += reader.list(CLUSTER_SERVING_RUNTIME, None, page_size=_PAGE_SIZE, limit=left)
    except TooManyObjectsError as exc:
        raise TooManyObjectsError(
            _TOO_MANY, resource=exc.resource, limit=CLI_COLLECTION_LIMIT
        ) from None
    runtimes = [_parsed(obj, warn) for obj in found]
    return [r for r in runtimes if isinstance(r, ServingRuntime)]
