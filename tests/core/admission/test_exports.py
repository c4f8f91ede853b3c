"""The names ``core.admission`` exports."""

from __future__ import annotations

from ome_operator.core import admission


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(admission.__all__) == [
        "AdmissionDenied",
        "AdmissionVerdict",
        "MAX_REPLICAS",
        "SelectionOutcome",
        "mode_typo_warnings",
        "replica_range_problem",
        "review_inference_service",
        "review_serving_runtime",
    ]
