"""Pins (SPEC S13): every PIN state and the Active view it gives, read from the pinned
ControllerRevision in the OME namespace, or unavailable when that read fails."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import runtime_manifest
from tests.cli.effective.reports import (
    EXPLICIT,
    LLAMA,
    LLAMA_HASH,
    MANAGED,
    MODEL,
    NAMED,
    OTHER,
    OTHER_HASH,
    FailingReader,
    issues_of,
    revision,
    rows_of,
    service,
    tail,
)


def live_rows(value_hash: str = LLAMA_HASH) -> list[tuple[str, str, str]]:
    return [
        ("Live", "STATE", "Available"),
        ("Live", "RUNTIME", "CSR/vllm-llama"),
        ("Live", "HASH", value_hash[:8]),
        ("Live", "ENGINE", "RawDeployment (Default)"),
    ]


def pinned_rows(
    pin: str,
    active: list[tuple[str, str, str]],
    relation: str,
    *issues: str,
    live: list[tuple[str, str, str]] | None = None,
) -> list[tuple[str, str, str]]:
    return [*(live_rows() if live is None else live), *active, *tail(pin, relation, *issues)]


def active_revision(name: str, value_hash: str) -> list[tuple[str, str, str]]:
    return [
        ("Active", "STATE", "Available"),
        ("Active", "RUNTIME", "CSR/vllm-llama"),
        ("Active", "REVISION", name),
        ("Active", "HASH", value_hash[:8]),
        ("Active", "ENGINE", "RawDeployment (Default)"),
    ]


def active_unavailable(reason: str, name: str | None = None) -> list[tuple[str, str, str]]:
    rows = [
        ("Active", "STATE", "Unavailable"),
        ("Active", "REASON", reason),
        ("Active", "RUNTIME", "CSR/vllm-llama"),
    ]
    return rows + ([("Active", "REVISION", name)] if name else [])


def as_active(rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [("Active", field, value) for _, field, value in rows]


DISABLED_LIVE = [
    ("Live", "STATE", "Unavailable"),
    ("Live", "REASON", "Disabled"),
    ("Live", "RUNTIME", "CSR/vllm-llama"),
]
MISSING_LIVE = [
    ("Live", "STATE", "Unavailable"),
    ("Live", "REASON", "NotFound"),
    ("Live", "RUNTIME", "CSR/vllm-llama"),
]


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(
            [MODEL, service(runtime=NAMED)],
            pinned_rows(
                "AutoSync/Unavailable",
                as_active(MISSING_LIVE),
                "Unknown",
                "InheritanceUnavailable",
                "LiveRuntimeUnavailable",
                live=MISSING_LIVE,
            ),
            id="AutoSync/Unavailable: the named runtime is missing",
        ),
        pytest.param(
            [LLAMA, MODEL, service(runtime=MANAGED)],
            pinned_rows(
                "ManagedPin/AwaitingPin",
                as_active(live_rows()),
                "Equal",
                "ActiveRevisionUnreported",
            ),
            id="ManagedPin/AwaitingPin: no pinnedRevisionName yet, Active is Live",
        ),
        pytest.param(
            [runtime_manifest("vllm-llama", disabled=True), MODEL, service(runtime=MANAGED)],
            pinned_rows(
                "ManagedPin/Unavailable",
                as_active(DISABLED_LIVE),
                "Unknown",
                "InheritanceUnavailable",
                "LiveRuntimeUnavailable",
                "ActiveRevisionUnavailable",
                live=DISABLED_LIVE,
            ),
            id="ManagedPin/Unavailable: awaiting a pin while the live runtime is disabled",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                revision("cr-1", {"spec": LLAMA["spec"]}),
                service(
                    runtime=MANAGED, status={"observedGeneration": 1, "pinnedRevisionName": "cr-1"}
                ),
            ],
            pinned_rows("ManagedPin/Resolved", active_revision("cr-1", LLAMA_HASH), "Equal"),
            id="ManagedPin/Resolved: the reported revision holds the live spec",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                service(
                    runtime=MANAGED, status={"observedGeneration": 1, "pinnedRevisionName": "cr-1"}
                ),
            ],
            pinned_rows(
                "ManagedPin/RevisionMissing",
                active_unavailable("NotFound", "cr-1"),
                "Unknown",
                "ActiveRevisionUnavailable",
                "RevisionNotFound(cr-1)",
            ),
            id="ManagedPin/RevisionMissing: the reported revision does not exist",
        ),
        pytest.param(
            [LLAMA, MODEL, revision("cr-1", {"spec": OTHER["spec"]}), service(runtime=EXPLICIT)],
            pinned_rows("ExplicitPin/Resolved", active_revision("cr-1", OTHER_HASH), "Different"),
            id="ExplicitPin/Resolved: the requested revision differs from live",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                revision("cr-1", {"spec": LLAMA["spec"]}),
                revision("cr-0", {"spec": OTHER["spec"]}),
                service(
                    runtime=EXPLICIT, status={"observedGeneration": 1, "pinnedRevisionName": "cr-0"}
                ),
            ],
            pinned_rows(
                "ExplicitPin/DesiredReportedMismatch", active_revision("cr-1", LLAMA_HASH), "Equal"
            ),
            id="ExplicitPin/DesiredReportedMismatch: status reports another revision",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                revision("cr-1", {"spec": ["not", "a", "mapping"]}),
                service(runtime=EXPLICIT),
            ],
            pinned_rows(
                "ExplicitPin/RevisionInvalid",
                active_unavailable("MalformedPayload", "cr-1"),
                "Unknown",
                "ActiveRevisionUnavailable",
            ),
            id="ExplicitPin/RevisionInvalid: data.spec is not a mapping",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                revision("cr-1", {"spec": {"supportedModelFormats": "many"}}),
                service(runtime=EXPLICIT),
            ],
            pinned_rows(
                "ExplicitPin/RevisionInvalid",
                active_unavailable("MalformedPayload", "cr-1"),
                "Unknown",
                "ActiveRevisionUnavailable",
            ),
            id="ExplicitPin/RevisionInvalid: data.spec is no runtime spec",
        ),
        pytest.param(
            [
                LLAMA,
                MODEL,
                revision("cr-1", {"spec": {**LLAMA["spec"], "disabled": True}}),
                service(runtime=EXPLICIT),
            ],
            pinned_rows(
                "ExplicitPin/RevisionDisabled",
                active_unavailable("Disabled", "cr-1"),
                "Unknown",
                "ActiveRevisionUnavailable",
            ),
            id="ExplicitPin/RevisionDisabled: the revision's spec is disabled",
        ),
        pytest.param(
            [LLAMA, MODEL, service(runtime={**EXPLICIT, "kind": "Runtime"})],
            pinned_rows(
                "InvalidPin/InvalidIntent",
                active_unavailable("MalformedPayload"),
                "Unknown",
                "InvalidDeclaredKind",
                "ActiveRevisionUnavailable",
            ),
            id="InvalidPin/InvalidIntent: autoSync false with an unknown kind",
        ),
    ],
)
def test_pin_states_and_views(objects: list[dict[str, Any]], expected: list[tuple]) -> None:
    assert rows_of(objects) == expected


def test_an_unreadable_pinned_revision_leaves_the_pin_unavailable() -> None:
    reader = FailingReader(
        [LLAMA, MODEL, revision("cr-1", {"spec": LLAMA["spec"]}), service(runtime=EXPLICIT)],
        "controllerrevisions",
    )
    assert rows_of([], reader) == pinned_rows(
        "ExplicitPin/Unavailable",
        active_unavailable("Unreadable", "cr-1"),
        "Unknown",
        "ActiveRevisionUnavailable",
    )


def test_revisions_are_read_in_the_ome_namespace_only() -> None:
    objects = [
        LLAMA,
        MODEL,
        revision("cr-1", {"spec": LLAMA["spec"]}, namespace="default"),
        service(runtime=EXPLICIT),
    ]
    assert issues_of(objects) == ("ActiveRevisionUnavailable", "RevisionNotFound(cr-1)")
