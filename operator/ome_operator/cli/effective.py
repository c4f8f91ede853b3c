"""``kubectl ome runtime effective`` (docs/reference/cli.md): collection, formatting and the
command's edge.

``collect_evidence`` reads through an ObjectReader only (a cluster or ``-f`` manifests alike):
the namespace's runtimes plus every CSR (at most 1,000), the model (BaseModel, then
ClusterBaseModel) and the pinned ControllerRevisions by name in the OME namespace. A failed
read is kept as evidence, so the view that needed it becomes ``Unavailable``
(docs/reference/cli.md, Errors); ``core.effective.report.build_report`` decides everything
else. The ``format_*`` and ``*_rows`` functions are pure; ``run_effective`` is the only one
that prints.

Errors (rendered ``error: <message>`` on stderr, exit 1)::

    EffectiveError
    ├── InvalidNameError         the name is not a DNS-1123 subdomain
    ├── InferenceServiceReadError
    └── EvidenceError            any other collection failure
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeVar

from ..cluster.fetching import read_model, read_runtimes
from ..cluster.objects import NotFoundError, ObjectReader, ReadError
from ..cluster.resources import INFERENCE_SERVICE, resource_named
from ..core.effective.report import Evidence, Lookup, build_report, revision_names
from ..core.effective.vocabulary import RuntimeEffectiveReport, RuntimeId, View
from ..core.selection import RuntimeCatalog
from ..models import InferenceService, InvalidResourceError, from_manifest
from .commands import UsageError
from .output_formats import OutputFormat, object_name, parse_output, printed_document
from .tables import format_table, shorten_value

__all__ = [
    "API_VERSION",
    "CONTROLLER_REVISION",
    "KIND",
    "OUTPUTS",
    "UNAVAILABLE_CONTEXT_ROWS",
    "EffectiveError",
    "EvidenceError",
    "InferenceServiceReadError",
    "InvalidNameError",
    "collect_evidence",
    "context_rows",
    "effective_rows",
    "format_report",
    "name_problems",
    "report_document",
    "run_effective",
    "selection_context_rows",
    "wide_rows",
]

CONTROLLER_REVISION = resource_named("ControllerRevision")
OUTPUTS = ("table", "wide", "json", "yaml", "name", "jsonpath")
API_VERSION = "cli.ome.io/v1alpha1"
KIND = "RuntimeEffectiveReport"
#: What ``explain --with-effective`` prints when the context cannot be collected.
UNAVAILABLE_CONTEXT_ROWS = (
    ("Service", "EVIDENCE", "Unavailable"),
    ("Service", "CAVEAT", "Selector verdict above is unchanged"),
)
_CAVEAT = "Independent snapshot; not rollout convergence"
_HEADERS = ("SCOPE", "FIELD", "VALUE")
#: ``-o wide``: the table, and each value whole (runtimes as ``<Kind>/[<namespace>/]<name>``,
#: the full hash, nothing cut to 54 characters).
_WIDE_HEADERS = (*_HEADERS, "FULL-VALUE")
#: Table fields whose values name an object or an issue: shortened with a digest
#: (docs/reference/cli.md, Value width).
_IDENTIFYING = frozenset({"RUNTIME", "REVISION", "ISSUE", "SOURCE", "ROOT-FIRST"})
_MAX_NAME = 253
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

Row = tuple[str, str, str]
T = TypeVar("T")


class EffectiveError(Exception):
    """``effective`` cannot print a report; str() is the message after ``error: ``."""


class InvalidNameError(EffectiveError):
    def __init__(self, name: str, problems: Sequence[str]) -> None:
        self.name = name
        self.problems = tuple(problems)
        super().__init__(f'InferenceService name "{name}" is invalid: {"; ".join(problems)}')


class InferenceServiceReadError(EffectiveError):
    def __init__(self, cause: ReadError) -> None:
        self.cause = cause
        super().__init__(f"get InferenceService: {cause}")


class EvidenceError(EffectiveError):
    def __init__(self, cause: str) -> None:
        self.cause = cause
        super().__init__(f"collect runtime evidence: {cause}")


def name_problems(name: str) -> list[str]:
    """Why ``name`` is not a DNS-1123 subdomain, in kubectl's words; empty when it is."""
    problems = []
    if len(name) > _MAX_NAME:
        problems.append(f"must be no more than {_MAX_NAME} characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(name):
        problems.append(_DNS1123_MESSAGE)
    return problems


def _lookup(read: Callable[[], T]) -> Lookup[T]:
    try:
        return Lookup(read())
    except NotFoundError:
        return Lookup()
    except ReadError as exc:
        return Lookup(error=str(exc))


def collect_evidence(
    reader: ObjectReader,
    namespace: str,
    isvc: InferenceService,
    ome_namespace: str,
    warn: Callable[[str], None] | None = None,
) -> Evidence:
    """Everything ``build_report`` needs for ``isvc``, read once; a runtime or model
    that does not parse is left out, with a ``Warning:`` to ``warn``."""
    spec = isvc.spec
    runtimes, model = Lookup(), Lookup()
    if (spec.runtime is not None and spec.runtime.name) or spec.model is not None:
        runtimes = _lookup(lambda: RuntimeCatalog.of(read_runtimes(reader, namespace, warn)))
    if spec.model is not None:
        model = _lookup(lambda: read_model(reader, namespace, spec.model.name, warn))
    names = revision_names(isvc)
    if names and not ome_namespace:
        raise EvidenceError("an OME namespace is required to read ControllerRevisions")
    revisions = {
        name: _lookup(lambda name=name: reader.get(CONTROLLER_REVISION, ome_namespace, name))
        for name in names
    }
    return Evidence(isvc, runtimes, model, revisions)


def _shortened(rows: list[Row]) -> list[Row]:
    return [(s, f, shorten_value(v, identifying=f in _IDENTIFYING)) for s, f, v in rows]


#: A table row with its value whole: ``(scope, field, value, whole value)``.
_WholeRow = tuple[str, str, str, str]


def _view_rows(scope: str, view: View) -> list[_WholeRow]:
    rows = [(scope, "STATE", view.state, view.state)]
    if view.reason:
        rows.append((scope, "REASON", view.reason, view.reason))
    if view.runtime:
        rows.append((scope, "RUNTIME", view.runtime.short, view.runtime.full))
    if view.revision:
        rows.append((scope, "REVISION", view.revision, view.revision))
    if view.hash and view.full_hash:
        rows.append((scope, "HASH", view.hash, view.full_hash))
    for c in view.components:
        value = f"{c.mode} ({c.source})"
        rows.append((scope, c.component.upper(), value, value))
        if c.replicas_set:  # bounds of the operator configuration alone are not listed
            rows.append((scope, f"{c.component.upper()}-REPLICAS", c.replicas, c.replicas))
    return rows


def _whole_rows(report: RuntimeEffectiveReport) -> list[_WholeRow]:
    service = report.service
    rows = _view_rows("Live", report.live) + _view_rows("Active", report.active)
    fields = [
        ("PIN", f"{service.pin_mode}/{service.pin_state}"),
        ("SYNC", service.sync),
        ("STATUS", service.status),
        ("DRIFT", service.drift_text),
        ("LIVE-RELATION", service.live_relation),
        *(("ISSUE", issue) for issue in service.issues),
    ]
    return rows + [("Service", field, value, value) for field, value in fields]


def effective_rows(report: RuntimeEffectiveReport) -> list[Row]:
    """The ``SCOPE FIELD VALUE`` rows, values cut to 54 characters (README, ``effective``)."""
    return _shortened([(s, f, v) for s, f, v, _ in _whole_rows(report)])


def selection_context_rows(report: RuntimeEffectiveReport) -> list[Row]:
    """The rows ``explain --with-effective`` prints before ``effective_rows``."""
    selection, inheritance = report.selection, report.inheritance
    rows = [("Service", "SELECTION", selection.mode)]
    if selection.runtime is not None:
        rows.append(("Service", "SOURCE", selection.runtime.short))
    rows.append(("Source", "INHERITANCE", inheritance.state))
    if inheritance.reason:
        rows.append(("Source", "REASON", inheritance.reason))
    rows += [("Source", "ROOT-FIRST", runtime.short) for runtime in inheritance.chain]
    rows.append(("Service", "CAVEAT", _CAVEAT))
    return _shortened(rows)


def context_rows(
    reader: ObjectReader, namespace: str, isvc: InferenceService, ome_namespace: str
) -> list[Row]:
    """The effective context for ``explain``: context and effective rows, or the two
    ``Unavailable`` rows when the evidence cannot be collected."""
    try:
        report = build_report(collect_evidence(reader, namespace, isvc, ome_namespace))
    except (ReadError, InvalidResourceError, EvidenceError):
        return list(UNAVAILABLE_CONTEXT_ROWS)
    return selection_context_rows(report) + effective_rows(report)


def wide_rows(report: RuntimeEffectiveReport) -> list[list[str]]:
    """``-o wide``: the table's rows, each with its value whole at the end (FULL-VALUE)."""
    whole = _whole_rows(report)
    shortened = effective_rows(report)
    return [[*row, full] for row, (_, _, _, full) in zip(shortened, whole, strict=True)]


def _runtime(runtime: RuntimeId | None) -> dict[str, Any] | None:
    if runtime is None:
        return None
    return {"kind": runtime.kind, "namespace": runtime.namespace, "name": runtime.name}


def _view(view: View) -> dict[str, Any]:
    return {
        "state": view.state,
        "reason": view.reason,
        "runtime": _runtime(view.runtime),
        "revision": view.revision,
        "hash": view.hash,
        "fullHash": view.full_hash,
        "components": [
            {
                "component": c.component,
                "mode": str(c.mode),
                "modeSource": str(c.source),
                "minReplicas": c.min_replicas.value,
                "minReplicasSource": c.min_replicas.source,
                "maxReplicas": c.max_replicas.value,
                "maxReplicasSource": c.max_replicas.source,
            }
            for c in view.components
        ],
    }


def report_document(report: RuntimeEffectiveReport) -> dict[str, Any]:
    """The ``RuntimeEffectiveReport`` of ``-o json``/``-o yaml`` (docs/reference/cli.md, JSON
    and YAML).

    Every key is always present; a value the report does not have is ``null``.
    """
    target, selection, service = report.target, report.selection, report.service
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "target": {
            "namespace": target.namespace,
            "name": target.name,
            "uid": target.uid,
            "generation": target.generation,
            "observedGeneration": target.observed_generation,
        },
        "selection": {
            "mode": selection.mode,
            "runtime": _runtime(selection.runtime),
            "candidates": selection.candidates,
        },
        "inheritance": {
            "state": report.inheritance.state,
            "reason": report.inheritance.reason,
            "chain": [_runtime(runtime) for runtime in report.inheritance.chain],
        },
        "views": {"live": _view(report.live), "active": _view(report.active)},
        "service": {
            "pin": {"mode": service.pin_mode, "state": service.pin_state},
            "sync": service.sync,
            "status": service.status,
            "drift": {"state": service.drift, "cause": service.drift_cause},
            "liveRelation": service.live_relation,
            "issues": list(service.issues),
        },
    }


