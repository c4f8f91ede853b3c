"""The ISSUE rows (SPEC S13.4): each issue, and the order they come in."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import model_manifest, runtime_manifest
from tests.cli.effective.reports import (
    EXPLICIT,
    LLAMA,
    MANAGED,
    MODE,
    MODEL,
    NAMED,
    issues_of,
    mismatched,
    service,
    with_parent,
)
from tests.core.effective.evidence import drifted


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(
            [LLAMA, MODEL, service(runtime={"name": "vllm-llama", "kind": "Runtime"})],
            ("InvalidDeclaredKind",),
            id="InvalidDeclaredKind: spec.runtime.kind is neither runtime kind",
        ),
        pytest.param(
            [mismatched(), MODEL, service(runtime=NAMED)],
            ("DeclaredCompatibilityMismatch",),
            id="DeclaredCompatibilityMismatch: the named runtime does not support the model",
        ),
        pytest.param(
            [LLAMA, model_manifest("llama", distribution="Sharded"), service(runtime=NAMED)],
            ("DeclaredCompatibilityMismatch",),
            id="DeclaredCompatibilityMismatch: the model fails the S2.2 pre-checks",
        ),
        pytest.param(
            [mismatched(), MODEL, service(runtime=MANAGED)],
            ("ActiveRevisionUnreported",),
            id="no compatibility issue for a pinned InferenceService",
        ),
        pytest.param(
            [LLAMA, service(runtime=NAMED)],
            (),
            id="no compatibility issue when the model does not exist",
        ),
        pytest.param(
            [
                with_parent(runtime_manifest("vllm-llama"), "vllm-base"),
                MODEL,
                service(runtime=NAMED),
            ],
            ("InheritanceUnavailable",),
            id="InheritanceUnavailable: the parent runtime is missing",
        ),
        pytest.param(
            [runtime_manifest("vllm-llama", disabled=True), MODEL, service(runtime=NAMED)],
            ("InheritanceUnavailable", "LiveRuntimeUnavailable"),
            id="LiveRuntimeUnavailable: the named runtime is disabled",
        ),
        pytest.param(
            [LLAMA, MODEL, service(runtime=NAMED, status={})],
            ("StatusUnobserved",),
            id="StatusUnobserved",
        ),
        pytest.param(
            [LLAMA, MODEL, service(runtime=NAMED, generation=2)],
            ("StatusStale",),
            id="StatusStale",
        ),
        pytest.param(
            [LLAMA, MODEL, service(runtime=NAMED, generation=None)],
            ("StatusInvalid",),
            id="StatusInvalid: observed a generation the object never had",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                service(runtime=NAMED, router={"annotations": {MODE: "MultiNode"}}),
            ],
            ("InvalidComponentMode(router)",),
            id="InvalidComponentMode: the router cannot run MultiNode",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                service(
                    runtime=NAMED,
                    engine={"annotations": {MODE: "VirtualDeployment"}},
                    router={"annotations": {MODE: "MultiNode"}},
                ),
            ],
            ("InvalidComponentMode(engine)", "InvalidComponentMode(router)"),
            id="InvalidComponentMode: one issue per component, engine first",
        ),
        pytest.param(
            [
                with_parent(mismatched(), "vllm-base"),
                MODEL,
                service(
                    runtime={"name": "vllm-llama", "kind": "Runtime"},
                    generation=2,
                    router={"annotations": {MODE: "MultiNode"}},
                    status={
                        "observedGeneration": 1,
                        "conditions": [drifted("True"), drifted("True")],
                    },
                ),
            ],
            (
                "InvalidDeclaredKind",
                "DeclaredCompatibilityMismatch",
                "InheritanceUnavailable",
                "StatusStale",
                "ReportedDriftConflict",
                "InvalidComponentMode(router)",
            ),
            id="issues of a live InferenceService come in the S13.4 order",
        ),
        pytest.param(
            [
                MODEL,
                service(
                    runtime=MANAGED,
                    generation=None,
                    status={"observedGeneration": 1, "pinnedRevisionName": "cr-1"},
                ),
            ],
            (
                "InheritanceUnavailable",
                "LiveRuntimeUnavailable",
                "StatusInvalid",
                "ActiveRevisionUnavailable",
                "RevisionNotFound(cr-1)",
            ),
            id="issues of a pinned InferenceService come in the S13.4 order",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                service(
                    runtime=EXPLICIT, status={"observedGeneration": 1, "pinnedRevisionName": "cr-0"}
                ),
            ],
            ("ActiveRevisionUnavailable", "RevisionNotFound(cr-1)", "RevisionNotFound(cr-0)"),
            id="RevisionNotFound for the requested revision, then the reported one",
        ),
    ],
)
def test_issues(objects: list[dict[str, Any]], expected: tuple[str, ...]) -> None:
    assert issues_of(objects) == expected
