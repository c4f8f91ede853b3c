"""The Live and Active views of an unpinned InferenceService (SPEC S13): the runtime S2
selects, or why the view is unavailable (NotConfigured, NotFound, Unreadable, more than 1000
runtimes)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import model_manifest, runtime_manifest
from tests.cli.effective.reports import (
    LLAMA,
    MODEL,
    NAMED,
    FailingReader,
    mismatched,
    rows_of,
    service,
    tail,
)
from tests.core.effective.evidence import spec_hash

NOT_CONFIGURED = [
    ("Live", "STATE", "Unavailable"),
    ("Live", "REASON", "NotConfigured"),
    ("Active", "STATE", "Unavailable"),
    ("Active", "REASON", "NotConfigured"),
    *tail("AutoSync/Unavailable", "Unknown", "InheritanceUnavailable", "LiveRuntimeUnavailable"),
]
SELECTION_FAILED = [
    ("Live", "STATE", "Unavailable"),
    ("Live", "REASON", "NotFound"),
    ("Active", "STATE", "Unavailable"),
    ("Active", "REASON", "NotFound"),
    *tail("AutoSync/Unavailable", "Unknown", "InheritanceUnavailable", "LiveRuntimeUnavailable"),
]
UNREADABLE = [
    ("Live", "STATE", "Unavailable"),
    ("Live", "REASON", "Unreadable"),
    ("Active", "STATE", "Unavailable"),
    ("Active", "REASON", "Unreadable"),
    *tail("AutoSync/Unavailable", "Unknown", "InheritanceUnavailable", "LiveRuntimeUnavailable"),
]
TEAM = runtime_manifest("team-llama", cluster=False)
TEAM_HASH = spec_hash(TEAM["spec"])


@pytest.mark.parametrize(
    ("objects", "failing", "expected"),
    [
        pytest.param(
            [LLAMA, service(model=None)],
            (),
            NOT_CONFIGURED,
            id="NotConfigured: neither spec.runtime nor spec.model",
        ),
        pytest.param(
            [mismatched(), MODEL, service()],
            (),
            SELECTION_FAILED,
            id="NotFound: selection finds no runtime, and no component rows (OPEN-39)",
        ),
        pytest.param(
            [LLAMA, service()],
            (),
            SELECTION_FAILED,
            id="NotFound: the model to select for does not exist",
        ),
        pytest.param(
            [LLAMA, model_manifest("llama", distribution="Sharded"), service()],
            (),
            SELECTION_FAILED,
            id="NotFound: the model fails a pre-check",
        ),
        pytest.param(
            [LLAMA, TEAM, MODEL, service()],
            (),
            [
                ("Live", "STATE", "Available"),
                ("Live", "RUNTIME", "SR/default/team-llama"),
                ("Live", "HASH", TEAM_HASH[:8]),
                ("Live", "ENGINE", "RawDeployment (Default)"),
                ("Active", "STATE", "Available"),
                ("Active", "RUNTIME", "SR/default/team-llama"),
                ("Active", "HASH", TEAM_HASH[:8]),
                ("Active", "ENGINE", "RawDeployment (Default)"),
                *tail("AutoSync/NotApplicable", "Equal"),
            ],
            id="Selected: the runtime S2 selects, a ServingRuntime before a CSR",
        ),
        pytest.param(
            [LLAMA, MODEL, service()],
            ("clusterservingruntimes",),
            UNREADABLE,
            id="Unreadable: the runtime list times out",
        ),
        pytest.param(
            [LLAMA, MODEL, service()],
            ("basemodels",),
            UNREADABLE,
            id="Unreadable: the model read times out",
        ),
        pytest.param(
            [LLAMA, MODEL, service(runtime=NAMED)],
            ("servingruntimes",),
            [
                ("Live", "STATE", "Unavailable"),
                ("Live", "REASON", "Unreadable"),
                ("Live", "RUNTIME", "CSR/vllm-llama"),
                ("Active", "STATE", "Unavailable"),
                ("Active", "REASON", "Unreadable"),
                ("Active", "RUNTIME", "CSR/vllm-llama"),
                *tail(
                    "AutoSync/Unavailable",
                    "Unknown",
                    "InheritanceUnavailable",
                    "LiveRuntimeUnavailable",
                ),
            ],
            id="Unreadable: a named runtime keeps its declared name",
        ),
        pytest.param(
            [MODEL, service(runtime={"name": "team-llama", "kind": "ServingRuntime"})],
            (),
            [
                ("Live", "STATE", "Unavailable"),
                ("Live", "REASON", "NotFound"),
                ("Live", "RUNTIME", "SR/default/team-llama"),
                ("Active", "STATE", "Unavailable"),
                ("Active", "REASON", "NotFound"),
                ("Active", "RUNTIME", "SR/default/team-llama"),
                *tail(
                    "AutoSync/Unavailable",
                    "Unknown",
                    "InheritanceUnavailable",
                    "LiveRuntimeUnavailable",
                ),
            ],
            id="NotFound: a missing ServingRuntime shows its namespace",
        ),
    ],
)
def test_unavailable_and_selected_live_views(
    objects: list[dict[str, Any]], failing: tuple[str, ...], expected: list[tuple]
) -> None:
    assert rows_of(objects, FailingReader(objects, *failing)) == expected


def test_more_than_1000_runtimes_leave_the_live_view_unavailable() -> None:
    many = [runtime_manifest(f"r{i:04}") for i in range(1001)]
    assert rows_of([*many, MODEL, service()]) == UNREADABLE
