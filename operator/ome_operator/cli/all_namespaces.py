"""``kubectl ome runtime explain --isvc NAME -A``: every InferenceService NAME, namespace by
namespace.

The InferenceServices are listed once across namespaces through the same ObjectReader (a
cluster or ``-f`` manifests), at most 1,000 like the runtimes (docs/reference/cli.md, Inputs);
each namespace that has one named NAME is then explained as ``-n <namespace>`` explains it, in
namespace order: a table after a ``Namespace: <namespace>`` line, or one item of a
``RuntimeExplanationList`` (``-o name`` prints every namespace's runtimes in turn;
``--no-headers`` leaves out the tables' headers, not the ``Namespace:`` lines).

A namespace that cannot be explained (its model missing, a malformed runtime...) does not stop
the others: its error prints last on stderr as ``error: namespace "<namespace>": <message>``
and the command exits 1. Notes name their namespace the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ..cluster.fetching import CLI_COLLECTION_LIMIT
from ..cluster.objects import INFERENCE_SERVICE, ObjectReader, ReadError, TooManyObjectsError
from ..core.selection import SelectionError
from ..models import InvalidResourceError, from_manifest
from ..models.object_metadata import metadata_of
from .commands import UsageError
from .explain import (
    API_VERSION,
    Explained,
    ExplainRequest,
    explain,
    explanation_text,
    formatted,
    require_model,
)

__all__ = ["NoInferenceServiceError", "explain_all_namespaces", "named_everywhere"]

_PAGE_SIZE = 500
_TOO_MANY = "InferenceService list across namespaces exceeds the CLI collection limit"
#: What one namespace can fail with; anything else stops the command.
_NAMESPACE_ERRORS = (ReadError, InvalidResourceError, SelectionError, UsageError)


class NoInferenceServiceError(ReadError):
    """No namespace has an InferenceService of that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f'no InferenceService named "{name}" in any namespace')
        self.name = name


def named_everywhere(reader: ObjectReader, name: str) -> list[tuple[str, dict[str, Any]]]:
    """``(namespace, manifest)`` of every InferenceService ``name``, by namespace."""
    try:
        found = reader.list(
            INFERENCE_SERVICE, None, page_size=_PAGE_SIZE, limit=CLI_COLLECTION_LIMIT
        )
    except TooManyObjectsError as exc:
        raise TooManyObjectsError(
            _TOO_MANY, resource=exc.resource, limit=CLI_COLLECTION_LIMIT
        ) from None
    named = []
    for obj in found:
        meta = metadata_of(obj)
        if meta.get("name") == name:
            named.append((str(meta.get("namespace") or ""), obj))
    if not named:
        raise NoInferenceServiceError(name)
    return sorted(named, key=lambda pair: pair[0])


def explain_all_namespaces(
    request: ExplainRequest, reader: ObjectReader, stdout: TextIO, stderr: TextIO
) -> int:
    """Print every namespace's explanation; 1 when some namespace could not be explained."""
    name = request.isvc or ""
    explained: list[tuple[Explained, str]] = []
    errors = []
    for namespace, manifest in named_everywhere(reader, name):
        note = _namespace_note(namespace, stderr)
        try:
            isvc = require_model(from_manifest(manifest), name)
            one = explain(request, reader, namespace, isvc, note)
            text = explanation_text(one, reader) if request.tabular else ""
        except _NAMESPACE_ERRORS as exc:
            errors.append(f'error: namespace "{namespace}": {exc}')
            continue
        explained.append((one, text))
    if request.tabular:
        stdout.write("\n".join(f"Namespace: {one.namespace}\n{text}" for one, text in explained))
    else:
        items = [one.document() for one, _ in explained]
        document = {"apiVersion": API_VERSION, "kind": "RuntimeExplanationList", "items": items}
        stdout.write(formatted(document, request.format))
    for error in errors:
        print(error, file=stderr)
    return 1 if errors else 0


def _namespace_note(namespace: str, stderr: TextIO) -> Callable[[str], None]:
    return lambda text: print(f'namespace "{namespace}": {text}', file=stderr)
