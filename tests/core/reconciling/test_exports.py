"""The names ``core.reconciling`` exports."""

from __future__ import annotations

from ome_operator.core import reconciling


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(reconciling.__all__) == [
        "Decisions",
        "Event",
        "LogRecord",
        "Outcome",
        "ReconcilePlan",
        "Snapshot",
        "reconcile",
    ]
