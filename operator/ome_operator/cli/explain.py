"""``kubectl ome runtime explain`` (docs/reference/cli.md): why each runtime would or would not
be selected.

Collection goes through an ObjectReader (a cluster or ``-f`` manifests alike); the rows come
from the same selection core the controller and the webhook run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..cluster.fetching import read_model, read_runtimes
from ..cluster.objects import ObjectReader
from ..cluster.resources import INFERENCE_SERVICE
from ..core.selection import RuntimeCatalog, Selection, explain_priority, explain_weight
from ..core.selection import select_runtime as run_selection
from ..models import InferenceService, from_manifest
from .commands import UsageError
from .output_formats import OutputFormat, object_name, parse_output, printed_document
from .tables import EXPLAIN_HEADERS, EXPLAIN_WIDE_HEADERS, format_table

__all__ = [
    "API_VERSION",
    "OUTPUTS",
    "TIE",
    "ExplainRequest",
    "Explained",
    "explain",
    "explain_document",
    "explain_rows",
    "explanation_text",
    "formatted",
    "read_isvc",
    "require_model",
    "run_explain",
]

_EXPLICIT_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."
_NO_RUNTIMES = "No serving runtimes found in the selected namespace or at cluster scope."
_NO_RUNTIMES_FOR_SELECTOR = "No serving runtimes found for selector."
_CONTEXT_TITLE = "Effective context (separate observation; selector verdict unchanged):"
_ALL_NAMESPACES_NEED_ISVC = (
    "--all-namespaces requires --isvc: a --model is explained in one namespace (-n)"
)


#: ``-o`` values: the table (``wide``: and a TIE column), or every row as one document.
OUTPUTS = ("table", "wide", "json", "yaml", "name", "jsonpath")
#: ``-o wide``'s TIE of each runtime only its name ranks (docs/changing-runtimes-safely.md).
TIE = "name decides"
API_VERSION = "cli.ome.io/v1alpha1"


@dataclass(frozen=True)
class ExplainRequest:
    model: str | None = None
    isvc: str | None = None
    ome_namespace: str = "ome"
    with_effective: bool = False
    output: str = "table"
    all_namespaces: bool = False  #: ``-A``: ``--isvc`` in every namespace that has one
    namespace_flag: str | None = None  #: ``-n`` as given (only checked against ``-A``)
    no_headers: bool = False  #: ``--no-headers``: tables without their header line

    def validate(self) -> None:
        """The argument errors (docs/reference/cli.md, Arguments)."""
        if (self.model is None) == (self.isvc is None):
            raise UsageError("exactly one of --model or --isvc is required")
        if self.with_effective and self.isvc is None:
            raise UsageError("--with-effective requires --isvc")
        if self.all_namespaces and self.isvc is None:
            raise UsageError(_ALL_NAMESPACES_NEED_ISVC)
        if self.all_namespaces and self.namespace_flag is not None:
            raise UsageError("--all-namespaces and --namespace cannot be used together")
        if self.with_effective and not self.format.tabular:
            raise UsageError("--with-effective prints a table: it cannot be used with -o")

    @property
    def format(self) -> OutputFormat:
        """``-o`` read (raises UsageError in kubectl's words when it is no format here)."""
        return parse_output(self.output, OUTPUTS)

    @property
    def tabular(self) -> bool:
        """Whether the output is the table (``table`` or ``wide``), not a document."""
        return self.format.tabular


def explain_rows(selection: Selection, *, wide: bool = False) -> list[list[str]]:
    """Yes rows in rank order, then No rows (SRs, then CSRs, by name); ``wide`` adds TIE:
    ``name decides`` on the Yes rows only their names rank, else ``-``."""
    tied = {id(v) for group in selection.ties for v in group} if wide else set()
    rows = []
    for verdict in selection.verdicts:
        scope = "Cluster" if verdict.runtime.is_cluster else "Namespaced"
        if verdict.qualifies:
            match = verdict.first_match
            priority, weight = str(explain_priority(match)), str(explain_weight(match))
            row = [verdict.runtime.name, scope, "Yes", priority, weight, "-"]
        else:
            row = [verdict.runtime.name, scope, "No", "-", "-", verdict.reason]
        if wide:
            row.append(TIE if id(verdict) in tied else "-")
        rows.append(row)
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


def formatted(document: dict[str, Any], output: OutputFormat) -> str:
    """A document (one explanation, or a list of them) as a document format prints it;
    ``-o name`` gives every row's runtime."""
    explanations = document.get("items", [document])
    names = [
        object_name(
            "ClusterServingRuntime" if row["scope"] == "Cluster" else "ServingRuntime", row["name"]
        )
        for explanation in explanations
        for row in explanation["runtimes"]
    ]
    return printed_document(document, output, names)


@dataclass(frozen=True)
class Explained:
    """One namespace's explanation: what the table and the document are made of."""

    request: ExplainRequest
    namespace: str
    model: str
    isvc: InferenceService | None
    selection: Selection | None  #: ``None`` when there is no runtime at all

    def document(self) -> dict[str, Any]:
        return explain_document(self.selection, self.model, self.request.isvc, self.namespace)


def read_isvc(reader: ObjectReader, namespace: str, name: str) -> InferenceService:
    """The InferenceService, which must name its model."""
    return require_model(from_manifest(reader.get(INFERENCE_SERVICE, namespace, name)), name)


def require_model(isvc: InferenceService, name: str) -> InferenceService:
    """``isvc`` itself, when it names a model (``spec.model``): explain needs one."""
    if isvc.spec.model is None:
        raise UsageError(f'InferenceService "{name}" has no spec.model; pass --model instead')
    return isvc


def explain(
    request: ExplainRequest,
    reader: ObjectReader,
    namespace: str,
    isvc: InferenceService | None,
    note: Callable[[str], None],
) -> Explained:
    """Read the model and the runtimes of ``namespace`` and select; notes go to ``note``,
    and so does a ``Warning:`` for each that does not parse (left out, as the operator
    leaves it out)."""
    model_name = isvc.spec.model.name if isvc is not None and isvc.spec.model else request.model
    model = read_model(reader, namespace, model_name or "", note)
    if isvc is not None and isvc.spec.runtime is not None:
        note(_EXPLICIT_NOTE)
    catalog = RuntimeCatalog.of(read_runtimes(reader, namespace, note))
    selection = None
    if len(catalog) == 0:
        note(_NO_RUNTIMES_FOR_SELECTOR if request.with_effective else _NO_RUNTIMES)
    else:
        selection = run_selection(model.spec, model.name, isvc, catalog, namespace)
    return Explained(request, namespace, model.name, isvc, selection)


def explanation_text(explained: Explained, reader: ObjectReader) -> str:
    """The explain table, then (``--with-effective``) the effective context."""
    text, request = "", explained.request
    if explained.selection is not None:
        wide = request.format.format == "wide"
        rows = explain_rows(explained.selection, wide=wide)
        headers = EXPLAIN_WIDE_HEADERS if wide else EXPLAIN_HEADERS
        text += format_table(headers, rows, no_headers=request.no_headers)
    if request.with_effective and explained.isvc is not None:
        if explained.selection is not None:
            text += "\n"
        text += _CONTEXT_TITLE + "\n"
        text += _effective_context(
            reader, explained.namespace, explained.isvc, request.ome_namespace, request.no_headers
        )
    return text


def run_explain(
    request: ExplainRequest,
    reader: ObjectReader,
    namespace: str,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Print the explain table (and the effective context) of one namespace; raises on any
    error. (``-A`` is ``all_namespaces.explain_all_namespaces``.)"""
    request.validate()
    isvc = read_isvc(reader, namespace, request.isvc) if request.isvc is not None else None
    explained = explain(request, reader, namespace, isvc, _printer(stderr))
    if not request.tabular:
        stdout.write(formatted(explained.document(), request.format))
    else:
        stdout.write(explanation_text(explained, reader))
    return 0


def _printer(stderr: TextIO) -> Callable[[str], None]:
    return lambda note: print(note, file=stderr)


def _effective_context(
    reader: ObjectReader,
    namespace: str,
    isvc: InferenceService,
    ome_namespace: str,
    no_headers: bool,
) -> str:
    from .effective import context_rows  # --with-effective only: the effective core is big

    rows = context_rows(reader, namespace, isvc, ome_namespace)
    return format_table(("SCOPE", "FIELD", "VALUE"), rows, no_headers=no_headers)
