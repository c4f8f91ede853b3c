"""Deletion is the garbage collector's turn: an InferenceService with a ``deletionTimestamp`` is
never reconciled (no write, no status, no event)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.reconciling import Outcome, ReconcilePlan
from ome_operator.models import InferenceService, ServingRuntime, from_manifest
from tests.builders import isvc_manifest
from tests.core.reconciling.plans import MODE, RT, deployment_of, plan_of


def _deleting(**kwargs: Any) -> InferenceService:
    manifest = isvc_manifest(**kwargs)
    manifest["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return from_manifest(manifest)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing"),
    [
        pytest.param(_deleting(), (RT,), [], id="its workloads already collected: none re-created"),
        pytest.param(
            _deleting(),
            (RT,),
            [deployment_of(observed_generation=1)],
            id="its workloads still there: nothing patched, no status",
        ),
        pytest.param(_deleting(), (), [], id="no runtime: no RuntimeNotFound event"),
        pytest.param(
            _deleting(annotations={MODE: "VirtualDeployment"}),
            (RT,),
            [],
            id="VirtualDeployment: no status either",
        ),
    ],
)
def test_an_inference_service_being_deleted_is_never_reconciled(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], existing: list[dict[str, Any]]
) -> None:
    assert plan_of(isvc, runtimes, existing=existing) == ReconcilePlan(Outcome.PARKED)
