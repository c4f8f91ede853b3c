"""The pure rules of the effective report (SPEC S13, core/effective/vocabulary.py): the pin mode,
the SYNC, STATUS and DRIFT states, the live relation, the runtime spec hash (OPEN-40) and the
inheritance chain, each one value from its inputs."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.effective.vocabulary import (
    drift_of,
    inheritance_of,
    live_relation,
    pin_mode,
    runtime_spec_hash,
    status_state,
    sync_state,
)
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import RuntimeRef, from_manifest
from tests.builders import entry, runtime_manifest
from tests.core.effective.evidence import drifted, spec_hash


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        pytest.param(None, "AutoSync", id="no spec.runtime follows the live runtime"),
        pytest.param({"name": "r"}, "AutoSync", id="a name with autoSync unset is AutoSync"),
        pytest.param({"name": "r", "autoSync": True}, "AutoSync", id="autoSync true is AutoSync"),
        pytest.param({"name": "r", "autoSync": False}, "ManagedPin", id="autoSync false pins"),
        pytest.param(
            {"name": "r", "autoSync": False, "revision": "cr-r-1"},
            "ExplicitPin",
            id="autoSync false with a revision is an explicit pin",
        ),
        pytest.param(
            {"name": "r", "autoSync": False, "revision": ""},
            "ManagedPin",
            id="an empty revision is no revision",
        ),
        pytest.param(
            {"name": "r", "autoSync": False, "kind": "Runtime", "revision": "cr-r-1"},
            "InvalidPin",
            id="autoSync false with an unknown kind is an invalid pin",
        ),
        pytest.param(
            {"name": "r", "kind": "Runtime"}, "AutoSync", id="an unknown kind still follows live"
        ),
        pytest.param(
            {"name": "", "autoSync": False}, "AutoSync", id="an empty name names no runtime"
        ),
    ],
)
def test_pin_mode(ref: dict[str, Any] | None, expected: str) -> None:
    assert pin_mode(None if ref is None else RuntimeRef.model_validate(ref)) == expected


@pytest.mark.parametrize(
    ("annotation", "token", "expected"),
    [
        pytest.param(None, None, "Absent", id="neither annotation nor status token"),
        pytest.param("", "", "Absent", id="empty values count as unset"),
        pytest.param(None, "t1", "StatusOnly", id="only the status token"),
        pytest.param("t1", "t1", "Acknowledged", id="the status holds the annotation's token"),
        pytest.param("t2", "t1", "Pending", id="the annotation holds a newer token"),
        pytest.param("t1", None, "Pending", id="the annotation holds a token never recorded"),
    ],
)
def test_sync_state(annotation: str | None, token: str | None, expected: str) -> None:
    assert sync_state(annotation, token) == expected


@pytest.mark.parametrize(
    ("generation", "observed", "expected"),
    [
        pytest.param(3, None, "Unobserved", id="observedGeneration unset"),
        pytest.param(3, 0, "Unobserved", id="observedGeneration 0 is unset, as the API omits it"),
        pytest.param(3, 3, "Current", id="observedGeneration equals generation"),
        pytest.param(3, 2, "Stale", id="observedGeneration lower than generation"),
        pytest.param(3, 4, "Invalid", id="observedGeneration higher than generation"),
    ],
)
def test_status_state(generation: int, observed: int | None, expected: str) -> None:
    assert status_state(generation, observed) == expected


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([], ("NotReported", None), id="no RuntimeDrifted condition"),
        pytest.param(
            [{"type": "Ready", "status": "True"}],
            ("NotReported", None),
            id="other conditions are not drift",
        ),
        pytest.param(
            [drifted("True", "RevisionMismatch")],
            ("ReportedTrue", "RevisionMismatch"),
            id="True with a known reason",
        ),
        pytest.param(
            [drifted("False", "RevisionMissing")],
            ("ReportedFalse", "RevisionMissing"),
            id="False with a known reason",
        ),
        pytest.param(
            [drifted("Unknown", "SourceRuntimeMissing")],
            ("ReportedUnknown", "SourceRuntimeMissing"),
            id="Unknown with a known reason",
        ),
        pytest.param(
            [drifted("True", "RuntimeMismatch")],
            ("ReportedTrue", "RuntimeMismatch"),
            id="RuntimeMismatch is a known reason",
        ),
        pytest.param(
            [drifted("True", "PinAdvanced")],
            ("ReportedTrue", "Other"),
            id="another reason is Other",
        ),
        pytest.param([drifted("True")], ("ReportedTrue", "Other"), id="no reason is Other"),
        pytest.param(
            [drifted("Maybe", "RevisionMismatch")],
            ("Malformed", "RevisionMismatch"),
            id="another status is Malformed and keeps its cause",
        ),
        pytest.param(
            [drifted("True", "RevisionMismatch"), drifted("True", "RevisionMismatch")],
            ("Malformed", None),
            id="a duplicated condition is Malformed without cause",
        ),
    ],
)
def test_drift(conditions: list[dict[str, Any]], expected: tuple[str, str | None]) -> None:
    assert drift_of(conditions) == expected


@pytest.mark.parametrize(
    ("live", "active", "expected"),
    [
        pytest.param("ab" * 32, "ab" * 32, "Equal", id="equal full hashes"),
        pytest.param("ab" * 32, "cd" * 32, "Different", id="different short hashes"),
        pytest.param(
            "12345678" + "a" * 56,
            "12345678" + "b" * 56,
            "Ambiguous",
            id="full hashes differ but their 8-character forms are equal",
        ),
        pytest.param(None, "ab" * 32, "Unknown", id="the live view has no hash"),
        pytest.param("ab" * 32, None, "Unknown", id="the active view has no hash"),
    ],
)
def test_live_relation(live: str | None, active: str | None, expected: str) -> None:
    assert live_relation(live, active) == expected


def test_the_hash_applies_crd_defaults_so_a_manifest_hashes_like_the_served_object() -> None:
    written = runtime_manifest("r")["spec"]
    served = {
        "supportedModelFormats": [
            {
                "autoSelect": True,
                "modelFramework": {"weight": 1, "name": "transformers", "operator": "Equal"},
                "modelFormat": {"operator": "Equal", "name": "safetensors", "weight": 1},
            }
        ]
    }
    changed = runtime_manifest("r", formats=[entry(autoSelect=True, priority=2)])["spec"]
    assert runtime_spec_hash(written) == runtime_spec_hash(served) == spec_hash(written)
    assert runtime_spec_hash(changed) != runtime_spec_hash(written)


def chain_runtime(name: str, parent: str | None = None, **kwargs: Any) -> Any:
    manifest = runtime_manifest(name, **kwargs)
    if parent is not None:
        manifest["metadata"]["annotations"] = {"ome.io/inherit-from": parent}
    return from_manifest(manifest)


def links(*names: str) -> list[Any]:
    """A chain where each runtime inherits from the next one; the last has no parent."""
    return [
        chain_runtime(n, names[i + 1] if i + 1 < len(names) else None) for i, n in enumerate(names)
    ]


@pytest.mark.parametrize(
    ("runtimes", "expected"),
    [
        pytest.param(links("a"), ("Observed", None, ("CSR/a",)), id="no annotation: one runtime"),
        pytest.param(
            links("a", "b", "c"),
            ("Observed", None, ("CSR/c", "CSR/b", "CSR/a")),
            id="the chain prints root first and ends with the runtime",
        ),
        pytest.param(
            links("a", "b", "c", "d", "e"),
            ("Observed", None, ("CSR/e", "CSR/d", "CSR/c", "CSR/b", "CSR/a")),
            id="five runtimes is the longest chain",
        ),
        pytest.param(
            links("a", "b", "c", "d", "e", "f"),
            ("Unavailable", "MaxDepthExceeded", ()),
            id="a sixth runtime exceeds the depth",
        ),
        pytest.param(
            [chain_runtime("a", "gone")],
            ("Unavailable", "NotFound", ()),
            id="a missing parent",
        ),
        pytest.param(
            [chain_runtime("a", "b"), chain_runtime("b", "a")],
            ("Unavailable", "Cycle", ()),
            id="a parent already in the chain is a cycle",
        ),
        pytest.param(
            [chain_runtime("a", "a")], ("Unavailable", "Cycle", ()), id="a runtime its own parent"
        ),
        pytest.param(
            [chain_runtime("a", "b"), chain_runtime("b", cluster=False)],
            ("Unavailable", "NotFound", ()),
            id="a parent is looked up as a ClusterServingRuntime only",
        ),
    ],
)
def test_inheritance(runtimes: list[Any], expected: tuple[str, str | None, tuple]) -> None:
    got = inheritance_of(runtimes[0], RuntimeCatalog.of(runtimes))
    assert (got.state, got.reason, tuple(r.short for r in got.chain)) == expected
