"""``kubectl ome runtime effective`` (S13): report rules, every output format, every error.

Objects are manifests answered by ``ManifestReader`` (S16.1), or by ``FailingReader`` when a
read has to fail the way an API server's does; no cluster is needed.
"""

from __future__ import annotations

import hashlib
import io
import json
import pathlib
import textwrap
from typing import Any

import pytest
import yaml

from ome_operator.cli.effective import (
    UNAVAILABLE_CONTEXT_ROWS,
    collect_evidence,
    context_rows,
    effective_rows,
    run_effective,
    selection_context_rows,
)
from ome_operator.cli.main import main
from ome_operator.cluster.manifests import ManifestReader
from ome_operator.cluster.objects import INFERENCE_SERVICE, ReadTimeoutError, Resource
from ome_operator.core.effective.report import build_report
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
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest

TIMEOUT = "the server was unable to return a response in the time allotted"
MODE = "ome.io/deploymentMode"


class FailingReader:
    """Answers like ``ManifestReader`` but times out on every read of the ``failing`` plurals."""

    def __init__(self, objects: list[dict[str, Any]], *failing: str) -> None:
        self._inner = ManifestReader(objects)
        self._failing = failing

    def _check(self, resource: Resource) -> None:
        if resource.plural in self._failing:
            raise ReadTimeoutError(TIMEOUT)

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        self._check(resource)
        return self._inner.get(resource, namespace, name)

    def list(self, resource: Resource, namespace: str | None, **kwargs: Any) -> list[dict]:
        self._check(resource)
        return self._inner.list(resource, namespace, **kwargs)


