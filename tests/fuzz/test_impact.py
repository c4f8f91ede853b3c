"""S16.6, as a property: for random catalogs and changes, ``runtime impact`` lists exactly the
InferenceServices whose runtime (or RuntimeReady) the controller's whole pass would change, with
the runtimes that pass would name before and after."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ome_operator.core.impact import (
    RuntimeChange,
    runtime_impact,
    runtime_in_use,
    runtime_key,
    standing,
)
from ome_operator.core.reconciling import reconcile
from ome_operator.core.requeue import needs_pass
from ome_operator.core.resolving import resolution_manifest
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import from_manifest
from tests.builders import entry, make_isvc, make_model, make_runtime
from tests.fuzz.mutations import fuzz

_NAMES = ("r1", "r2", "r3")
_NAMESPACES = ("team-a", "team-b")


@st.composite
def runtimes(draw: st.DrawFn) -> Any:
    cluster = draw(st.booleans())
    fields: dict[str, Any] = {}
    auto = draw(st.sampled_from([True, False, None]))
    if auto is not None:
        fields["autoSelect"] = auto
    if draw(st.booleans()):
        fields["priority"] = draw(st.integers(1, 3))
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["disabled"] = True
    if draw(st.booleans()):
        spec["acceleratorRequirements"] = {"acceleratorClasses": ["h100"]}
    size = draw(st.sampled_from([None, ("1B", "10B"), ("50B", None)]))
    return make_runtime(
        draw(st.sampled_from(_NAMES)),
        cluster=cluster,
        namespace=draw(st.sampled_from(_NAMESPACES)),
        formats=[entry(fmt=draw(st.sampled_from(["safetensors", "onnx"])), **fields)],
        size_range=size,
        **spec,
    )


@st.composite
def isvcs(draw: st.DrawFn, index: int) -> Any:
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["runtime"] = {
            "name": draw(st.sampled_from(_NAMES)),
            **({"kind": "ServingRuntime"} if draw(st.booleans()) else {}),
        }
    if draw(st.booleans()):
        spec["acceleratorSelector"] = {"acceleratorClass": "h100"}
    return make_isvc(
        f"svc-{index}",
        namespace=draw(st.sampled_from(_NAMESPACES)),
        model=draw(st.sampled_from(["small", "large", "gone"])),
        **spec,
    )


def _unique(found: list[Any]) -> list[Any]:
    return list({runtime_key(r): r for r in found}.values())


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[Any], list[Any], RuntimeChange]:
    present = _unique(draw(st.lists(runtimes(), max_size=5)))
    services = [draw(isvcs(i)) for i in range(draw(st.integers(1, 6)))]
    applied = _unique(draw(st.lists(runtimes(), max_size=2)))
    applied_keys = {runtime_key(r) for r in applied}
    deletable = [runtime_key(r) for r in present if runtime_key(r) not in applied_keys]
    deleted = draw(st.sets(st.sampled_from(deletable))) if deletable else set()
    return present, services, RuntimeChange(tuple(applied), frozenset(deleted))


_MODELS = [
    make_model("small", modelParameterSize="7B"),
    make_model("large", fmt="onnx", modelParameterSize="70B"),
]


def _as_the_pass_writes_it(plan: Any) -> tuple[str, bool]:
    """The runtime the pass's status names ('-': none) and whether RuntimeReady is False."""
    status = plan.status or {}
    runtime, shown = status.get("runtime"), "-"
    if runtime is not None:
        scope = "CSR" if runtime["kind"] == "ClusterServingRuntime" else "SR"
        shown = f"{scope}/{runtime['name']}"
    ready = [c for c in status.get("conditions", ()) if c["type"] == "RuntimeReady"]
    return shown, bool(ready and ready[0]["status"] == "False")


@fuzz(300)
@given(worlds())
def test_impact_lists_exactly_what_the_controller_would_change(world) -> None:
    present, services, change = world
    subjects = standing(services, present, _MODELS)

    impact = runtime_impact(subjects, change)

    expected = []
    for isvc, snapshot in subjects:
        after = change.catalog(snapshot.runtimes, isvc.namespace)
        before_pass = _as_the_pass_writes_it(reconcile(isvc, snapshot))
        after_pass = _as_the_pass_writes_it(reconcile(isvc, replace(snapshot, runtimes=after)))
        if before_pass != after_pass:
            expected.append((isvc.namespace, isvc.name, before_pass[0], after_pass[0]))
    assert [(m.namespace, m.name, m.before, m.after) for m in impact.moves] == sorted(expected)
    assert impact.total == len(services)