def format_report(
    report: RuntimeEffectiveReport, output: OutputFormat, *, no_headers: bool = False
) -> str:
    """The text ``effective -o <output>`` prints (``-o name``: the InferenceService)."""
    if output.format == "table":
        return format_table(_HEADERS, effective_rows(report), no_headers=no_headers)
    if output.format == "wide":
        return format_table(_WIDE_HEADERS, wide_rows(report), no_headers=no_headers)
    names = [object_name("InferenceService", report.target.name)]
    return printed_document(report_document(report), output, names, allow_unicode=False)


def _report_text(
    name: str,
    output: OutputFormat,
    ome_namespace: str,
    reader: ObjectReader,
    namespace: str,
    warn: Callable[[str], None],
    no_headers: bool = False,
) -> str:
    problems = name_problems(name)
    if problems:
        raise InvalidNameError(name, problems)
    try:
        obj = reader.get(INFERENCE_SERVICE, namespace, name)
    except ReadError as exc:
        raise InferenceServiceReadError(exc) from None
    isvc = from_manifest(obj)
    try:
        evidence = collect_evidence(reader, namespace, isvc, ome_namespace, warn)
    except ReadError as exc:
        raise EvidenceError(str(exc)) from None
    return format_report(build_report(evidence), output, no_headers=no_headers)


def run_effective(
    name: str,
    output: str,
    ome_namespace: str,
    reader: ObjectReader,
    namespace: str,
    stdout: TextIO,
    stderr: TextIO,
    *,
    no_headers: bool = False,
) -> int:
    """``kubectl ome runtime effective NAME``: print the report and return the exit code."""
    try:
        text = _report_text(
            name,
            parse_output(output, OUTPUTS),
            ome_namespace,
            reader,
            namespace,
            lambda w: print(w, file=stderr),
            no_headers,
        )
    except (EffectiveError, InvalidResourceError, UsageError) as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    stdout.write(text)
    return 0
