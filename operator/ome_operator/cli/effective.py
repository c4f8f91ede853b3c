"""``kubectl ome runtime effective`` (S13): collection, formatting and the command's edge.

``collect_evidence`` reads through an ObjectReader only (a cluster or ``-f`` manifests alike,
S16.1): the namespace's runtimes plus every CSR (at most 1,000), the model (BaseModel, then
ClusterBaseModel) and the pinned ControllerRevisions by name in the OME namespace. A failed
read is kept as evidence, so the view that needed it becomes ``Unavailable`` (S13.8);
``core.effective.report.build_report`` decides everything else. The ``format_*`` and ``*_rows``
functions are pure; ``run_effective`` is the only one that prints.

Errors (rendered ``error: <message>`` on stderr, exit 1)::

    EffectiveError
    ├── UnknownOutputError       -o is not table, wide, json or yaml
    ├── InvalidNameError         the name is not a DNS-1123 subdomain
    ├── InferenceServiceReadError
    └── EvidenceError            any other collection failure
"""

from __future__ import annotations

import json
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
from .tables import format_table, shorten_value
from .yaml_writing import yaml_text

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
    "UnknownOutputError",
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
OUTPUTS = ("table", "wide", "json", "yaml")
API_VERSION = "cli.ome.io/v1alpha1"
KIND = "RuntimeEffectiveReport"
#: What ``explain --with-effective`` prints when the context cannot be collected (S12.8).
UNAVAILABLE_CONTEXT_ROWS = (
    ("Service", "EVIDENCE", "Unavailable"),
    ("Service", "CAVEAT", "Selector verdict above is unchanged"),
)
_CAVEAT = "Independent snapshot; not rollout convergence"
_HEADERS = ("SCOPE", "FIELD", "VALUE")
_WIDE_HEADERS = (
    "VIEW",
    "STATE",
    "REASON",
    "RUNTIME",
    "REVISION",
    "HASH",
    "COMPONENT",
    "MODE",
    "MODE-SOURCE",
    "PIN",
    "PIN-STATE",
    "SYNC",
    "STATUS",
    "DRIFT",
    "LIVE-RELATION",
    "ISSUES",
)
#: Table fields whose values name an object or an issue: shortened with a digest (S13.5).
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


class UnknownOutputError(EffectiveError):
    def __init__(self, output: str) -> None:
        self.output = output
        super().__init__(f'unknown output format "{output}": must be one of {", ".join(OUTPUTS)}')


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
    reader: ObjectReader, namespace: str, isvc: InferenceService, ome_namespace: str
) -> Evidence:
    """Everything ``build_report`` needs for ``isvc``, read once (S13.2)."""
    spec = isvc.spec
    runtimes, model = Lookup(), Lookup()
    if (spec.runtime is not None and spec.runtime.name) or spec.model is not None:
        runtimes = _lookup(lambda: RuntimeCatalog.of(read_runtimes(reader, namespace)))
    if spec.model is not None:
        model = _lookup(lambda: read_model(reader, namespace, spec.model.name))
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


def _view_rows(scope: str, view: View) -> list[Row]:
    rows = [(scope, "STATE", view.state)]
    if view.reason:
        rows.append((scope, "REASON", view.reason))
    if view.runtime:
        rows.append((scope, "RUNTIME", view.runtime.short))
    if view.revision:
        rows.append((scope, "REVISION", view.revision))
    if view.hash:
        rows.append((scope, "HASH", view.hash))
    rows += [(scope, c.component.upper(), f"{c.mode} ({c.source})") for c in view.components]
    return rows


def effective_rows(report: RuntimeEffectiveReport) -> list[Row]:
    """The S13.3 ``SCOPE FIELD VALUE`` rows, values cut to 54 characters (S13.5)."""
    service = report.service
    rows = _view_rows("Live", report.live) + _view_rows("Active", report.active)
    rows += [
        ("Service", "PIN", f"{service.pin_mode}/{service.pin_state}"),
        ("Service", "SYNC", service.sync),
        ("Service", "STATUS", service.status),
        ("Service", "DRIFT", service.drift_text),
        ("Service", "LIVE-RELATION", service.live_relation),
    ]
    rows += [("Service", "ISSUE", issue) for issue in service.issues]
    return _shortened(rows)


def selection_context_rows(report: RuntimeEffectiveReport) -> list[Row]:
    """The rows ``explain --with-effective`` prints before ``effective_rows`` (S12.8)."""
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
    """S12.8 effective context for ``explain``: context and effective rows, or the two
    ``Unavailable`` rows when the evidence cannot be collected."""
    try:
        report = build_report(collect_evidence(reader, namespace, isvc, ome_namespace))
    except (ReadError, InvalidResourceError, EvidenceError):
        return list(UNAVAILABLE_CONTEXT_ROWS)
    return selection_context_rows(report) + effective_rows(report)


def wide_rows(report: RuntimeEffectiveReport) -> list[list[str]]:
    """S13.6: one row per (view, component), Service fields repeated, ``-`` when empty."""
    service = report.service
    shared = [
        service.pin_mode,
        service.pin_state,
        service.sync,
        service.status,
        service.drift_text,
        service.live_relation,
        ",".join(service.issues) or "-",
    ]
    rows = []
    for name, view in (("Live", report.live), ("Active", report.active)):
        runtime = view.runtime.full if view.runtime else "-"
        head = [name, view.state, view.reason or "-", runtime, view.revision or "-"]
        head.append(view.hash or "-")
        components = [[c.component, str(c.mode), str(c.source)] for c in view.components]
        rows += [head + component + shared for component in components or [["-", "-", "-"]]]
    return rows


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
            {"component": c.component, "mode": str(c.mode), "modeSource": str(c.source)}
            for c in view.components
        ],
    }


def report_document(report: RuntimeEffectiveReport) -> dict[str, Any]:
    """The ``RuntimeEffectiveReport`` of ``-o json``/``-o yaml`` (S13.7, OPEN-44).

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


def format_report(report: RuntimeEffectiveReport, output: str) -> str:
    """The text ``effective -o <output>`` prints."""
    if output == "table":
        return format_table(_HEADERS, effective_rows(report))
    if output == "wide":
        return format_table(_WIDE_HEADERS, wide_rows(report))
    if output == "json":
        return json.dumps(report_document(report), indent=2) + "\n"
    if output == "yaml":
        return yaml_text(report_document(report), allow_unicode=False)
    raise UnknownOutputError(output)


def _report_text(
    name: str, output: str, ome_namespace: str, reader: ObjectReader, namespace: str
) -> str:
    if output not in OUTPUTS:
        raise UnknownOutputError(output)
    problems = name_problems(name)
    if problems:
        raise InvalidNameError(name, problems)
    try:
        obj = reader.get(INFERENCE_SERVICE, namespace, name)
    except ReadError as exc:
        raise InferenceServiceReadError(exc) from None
    isvc = from_manifest(obj)
    try:
        evidence = collect_evidence(reader, namespace, isvc, ome_namespace)
    except ReadError as exc:
        raise EvidenceError(str(exc)) from None
    return format_report(build_report(evidence), output)


def run_effective(
    name: str,
    output: str,
    ome_namespace: str,
    reader: ObjectReader,
    namespace: str,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """``kubectl ome runtime effective NAME``: print the report and return the exit code."""
    try:
        text = _report_text(name, output, ome_namespace, reader, namespace)
    except (EffectiveError, InvalidResourceError) as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    stdout.write(text)
    return 0
