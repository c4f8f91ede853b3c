"""The selection context ``kubectl ome runtime explain`` prints with the effective report: the
selection, the source runtime and its inheritance, or two rows when it cannot be collected."""

from __future__ import annotations

from ome_operator.cli.effective import (
    UNAVAILABLE_CONTEXT_ROWS,
    collect_evidence,
    context_rows,
    effective_rows,
    selection_context_rows,
)
from ome_operator.cluster.manifests import ManifestReader
from ome_operator.cluster.objects import INFERENCE_SERVICE
from ome_operator.core.effective.report import build_report
from ome_operator.models import from_manifest
from tests.builders import runtime_manifest
from tests.cli.effective.reports import MODEL, NAMED, service, with_parent


def test_selection_context_rows_for_explain_with_effective() -> None:
    objects = [
        with_parent(runtime_manifest("vllm-llama"), "vllm-base"),
        runtime_manifest("vllm-base"),
        MODEL,
        service(runtime=NAMED),
    ]
    reader = ManifestReader(objects)
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    report = build_report(collect_evidence(reader, "default", isvc, "ome"))
    context = [
        ("Service", "SELECTION", "Explicit"),
        ("Service", "SOURCE", "CSR/vllm-llama"),
        ("Source", "INHERITANCE", "Observed"),
        ("Source", "ROOT-FIRST", "CSR/vllm-base"),
        ("Source", "ROOT-FIRST", "CSR/vllm-llama"),
        ("Service", "CAVEAT", "Independent snapshot; not rollout convergence"),
    ]
    assert selection_context_rows(report) == context
    assert context_rows(reader, "default", isvc, "ome") == context + effective_rows(report)


def test_selection_context_names_the_inheritance_problem() -> None:
    objects = [with_parent(runtime_manifest("vllm-llama"), "vllm-base"), MODEL, service()]
    reader = ManifestReader(objects)
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    report = build_report(collect_evidence(reader, "default", isvc, "ome"))
    assert selection_context_rows(report) == [
        ("Service", "SELECTION", "Selected"),
        ("Service", "SOURCE", "CSR/vllm-llama"),
        ("Source", "INHERITANCE", "Unavailable"),
        ("Source", "REASON", "NotFound"),
        ("Service", "CAVEAT", "Independent snapshot; not rollout convergence"),
    ]


def test_context_that_cannot_be_collected_is_two_rows() -> None:
    broken = service(runtime=NAMED, status={"observedGeneration": "1"})
    reader = ManifestReader([runtime_manifest("vllm-llama"), MODEL, broken])
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    assert context_rows(reader, "default", isvc, "ome") == list(UNAVAILABLE_CONTEXT_ROWS)
    assert UNAVAILABLE_CONTEXT_ROWS == (
        ("Service", "EVIDENCE", "Unavailable"),
        ("Service", "CAVEAT", "Selector verdict above is unchanged"),
    )
