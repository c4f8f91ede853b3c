"""The Service rows read from the InferenceService (SPEC S13): SYNC, STATUS and DRIFT."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.effective.reports import LLAMA, MODEL, NAMED, issues_of, rows_of, service
from tests.core.effective.evidence import drifted


def service_rows(objects: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [row for row in rows_of(objects) if row[0] == "Service"]


@pytest.mark.parametrize(
    ("metadata", "status", "expected"),
    [
        pytest.param(
            {},
            {"lastRuntimeSyncToken": "t1"},
            [("Service", "SYNC", "StatusOnly"), ("Service", "STATUS", "Unobserved")],
            id="SYNC StatusOnly and STATUS Unobserved",
        ),
        pytest.param(
            {"annotations": {"ome.io/runtime-sync": "t1"}},
            {"lastRuntimeSyncToken": "t1", "observedGeneration": 2},
            [("Service", "SYNC", "Acknowledged"), ("Service", "STATUS", "Invalid")],
            id="SYNC Acknowledged and STATUS Invalid",
        ),
        pytest.param(
            {"annotations": {"ome.io/runtime-sync": "t2"}, "generation": 3},
            {"lastRuntimeSyncToken": "t1", "observedGeneration": 2},
            [("Service", "SYNC", "Pending"), ("Service", "STATUS", "Stale")],
            id="SYNC Pending and STATUS Stale",
        ),
    ],
)
def test_sync_and_status_rows_read_the_inference_service(
    metadata: dict[str, Any], status: dict[str, Any], expected: list[tuple]
) -> None:
    isvc = service(runtime=NAMED, status=status)
    isvc["metadata"].update(metadata)
    rows = service_rows([LLAMA, MODEL, isvc])
    assert [r for r in rows if r[1] in ("SYNC", "STATUS")] == expected


@pytest.mark.parametrize(
    ("conditions", "drift", "issues"),
    [
        pytest.param(
            [drifted("True", "RevisionMismatch")],
            "ReportedTrue/RevisionMismatch",
            (),
            id="DRIFT shows state and cause",
        ),
        pytest.param(
            [drifted("Sideways", "Whatever")],
            "Malformed/Other",
            ("ReportedDriftConflict",),
            id="an unknown status is Malformed with its cause",
        ),
        pytest.param(
            [drifted("True", "RevisionMismatch"), drifted("False", "RevisionMismatch")],
            "Malformed",
            ("ReportedDriftConflict",),
            id="a duplicated condition is Malformed with no cause part",
        ),
    ],
)
def test_drift_row(conditions: list[dict], drift: str, issues: tuple[str, ...]) -> None:
    isvc = service(runtime=NAMED, status={"observedGeneration": 1, "conditions": conditions})
    rows = service_rows([LLAMA, MODEL, isvc])
    assert [v for _, f, v in rows if f == "DRIFT"] == [drift]
    assert issues_of([LLAMA, MODEL, isvc]) == issues
