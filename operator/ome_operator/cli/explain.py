"""``kubectl ome runtime explain`` (S12): why each runtime would or would not be selected.

Collection goes through an ObjectReader (a cluster or ``-f`` manifests alike); the rows come
from the same selection core the controller and the webhook run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TextIO

import yaml

from ..cluster.fetching import read_model, read_runtimes
from ..cluster.objects import ObjectReader
from ..cluster.resources import INFERENCE_SERVICE
from ..core.selection import RuntimeCatalog, Selection, explain_priority, explain_weight
from ..core.selection import select_runtime as run_selection
from ..models import InferenceService, from_manifest
from .commands import UsageError
from .effective import context_rows
from .tables import format_explain_table, format_table

__all__ = ["OUTPUTS", "ExplainRequest", "explain_document", "explain_rows", "run_explain"]

_EXPLICIT_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."
_NO_RUNTIMES = "No serving runtimes found in the selected namespace or at cluster scope."
_NO_RUNTIMES_FOR_SELECTOR = "No serving runtimes found for selector."
_CONTEXT_TITLE = "Effective context (separate observation; selector verdict unchanged):"


#: ``-o`` values: the S12 table, or every row as one document (reasons unwrapped).
OUTPUTS = ("table", "json", "yaml")
API_VERSION = "cli.ome.io/v1alpha1"


@dataclass(frozen=True)
class ExplainRequest:
    model: str | None = None
    isvc: str | None = None
    ome_namespace: str = "ome"
    with_effective: bool = False
    output: str = "table"

    def validate(self) -> None:
        """S12.3 argument errors."""
        if (self.model is None) == (self.isvc is None):
            raise UsageError("exactly one of --model or --isvc is required")
        if self.with_effective and self.isvc is None:
            raise UsageError("--with-effective requires --isvc")
        if self.output not in OUTPUTS:
            raise UsageError(
                f'unknown output format "{self.output}": use one of {", ".join(OUTPUTS)}'
            )
        if self.with_effective and self.output != "table":
            raise UsageError("--with-effective prints a table: it cannot be used with -o")


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


def explain_document(
    selection: Selection | None, model: str, isvc: str | None, namespace: str
) -> dict[str, Any]:
    """Every row of the table as data: ``compatible``, ``priority`` and ``weight`` as values
    (null where the table shows ``-``), the whole reason."""
    runtimes = []
    for verdict in selection.verdicts if selection is not None else ():
        match = verdict.first_match if verdict.qualifies else None
        runtimes.append(
            {
                "name": verdict.runtime.name,
                "scope": "Cluster" if verdict.runtime.is_cluster else "Namespaced",
                "compatible": verdict.qualifies,
                "priority": explain_priority(match) if match is not None else None,
                "weight": explain_weight(match) if match is not None else None,
                "reason": None if verdict.qualifies else verdict.reason,
            }
        )
    return {
        "apiVersion": API_VERSION,
        "kind": "RuntimeExplanation",
        "namespace": namespace,
        "model": model,
        "inferenceService": isvc,
        "runtimes": runtimes,
    }


def _formatted(document: dict[str, Any], output: str) -> str:
    if output == "json":
        return json.dumps(document, indent=2) + "\n"
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


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
    selection = None
    if len(catalog) == 0:
        print(_NO_RUNTIMES_FOR_SELECTOR if request.with_effective else _NO_RUNTIMES, file=stderr)
    else:
        selection = run_selection(model.spec, model.name, isvc, catalog, namespace)
    if request.output != "table":
        document = explain_document(selection, model.name, request.isvc, namespace)
        stdout.write(_formatted(document, request.output))
        return
    if selection is not None:
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
