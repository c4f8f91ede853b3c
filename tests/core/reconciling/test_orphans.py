"""Orphans (SPEC S3.7): the owned objects of components no longer declared are deleted, and
nothing else is."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.models import InferenceService
from tests.core.reconciling.plans import (
    NATIVE_ENGINE,
    deployment_of,
    isvc_of,
    owned_object,
    plan_of,
    ref_to,
    replica_of,
)


def _without_component_label(obj: dict[str, Any]) -> dict[str, Any]:
    del obj["metadata"]["labels"]["component"]
    return obj


@pytest.mark.parametrize(
    ("isvc", "existing", "deleted"),
    [
        pytest.param(
            isvc_of(),
            [
                deployment_of("decoder"),
                owned_object("Service", "svc-decoder", "decoder"),
                owned_object("Service", "svc-router", "router"),
                replica_of("router"),
            ],
            (
                ref_to("Deployment", "svc-decoder"),
                ref_to("InferenceReplica", "svc-router"),
                ref_to("Service", "svc-decoder"),
                ref_to("Service", "svc-router"),
            ),
            id="owned objects of components no longer declared are deleted",
        ),
        pytest.param(
            NATIVE_ENGINE,
            [deployment_of(), owned_object("Service", "svc-engine")],
            (),
            id="the old workload of a still-declared component is not an orphan",
        ),
        pytest.param(
            isvc_of(),
            [owned_object("Service", "svc-decoder", "decoder", owner=None)],
            (),
            id="an object not owned by the InferenceService is never deleted",
        ),
        pytest.param(
            isvc_of(),
            [owned_object("Service", "svc-decoder", "decoder", isvc="other")],
            (),
            id="an object labelled for another InferenceService is not deleted",
        ),
        pytest.param(
            isvc_of(),
            [_without_component_label(owned_object("Service", "svc-extra"))],
            (),
            id="an owned object without a component label is not an orphan",
        ),
    ],
)
def test_orphans(
    isvc: InferenceService, existing: list[dict[str, Any]], deleted: tuple[dict[str, Any], ...]
) -> None:
    assert plan_of(isvc, existing=existing).delete == deleted