def service(
    name: str = "chat",
    *,
    generation: int | None = 1,
    status: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An InferenceService whose status is Current unless ``status`` says otherwise."""
    manifest = isvc_manifest(name, **spec)
    if generation is not None:
        manifest["metadata"]["generation"] = generation
    manifest["status"] = {"observedGeneration": 1} if status is None else status
    return manifest


def revision(name: str, data: Any, namespace: str = "ome") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": namespace},
        "revision": 1,
        "data": data,
    }


def spec_hash(spec: dict[str, Any]) -> str:
    """OPEN-40 computed here from the manifest: CRD defaults, canonical JSON, sha256."""
    entries = [
        {
            **item,
            "modelFormat": {"operator": "Equal", "weight": 1, **item["modelFormat"]},
            "modelFramework": {"operator": "Equal", "weight": 1, **item["modelFramework"]},
        }
        for item in spec["supportedModelFormats"]
    ]
    canonical = json.dumps(
        {**spec, "supportedModelFormats": entries}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def effective(
    objects: list[dict[str, Any]], name: str = "chat", output: str = "table", **kwargs: Any
) -> tuple[int, str, str]:
    reader = kwargs.pop("reader", None) or ManifestReader(objects)
    out, err = io.StringIO(), io.StringIO()
    code = run_effective(name, output, kwargs.pop("ome", "ome"), reader, "default", out, err)
    return code, out.getvalue(), err.getvalue()


def rows_of(objects: list[dict[str, Any]], reader: Any = None) -> list[tuple[str, str, str]]:
    reader = reader or ManifestReader(objects)
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    return effective_rows(build_report(collect_evidence(reader, "default", isvc, "ome")))


def service_rows(objects: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [row for row in rows_of(objects) if row[0] == "Service"]


def issues_of(objects: list[dict[str, Any]], reader: Any = None) -> tuple[str, ...]:
    return tuple(v for s, f, v in rows_of(objects, reader) if f == "ISSUE")


LLAMA = runtime_manifest("vllm-llama")
LLAMA_HASH = spec_hash(LLAMA["spec"])
OTHER = runtime_manifest("vllm-llama", formats=[entry(autoSelect=True, priority=2)])
OTHER_HASH = spec_hash(OTHER["spec"])
MODEL = model_manifest("llama")
NAMED = {"name": "vllm-llama"}
MANAGED = {"name": "vllm-llama", "autoSync": False}


def live_rows(value_hash: str = LLAMA_HASH) -> list[tuple[str, str, str]]:
    return [
        ("Live", "STATE", "Available"),
        ("Live", "RUNTIME", "CSR/vllm-llama"),
        ("Live", "HASH", value_hash[:8]),
        ("Live", "ENGINE", "RawDeployment (Default)"),
    ]


def tail(pin: str, relation: str, *issues: str) -> list[tuple[str, str, str]]:
    return [
        ("Service", "PIN", pin),
        ("Service", "SYNC", "Absent"),
        ("Service", "STATUS", "Current"),
        ("Service", "DRIFT", "NotReported"),
        ("Service", "LIVE-RELATION", relation),
        *(("Service", "ISSUE", issue) for issue in issues),
    ]


def test_the_s13_3_illustration_with_the_real_hash() -> None:
    short = LLAMA_HASH[:8]
    expected = textwrap.dedent(f"""\
        SCOPE     FIELD           VALUE
        Live      STATE           Available
        Live      RUNTIME         CSR/vllm-llama
        Live      HASH            {short}
        Live      ENGINE          RawDeployment (Default)
        Active    STATE           Available
        Active    RUNTIME         CSR/vllm-llama
        Active    HASH            {short}
        Active    ENGINE          RawDeployment (Default)
        Service   PIN             AutoSync/NotApplicable
        Service   SYNC            Absent
        Service   STATUS          Current
        Service   DRIFT           NotReported
        Service   LIVE-RELATION   Equal
        """)
    assert effective([LLAMA, MODEL, service(runtime=NAMED)]) == (0, expected, "")


def test_the_kubectl_plugin_prints_the_same_report_from_manifest_files(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([LLAMA, MODEL, service(runtime=NAMED)]))
    out, err = io.StringIO(), io.StringIO()
    argv = ["runtime", "effective", "chat", "-f", str(path)]
    code = main(argv, stdin=io.StringIO(), stdout=out, stderr=err)
    assert (code, out.getvalue(), err.getvalue()) == effective(
        [LLAMA, MODEL, service(runtime=NAMED)]
    )


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


def drifted(status: str, reason: str | None = None) -> dict[str, Any]:
    condition = {"type": "RuntimeDrifted", "status": status}
    return condition if reason is None else {**condition, "reason": reason}


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
EXPLICIT = {**MANAGED, "revision": "cr-1"}


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


def mismatched(name: str = "vllm-llama", **kwargs: Any) -> dict[str, Any]:
    return runtime_manifest(name, formats=[entry("gguf", autoSelect=True)], **kwargs)


def with_parent(manifest: dict[str, Any], parent: str) -> dict[str, Any]:
    manifest["metadata"]["annotations"] = {"ome.io/inherit-from": parent}
    return manifest


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


@pytest.mark.parametrize(
    ("runtime_spec", "isvc_spec", "expected"),
    [
        pytest.param(
            {},
            {"decoder": {}, "router": {}},
            [
                ("Live", "ENGINE", "RawDeployment (Default)"),
                ("Live", "DECODER", "RawDeployment (Default)"),
                ("Live", "ROUTER", "RawDeployment (Default)"),
            ],
            id="one row per declared component, engine, decoder, router",
        ),
        pytest.param(
            {"engineConfig": {"annotations": {MODE: "MultiNode"}}},
            {"deploymentMode": "OMENative"},
            [("Live", "ENGINE", "MultiNode (ComponentAnnotation)")],
            id="the runtime's annotation beats spec.deploymentMode",
        ),
        pytest.param(
            {"routerConfig": {"leader": {}}},
            {"deploymentMode": "OMENative", "router": {"annotations": {MODE: "RawDeployment"}}},
            [
                ("Live", "ENGINE", "OMENative (ServiceSpec)"),
                ("Live", "ROUTER", "RawDeployment (ComponentAnnotation)"),
            ],
            id="spec.deploymentMode, and a router annotation of its own",
        ),
        pytest.param(
            {"engineConfig": {"worker": {"size": 2}}},
            {"router": {"leader": {}}},
            [
                ("Live", "ENGINE", "OMENative (LeaderWorkerShape)"),
                ("Live", "ROUTER", "RawDeployment (Default)"),
            ],
            id="a leader/worker shape, never for the router",
        ),
    ],
)
def test_component_rows(
    runtime_spec: dict[str, Any], isvc_spec: dict[str, Any], expected: list[tuple]
) -> None:
    runtime = runtime_manifest("vllm-llama", **runtime_spec)
    rows = rows_of([runtime, MODEL, service(runtime=NAMED, **isvc_spec)])
    assert [r for r in rows if r[0] == "Live" and r[1] in ("ENGINE", "DECODER", "ROUTER")] == (
        expected
    )


def test_the_service_annotation_makes_every_component_virtual() -> None:
    isvc = service(runtime=NAMED, annotations={MODE: "VirtualDeployment"}, router={})
    rows = rows_of([LLAMA, MODEL, isvc])
    assert [r for r in rows if r[1] in ("ENGINE", "ROUTER")] == [
        ("Live", "ENGINE", "VirtualDeployment (ServiceAnnotation)"),
        ("Live", "ROUTER", "VirtualDeployment (ServiceAnnotation)"),
        ("Active", "ENGINE", "VirtualDeployment (ServiceAnnotation)"),
        ("Active", "ROUTER", "VirtualDeployment (ServiceAnnotation)"),
    ]


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:8]


def test_long_names_revisions_and_issues_keep_both_ends_and_a_digest() -> None:
    name = "vllm-" + "x" * 60 + "-instruct"
    revision_name = "cr-" + "y" * 60 + "-1"
    runtime = runtime_manifest(name)
    isvc = service(
        runtime={"name": name, "autoSync": False},
        status={"observedGeneration": 1, "pinnedRevisionName": revision_name},
    )
    runtime_value, issue = f"CSR/{name}", f"RevisionNotFound({revision_name})"
    shortened = {
        runtime_value: f"{runtime_value[:20]}...{runtime_value[-21:]}#{digest(runtime_value)}",
        revision_name: f"{revision_name[:20]}...{revision_name[-21:]}#{digest(revision_name)}",
        issue: f"{issue[:20]}...{issue[-21:]}#{digest(issue)}",
    }
    rows = rows_of([runtime, MODEL, isvc])
    assert [v for _, f, v in rows if f in ("RUNTIME", "REVISION", "ISSUE")] == [
        shortened[runtime_value],
        shortened[runtime_value],
        shortened[revision_name],
        "ActiveRevisionUnavailable",
        shortened[issue],
    ]
    assert all(len(v) <= 54 for _, _, v in rows)


def test_wide_prints_a_row_per_view_and_component_with_full_names() -> None:
    short = LLAMA_HASH[:8]
    objects = [LLAMA, MODEL, service(runtime=NAMED, decoder={})]
    expected = textwrap.dedent(f"""\
        VIEW     STATE       REASON   RUNTIME                            REVISION   HASH       COMPONENT   MODE            MODE-SOURCE   PIN        PIN-STATE       SYNC     STATUS    DRIFT         LIVE-RELATION   ISSUES
        Live     Available   -        ClusterServingRuntime/vllm-llama   -          {short}   engine      RawDeployment   Default       AutoSync   NotApplicable   Absent   Current   NotReported   Equal           -
        Live     Available   -        ClusterServingRuntime/vllm-llama   -          {short}   decoder     RawDeployment   Default       AutoSync   NotApplicable   Absent   Current   NotReported   Equal           -
        Active   Available   -        ClusterServingRuntime/vllm-llama   -          {short}   engine      RawDeployment   Default       AutoSync   NotApplicable   Absent   Current   NotReported   Equal           -
        Active   Available   -        ClusterServingRuntime/vllm-llama   -          {short}   decoder     RawDeployment   Default       AutoSync   NotApplicable   Absent   Current   NotReported   Equal           -
        """)  # noqa: E501
    assert effective(objects, output="wide") == (0, expected, "")


def test_wide_prints_one_dashed_row_for_a_view_without_components() -> None:
    objects = [
        LLAMA,
        MODEL,
        service(
            runtime={"name": "team-llama", "kind": "ServingRuntime", "autoSync": False},
            status={"observedGeneration": 1, "pinnedRevisionName": "cr-1"},
        ),
    ]
    expected = textwrap.dedent("""\
        VIEW     STATE         REASON     RUNTIME                             REVISION   HASH   COMPONENT   MODE   MODE-SOURCE   PIN          PIN-STATE         SYNC     STATUS    DRIFT         LIVE-RELATION   ISSUES
        Live     Unavailable   NotFound   ServingRuntime/default/team-llama   -          -      -           -      -             ManagedPin   RevisionMissing   Absent   Current   NotReported   Unknown         InheritanceUnavailable,LiveRuntimeUnavailable,ActiveRevisionUnavailable,RevisionNotFound(cr-1)
        Active   Unavailable   NotFound   ServingRuntime/default/team-llama   cr-1       -      -           -      -             ManagedPin   RevisionMissing   Absent   Current   NotReported   Unknown         InheritanceUnavailable,LiveRuntimeUnavailable,ActiveRevisionUnavailable,RevisionNotFound(cr-1)
        """)  # noqa: E501
    assert effective(objects, output="wide") == (0, expected, "")


def view_document(state: str, value_hash: str | None, revision_name: str | None = None) -> dict:
    return {
        "state": state,
        "reason": None,
        "runtime": {"kind": "ClusterServingRuntime", "namespace": None, "name": "vllm-llama"},
        "revision": revision_name,
        "hash": value_hash[:8] if value_hash else None,
        "fullHash": value_hash,
        "components": [{"component": "engine", "mode": "RawDeployment", "modeSource": "Default"}],
    }


def test_json_is_the_runtime_effective_report() -> None:
    isvc = service(runtime=NAMED)
    isvc["metadata"]["uid"] = "0d3c"
    expected = {
        "apiVersion": "cli.ome.io/v1alpha1",
        "kind": "RuntimeEffectiveReport",
        "target": {
            "namespace": "default",
            "name": "chat",
            "uid": "0d3c",
            "generation": 1,
            "observedGeneration": 1,
        },
        "selection": {
            "mode": "Explicit",
            "runtime": {"kind": "ClusterServingRuntime", "namespace": None, "name": "vllm-llama"},
            "candidates": 1,
        },
        "inheritance": {
            "state": "Observed",
            "reason": None,
            "chain": [{"kind": "ClusterServingRuntime", "namespace": None, "name": "vllm-llama"}],
        },
        "views": {
            "live": view_document("Available", LLAMA_HASH),
            "active": view_document("Available", LLAMA_HASH),
        },
        "service": {
            "pin": {"mode": "AutoSync", "state": "NotApplicable"},
            "sync": "Absent",
            "status": "Current",
            "drift": {"state": "NotReported", "cause": None},
            "liveRelation": "Equal",
            "issues": [],
        },
    }
    assert effective([LLAMA, MODEL, isvc], output="json") == (
        0,
        json.dumps(expected, indent=2) + "\n",
        "",
    )


def test_yaml_is_the_same_report_in_yaml() -> None:
    objects = [
        with_parent(runtime_manifest("vllm-llama"), "vllm-base"),
        runtime_manifest("vllm-base"),
        MODEL,
        revision("cr-1", {"spec": OTHER["spec"]}),
        service(runtime=EXPLICIT, status={}),
    ]
    live_hash = spec_hash(objects[0]["spec"])
    expected = textwrap.dedent(f"""\
        apiVersion: cli.ome.io/v1alpha1
        kind: RuntimeEffectiveReport
        target:
          namespace: default
          name: chat
          uid: null
          generation: 1
          observedGeneration: null
        selection:
          mode: Explicit
          runtime:
            kind: ClusterServingRuntime
            namespace: null
            name: vllm-llama
          candidates: 2
        inheritance:
          state: Observed
          reason: null
          chain:
          - kind: ClusterServingRuntime
            namespace: null
            name: vllm-base
          - kind: ClusterServingRuntime
            namespace: null
            name: vllm-llama
        views:
          live:
            state: Available
            reason: null
            runtime:
              kind: ClusterServingRuntime
              namespace: null
              name: vllm-llama
            revision: null
            hash: {live_hash[:8]!r}
            fullHash: {live_hash!r}
            components:
            - component: engine
              mode: RawDeployment
              modeSource: Default
          active:
            state: Available
            reason: null
            runtime:
              kind: ClusterServingRuntime
              namespace: null
              name: vllm-llama
            revision: cr-1
            hash: {OTHER_HASH[:8]!r}
            fullHash: {OTHER_HASH!r}
            components:
            - component: engine
              mode: RawDeployment
              modeSource: Default
        service:
          pin:
            mode: ExplicitPin
            state: Resolved
          sync: Absent
          status: Unobserved
          drift:
            state: NotReported
            cause: null
          liveRelation: Different
          issues:
          - StatusUnobserved
        """)
    code, out, err = effective(objects, output="yaml")
    assert (code, err) == (0, "")
    assert yaml.safe_load(out) == yaml.safe_load(expected)
    assert out == yaml.safe_dump(yaml.safe_load(expected), sort_keys=False)


def test_selection_context_rows_for_explain_with_effective() -> None:
    objects = [
        with_parent(runtime_manifest("vllm-llama"), "vllm-base"),
        runtime_manifest("vllm-base"),
        MODEL,
        service(runtime=NAMED),
    ]
    reader = ManifestReader(objects)
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    report = build_report(collect_evidence(reader, "default", isvc, "ome"))
    context = [
        ("Service", "SELECTION", "Explicit"),
        ("Service", "SOURCE", "CSR/vllm-llama"),
        ("Source", "INHERITANCE", "Observed"),
        ("Source", "ROOT-FIRST", "CSR/vllm-base"),
        ("Source", "ROOT-FIRST", "CSR/vllm-llama"),
        ("Service", "CAVEAT", "Independent snapshot; not rollout convergence"),
    ]
    assert selection_context_rows(report) == context
    assert context_rows(reader, "default", isvc, "ome") == context + effective_rows(report)


def test_selection_context_names_the_inheritance_problem() -> None:
    objects = [with_parent(runtime_manifest("vllm-llama"), "vllm-base"), MODEL, service()]
    reader = ManifestReader(objects)
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    report = build_report(collect_evidence(reader, "default", isvc, "ome"))
    assert selection_context_rows(report) == [
        ("Service", "SELECTION", "Selected"),
        ("Service", "SOURCE", "CSR/vllm-llama"),
        ("Source", "INHERITANCE", "Unavailable"),
        ("Source", "REASON", "NotFound"),
        ("Service", "CAVEAT", "Independent snapshot; not rollout convergence"),
    ]


def test_context_that_cannot_be_collected_is_two_rows() -> None:
    broken = runtime_manifest("vllm-llama", disabled="yes")
    reader = ManifestReader([broken, MODEL, service(runtime=NAMED)])
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    assert context_rows(reader, "default", isvc, "ome") == list(UNAVAILABLE_CONTEXT_ROWS)
    assert UNAVAILABLE_CONTEXT_ROWS == (
        ("Service", "EVIDENCE", "Unavailable"),
        ("Service", "CAVEAT", "Selector verdict above is unchanged"),
    )


DNS_DETAIL = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("objects", "name", "output", "kwargs", "message"),
    [
        pytest.param(
            [],
            "chat",
            "xml",
            {},
            'unknown output format "xml": must be one of table, wide, json, yaml',
            id="an unknown output format",
        ),
        pytest.param(
            [],
            "Chat",
            "table",
            {},
            f'InferenceService name "Chat" is invalid: {DNS_DETAIL}',
            id="a name with capitals is not a DNS-1123 subdomain",
        ),
        pytest.param(
            [],
            "a" * 254 + "-",
            "table",
            {},
            f'InferenceService name "{"a" * 254}-" is invalid: must be no more than 253 '
            f"characters; {DNS_DETAIL}",
            id="a long name that ends in a dash has both problems",
        ),
        pytest.param(
            [LLAMA],
            "chat",
            "table",
            {},
            'get InferenceService: inferenceservices.ome.io "chat" not found',
            id="a missing InferenceService gives the API's NotFound text",
        ),
        pytest.param(
            [service()],
            "chat",
            "table",
            {"reader": FailingReader([service()], "inferenceservices")},
            f"get InferenceService: {TIMEOUT}",
            id="an InferenceService read that fails",
        ),
        pytest.param(
            [service(runtime=MANAGED, status={"pinnedRevisionName": "cr-1"}), LLAMA],
            "chat",
            "table",
            {"ome": ""},
            "collect runtime evidence: an OME namespace is required to read ControllerRevisions",
            id="a pin with an empty --ome-namespace",
        ),
        pytest.param(
            [{**service(), "spec": {"runtime": {"name": 7}}}],
            "chat",
            "table",
            {},
            'InferenceService "default/chat" is invalid: spec.runtime.name: must be a string '
            "(got 7)",
            id="a malformed InferenceService",
        ),
        pytest.param(
            [service(status={"observedGeneration": "1", "conditions": ["x"]}), LLAMA, MODEL],
            "chat",
            "table",
            {},
            'InferenceService "default/chat" is invalid: status.observedGeneration: must be an '
            'integer (got "1"); status.conditions[0]: must be an object (got "x")',
            id="a malformed status",
        ),
        pytest.param(
            [runtime_manifest("vllm-llama", disabled="yes"), MODEL, service()],
            "chat",
            "table",
            {},
            'ClusterServingRuntime "vllm-llama" is invalid: spec.disabled: must be a boolean '
            '(got "yes")',
            id="a malformed runtime",
        ),
    ],
)
def test_errors(
    objects: list[dict], name: str, output: str, kwargs: dict[str, Any], message: str
) -> None:
    assert effective(objects, name, output, **kwargs) == (1, "", f"error: {message}\n")
