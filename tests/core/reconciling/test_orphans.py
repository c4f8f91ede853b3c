"""Orphans (SPEC S3.7): the owned objects of components no longer declared are deleted, and
nothing else is."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.models import InferenceService
from tests.core.reconciling.plans import (
    NATIVE_ENGINE,
    _deployment,
    _isvc,
    _object,
    _plan,
    _ref,
    _replica,
)


def _without_component_label(obj: dict[str, Any]) -> dict[str, Any]:
    del obj["metadata"]["labels"]["component"]
    return obj


@pytest.mark.parametrize(
    ("isvc", "existing", "deleted"),
    [
        pytest.param(
            _isvc(),
            [
                _deployment("decoder"),
                _object("Service", "svc-decoder", "decoder"),
                _object("Service", "svc-router", "router"),
                _replica("router"),
            ],
            (
                _ref("Deployment", "svc-decoder"),
                _ref("InferenceReplica", "svc-router"),
                _ref("Service", "svc-decoder"),
                _ref("Service", "svc-router"),
            ),
            id="owned objects of components no longer declared are deleted",
        ),
        pytest.param(
            NATIVE_ENGINE,
            [_deployment(), _object("Service", "svc-engine")],
            (),
            id="the old workload of a still-declared component is not an orphan",
        ),
        pytest.param(
            _isvc(),
            [_object("Service", "svc-decoder", "decoder", owner=None)],
            (),
            id="an object not owned by the InferenceService is never deleted",
        ),
        pytest.param(
            _isvc(),
            [_object("Service", "svc-decoder", "decoder", isvc="other")],
            (),
            id="an object labelled for another InferenceService is not deleted",
        ),
        pytest.param(
            _isvc(),
            [_without_component_label(_object("Service", "svc-extra"))],
            (),
            id="an owned object without a component label is not an orphan",
        ),
    ],
)
def test_orphans(
    isvc: InferenceService, existing: list[dict[str, Any]], deleted: tuple[dict[str, Any], ...]
) -> None:
    assert _plan(isvc, existing=existing).delete == deleted
