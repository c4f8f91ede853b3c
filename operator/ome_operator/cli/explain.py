"""``kubectl ome runtime explain`` (S12): why each runtime would or would not be selected.

Collection goes through an ObjectReader (a cluster or ``-f`` manifests alike); the rows come
from the same selection core the controller and the webhook run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from ..cluster.fetching import read_model, read_runtimes
from ..cluster.objects import ObjectReader
from ..cluster.resources import INFERENCE_SERVICE
from ..core.selection import RuntimeCatalog, Selection, explain_priority, explain_weight
from ..core.selection import select_runtime as run_selection
from ..models import InferenceService, from_manifest
from .commands import UsageError
from .effective import context_rows
from .tables import format_explain_table, format_table

__all__ = ["ExplainRequest", "explain_rows", "run_explain"]

_EXPLICIT_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."
_NO_RUNTIMES = "No serving runtimes found in the selected namespace or at cluster scope."
_NO_RUNTIMES_FOR_SELECTOR = "No serving runtimes found for selector."
_CONTEXT_TITLE = "Effective context (separate observation; selector verdict unchanged):"


@dataclass(frozen=True)
class ExplainRequest:
    model: str | None = None
    isvc: str | None = None
    ome_namespace: str = "ome"
    with_effective: bool = False

    def validate(self) -> None:
        """S12.3 argument errors."""
        if (self.model is None) == (self.isvc is None):
            raise UsageError("exactly one of --model or --isvc is required")
        if self.with_effective and self.isvc is None:
            raise UsageError("--with-effective requires --isvc")


def explain_rows(selection: Selection) -> list[list[str]]:
    """S12.5/S12.6: Yes rows in rank order, then No rows (SRs, then CSRs, by name)."""
    rows = []
    for verdict in selection.verdicts:
        scope = "Cluster" if verdict.runtime.is_cluster else "Namespaced"
        if verdict.qualifies:
            match = verdict.first_match
            priority, weight = str(explain_priority(match)), str(explain_weight(match))
            rows.append([verdict.runtime.name, scope, "Yes", priority, weight, "-"])
        else:
            rows.append([verdict.runtime.name, scope, "No", "-", "-", verdict.reason])
    return rows


def run_explain(
    request: ExplainRequest,
    reader: ObjectReader,
    namespace: str,
    stdout: TextIO,
    stderr: TextIO,
    width: int,
) -> None:
    """Print the explain table (and the effective context); raises on any error."""
    request.validate()
    isvc = None
    model_name = request.model
    if request.isvc is not None:
        isvc = from_manifest(reader.get(INFERENCE_SERVICE, namespace, request.isvc))
        if isvc.spec.model is None:
            raise UsageError(
                f'InferenceService "{request.isvc}" has no spec.model; pass --model instead'
            )
        model_name = isvc.spec.model.name
    model = read_model(reader, namespace, model_name)
    if isvc is not None and isvc.spec.runtime is not None:
        print(_EXPLICIT_NOTE, file=stderr)
    catalog = RuntimeCatalog.of(read_runtimes(reader, namespace))
    if len(catalog) == 0:
        print(_NO_RUNTIMES_FOR_SELECTOR if request.with_effective else _NO_RUNTIMES, file=stderr)
    else:
        selection = run_selection(model.spec, model.name, isvc, catalog, namespace)
        stdout.write(format_explain_table(explain_rows(selection), width))
    if request.with_effective:
        if len(catalog):
            stdout.write("\n")
        stdout.write(_CONTEXT_TITLE + "\n")
        stdout.write(_effective_context(reader, namespace, isvc, request.ome_namespace))


def _effective_context(
    reader: ObjectReader, namespace: str, isvc: InferenceService, ome_namespace: str
) -> str:
    return format_table(
        ("SCOPE", "FIELD", "VALUE"), context_rows(reader, namespace, isvc, ome_namespace)
    )