def test_a_changed_catalog_is_the_catalog_of_the_changed_runtimes() -> None:
    kept, replaced, gone = make_runtime("a"), make_runtime("b"), make_runtime("c")
    new_b = make_runtime("b", disabled=True)
    catalog = RuntimeCatalog.of([kept, replaced, gone])

    changed = RuntimeChange((new_b,), frozenset({runtime_key(gone)})).catalog(catalog, "ns")

    assert changed == RuntimeCatalog.of([kept, new_b])
    assert changed.fits is catalog.fits


_MODES = st.sampled_from([None, "RawDeployment", "OMENative", "MultiNode", "multinode"])


@st.composite
def rich_manifests(draw: st.DrawFn) -> dict[str, Any]:
    """InferenceService manifests with everything resolution reads, and more it does not."""
    annotations = {"team": "x"}
    if draw(st.booleans()):
        annotations["ome.io/accelerator-class"] = draw(st.sampled_from(["h100", ""]))
    if (mode := draw(_MODES)) is not None:
        annotations["ome.io/deploymentMode"] = mode
    spec: dict[str, Any] = {"model": {"name": draw(st.sampled_from(["small", "large"]))}}
    if draw(st.booleans()):
        spec["runtime"] = {"name": draw(st.sampled_from(_NAMES))}
    if (mode := draw(st.sampled_from([None, "RawDeployment", "OMENative"]))) is not None:
        spec["deploymentMode"] = mode
    for component in ("engine", "decoder", "router"):
        if component == "engine" or draw(st.booleans()):
            declared: dict[str, Any] = {"minReplicas": 1, "labels": {"a": "b"}}
            if (mode := draw(_MODES)) is not None:
                declared["annotations"] = {"ome.io/deploymentMode": mode, "other": "y"}
            if draw(st.booleans()):
                declared["acceleratorOverride"] = {"acceleratorClass": "h100"}
            spec[component] = declared
    if draw(st.booleans()):
        spec["acceleratorSelector"] = {"acceleratorClass": "h100"}
    manifest = make_isvc("svc", namespace="team-a").model_dump(by_alias=True, exclude_none=True)
    manifest["metadata"] = {"name": "svc", "namespace": "team-a", "annotations": annotations}
    manifest["spec"] = spec
    condition = {"type": "RuntimeReady", "status": draw(st.sampled_from(["True", "False"]))}
    manifest["status"] = {"conditions": [{"type": "Ready", "status": "True"}, condition]}
    return manifest


@st.composite
def auto_selectable(draw: st.DrawFn) -> Any:
    """Runtimes every model check lets through: what tells InferenceServices apart decides."""
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["acceleratorRequirements"] = {"acceleratorClasses": ["h100"]}
    for config in ("engineConfig", "decoderConfig"):
        if (mode := draw(_MODES)) is not None:
            spec[config] = {"annotations": {"ome.io/deploymentMode": mode}}
    return make_runtime(
        draw(st.sampled_from(_NAMES)),
        cluster=draw(st.booleans()),
        namespace="team-a",
        formats=[entry(fmt=fmt, autoSelect=True) for fmt in ("safetensors", "onnx")],
        **spec,
    )


@fuzz(300)
@given(rich_manifests(), st.lists(auto_selectable(), max_size=5))
def test_the_resolution_manifest_resolves_as_the_whole_one(manifest, present) -> None:
    whole = from_manifest(manifest)
    part = from_manifest(resolution_manifest(manifest))
    [(_, snapshot)] = standing([whole], _unique(present), _MODELS)

    assert runtime_in_use(part, snapshot) == runtime_in_use(whole, snapshot)
    for runtime in present:
        assert needs_pass(part, snapshot, runtime, None) == needs_pass(
            whole, snapshot, runtime, None
        )
