"""Rules of SPEC S2.6 (where each side declares a mode), S3.1 / S3.2 (values and places), S3.3
(per-component resolution with its source) and S3.4 (modes a component cannot run)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.deployment_modes import (
    DeploymentMode,
    InvalidComponentModeError,
    ModeSource,
    ResolvedMode,
    check_component_mode,
    mode_mismatch_reason,
    requested_mode,
    requested_modes,
    resolve_component_mode,
    runtime_mode,
)
from ome_operator.core.merging import merge_component
from ome_operator.models import InferenceService, ServingRuntime
from tests.builders import make_isvc, make_runtime

MODE = "ome.io/deploymentMode"
RAW, NATIVE, MULTI, VIRTUAL = (
    DeploymentMode.RAW_DEPLOYMENT,
    DeploymentMode.OME_NATIVE,
    DeploymentMode.MULTI_NODE,
    DeploymentMode.VIRTUAL_DEPLOYMENT,
)


def _annotated(mode: str) -> dict[str, Any]:
    return {"annotations": {MODE: mode}}


# --- S3.1 / S13.4: the vocabulary -----------------------------------------------------------


def test_the_four_modes_are_spelled_exactly() -> None:
    assert [m.value for m in DeploymentMode] == [
        "RawDeployment",
        "OMENative",
        "MultiNode",
        "VirtualDeployment",
    ]


def test_the_five_mode_sources_are_spelled_exactly() -> None:
    assert [s.value for s in ModeSource] == [
        "ServiceAnnotation",
        "ComponentAnnotation",
        "ServiceSpec",
        "LeaderWorkerShape",
        "Default",
    ]


# --- S2.6: what the runtime declares --------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime_kwargs", "component", "expected"),
    [
        pytest.param(
            {"engineConfig": _annotated("RawDeployment")},
            "engine",
            RAW,
            id="RawDeployment in engineConfig annotations counts",
        ),
        pytest.param(
            {"engineConfig": _annotated("OMENative")},
            "engine",
            NATIVE,
            id="OMENative in engineConfig annotations counts",
        ),
        pytest.param(
            {"engineConfig": _annotated("MultiNode")},
            "engine",
            MULTI,
            id="MultiNode in engineConfig annotations counts",
        ),
        pytest.param(
            {"engineConfig": _annotated("VirtualDeployment")},
            "engine",
            VIRTUAL,
            id="VirtualDeployment in engineConfig annotations counts",
        ),
        pytest.param(
            {"decoderConfig": _annotated("MultiNode")},
            "decoder",
            MULTI,
            id="the decoder's mode comes from decoderConfig annotations",
        ),
        pytest.param(
            {"decoderConfig": _annotated("MultiNode")},
            "engine",
            None,
            id="decoderConfig declares nothing for the engine",
        ),
        pytest.param(
            {"engineConfig": _annotated("multinode")},
            "engine",
            None,
            id="a runtime mode in another letter case is no mode",
        ),
        pytest.param(
            {"engineConfig": _annotated("MultiNodeRayVLLM")},
            "engine",
            None,
            id="a runtime value that is not a mode is no mode",
        ),
        pytest.param({}, "engine", None, id="a runtime without engineConfig declares no mode"),
        pytest.param(
            {"engineConfig": {"leader": {}, "worker": {"size": 1}}},
            "engine",
            None,
            id="a runtime's leader and worker shape declares no mode",
        ),
    ],
)
def test_the_mode_a_runtime_declares(
    runtime_kwargs: dict[str, Any], component: str, expected: DeploymentMode | None
) -> None:
    assert runtime_mode(make_runtime(**runtime_kwargs), component) == expected


def test_runtime_metadata_annotations_are_never_read_for_modes() -> None:
    runtime = make_runtime()
    raw = runtime.raw()
    raw["metadata"]["annotations"] = {MODE: "MultiNode"}
    assert runtime_mode(type(runtime).model_validate(raw), "engine") is None


# --- S2.6: what the InferenceService requests -----------------------------------------------


@pytest.mark.parametrize(
    ("isvc_kwargs", "component", "expected"),
    [
        pytest.param(
            {"engine": _annotated("MultiNode")},
            "engine",
            MULTI,
            id="the engine annotation is the engine's request",
        ),
        pytest.param(
            {"engine": _annotated("MultiNode"), "deploymentMode": "OMENative"},
            "engine",
            MULTI,
            id="the engine annotation beats spec.deploymentMode",
        ),
        pytest.param(
            {"engine": _annotated("omenative"), "deploymentMode": "RawDeployment"},
            "engine",
            RAW,
            id="a misspelled engine annotation falls back to spec.deploymentMode",
        ),
        pytest.param(
            {"engine": _annotated("omenative")},
            "engine",
            None,
            id="a misspelled engine annotation without spec.deploymentMode asks no mode",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            "engine",
            NATIVE,
            id="spec.deploymentMode is the engine's request without an annotation",
        ),
        pytest.param({}, "engine", None, id="an InferenceService declaring no mode asks none"),
        pytest.param(
            {"annotations": {MODE: "MultiNode"}},
            "engine",
            None,
            id="the InferenceService metadata annotation is never a request",
        ),
        pytest.param(
            {"engine": None, "deploymentMode": "OMENative"},
            "engine",
            NATIVE,
            id="spec.deploymentMode is the engine's request even without spec.engine",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            "decoder",
            None,
            id="without spec.decoder the decoder asks no mode",
        ),
        pytest.param(
            {"decoder": {}, "deploymentMode": "OMENative"},
            "decoder",
            NATIVE,
            id="a declared decoder asks spec.deploymentMode",
        ),
        pytest.param(
            {"decoder": _annotated("RawDeployment"), "deploymentMode": "OMENative"},
            "decoder",
            RAW,
            id="the decoder annotation beats spec.deploymentMode",
        ),
    ],
)
def test_the_mode_an_inference_service_requests(
    isvc_kwargs: dict[str, Any], component: str, expected: DeploymentMode | None
) -> None:
    assert requested_mode(make_isvc(**isvc_kwargs), component) == expected


@pytest.mark.parametrize(
    ("isvc_kwargs", "runtime_kwargs", "expected"),
    [
        pytest.param(
            {"engine": None, "deploymentMode": "OMENative"},
            {"engineConfig": _annotated("MultiNode")},
            "runtime engine deployment mode MultiNode does not match requested engine "
            "deployment mode OMENative",
            id="the engine is compared even when the InferenceService has no spec.engine",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            {"decoderConfig": _annotated("MultiNode")},
            None,
            id="the decoder is not compared without spec.decoder",
        ),
        pytest.param(
            {"router": {}, "deploymentMode": "OMENative"},
            {"routerConfig": _annotated("MultiNode")},
            None,
            id="the router is never compared",
        ),
        pytest.param(
            {"annotations": {MODE: "MultiNode"}},
            {"engineConfig": _annotated("OMENative")},
            None,
            id="the InferenceService metadata annotation is not compared",
        ),
        pytest.param(
            {"deploymentMode": "RawDeployment"},
            {"engineConfig": {"leader": {}, "worker": {}}},
            None,
            id="the runtime's leader and worker shape is not compared",
        ),
        pytest.param(
            {"engine": _annotated("MultiNode"), "deploymentMode": "OMENative"},
            {"engineConfig": _annotated("MultiNode")},
            None,
            id="the component annotation is what the InferenceService asks",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            {"engineConfig": _annotated("VirtualDeployment")},
            "runtime engine deployment mode VirtualDeployment does not match requested engine "
            "deployment mode OMENative",
            id="a VirtualDeployment runtime mode counts in matching",
        ),
        pytest.param(
            {"engine": _annotated("VirtualDeployment")},
            {"engineConfig": _annotated("RawDeployment")},
            "runtime engine deployment mode RawDeployment does not match requested engine "
            "deployment mode VirtualDeployment",
            id="a VirtualDeployment component annotation counts in matching",
        ),
    ],
)
def test_mode_mismatch(
    isvc_kwargs: dict[str, Any], runtime_kwargs: dict[str, Any], expected: str | None
) -> None:
    requested = requested_modes(make_isvc(**isvc_kwargs))
    assert mode_mismatch_reason(requested, make_runtime(**runtime_kwargs)) == expected


# --- S3.3: resolution per declared component after the merge --------------------------------


def _resolve(isvc: InferenceService, runtime: ServingRuntime, component: str) -> ResolvedMode:
    merged = merge_component(
        runtime.spec.config(component), isvc.spec.component(component), where=component
    )
    return resolve_component_mode(isvc, component, merged)


@pytest.mark.parametrize(
    ("isvc_kwargs", "runtime_kwargs", "component", "expected"),
    [
        pytest.param(
            {"engine": _annotated("MultiNode")},
            {},
            "engine",
            ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
            id="rule 1: the component's own annotation sets the mode",
        ),
        pytest.param(
            {},
            {"engineConfig": _annotated("MultiNode")},
            "engine",
            ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
            id="rule 1: a runtime config annotation becomes the component's through the merge",
        ),
        pytest.param(
            {"engine": _annotated("OMENative")},
            {"engineConfig": _annotated("MultiNode")},
            "engine",
            ResolvedMode(NATIVE, ModeSource.COMPONENT_ANNOTATION),
            id="the InferenceService component annotation beats the runtime's",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            {"engineConfig": _annotated("MultiNode")},
            "engine",
            ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
            id="a runtime annotation beats spec.deploymentMode",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            {},
            "engine",
            ResolvedMode(NATIVE, ModeSource.SERVICE_SPEC),
            id="rule 2: spec.deploymentMode sets the mode",
        ),
        pytest.param(
            {"engine": {"leader": {}, "worker": {}}},
            {},
            "engine",
            ResolvedMode(NATIVE, ModeSource.LEADER_WORKER_SHAPE),
            id="rule 3: an engine with leader and worker runs OMENative",
        ),
        pytest.param(
            {"engine": {"worker": {"size": 2}}},
            {},
            "engine",
            ResolvedMode(NATIVE, ModeSource.LEADER_WORKER_SHAPE),
            id="rule 3: a worker alone is enough",
        ),
        pytest.param(
            {"decoder": {"leader": {}}},
            {},
            "decoder",
            ResolvedMode(NATIVE, ModeSource.LEADER_WORKER_SHAPE),
            id="rule 3: a leader alone is enough, for the decoder too",
        ),
        pytest.param(
            {},
            {"engineConfig": {"leader": {}, "worker": {"size": 1}}},
            "engine",
            ResolvedMode(NATIVE, ModeSource.LEADER_WORKER_SHAPE),
            id="rule 3: a leader and worker from the runtime count",
        ),
        pytest.param(
            {"deploymentMode": "RawDeployment"},
            {"engineConfig": {"leader": {}, "worker": {}}},
            "engine",
            ResolvedMode(RAW, ModeSource.SERVICE_SPEC),
            id="spec.deploymentMode beats the leader and worker shape",
        ),
        pytest.param(
            {"router": {}},
            {"routerConfig": {"leader": {}, "worker": {}}},
            "router",
            ResolvedMode(RAW, ModeSource.DEFAULT),
            id="the router never gets LeaderWorkerShape",
        ),
        pytest.param(
            {},
            {},
            "engine",
            ResolvedMode(RAW, ModeSource.DEFAULT),
            id="rule 4: otherwise the mode is RawDeployment by default",
        ),
        pytest.param(
            {"engine": _annotated("omenative"), "deploymentMode": "RawDeployment"},
            {},
            "engine",
            ResolvedMode(RAW, ModeSource.SERVICE_SPEC),
            id="a misspelled annotation is skipped and spec.deploymentMode decides",
        ),
        pytest.param(
            {"engine": {**_annotated("MultiNodeRayVLLM"), "worker": {}}},
            {},
            "engine",
            ResolvedMode(NATIVE, ModeSource.LEADER_WORKER_SHAPE),
            id="a value that is not a mode is skipped and the shape decides",
        ),
        pytest.param(
            {},
            {"engineConfig": _annotated("OMENATIVE")},
            "engine",
            ResolvedMode(RAW, ModeSource.DEFAULT),
            id="a misspelled runtime annotation is skipped too",
        ),
        pytest.param(
            {"engine": {"worker": {}}},
            {"engineConfig": {"leader": {}, "worker": {"size": 3}}},
            "engine",
            ResolvedMode(NATIVE, ModeSource.LEADER_WORKER_SHAPE),
            id="a leader and worker never yield MultiNode",
        ),
        pytest.param(
            {"router": {}, "deploymentMode": "OMENative"},
            {},
            "router",
            ResolvedMode(NATIVE, ModeSource.SERVICE_SPEC),
            id="spec.deploymentMode OMENative puts the router on OMENative",
        ),
        pytest.param(
            {"router": _annotated("RawDeployment"), "deploymentMode": "OMENative"},
            {},
            "router",
            ResolvedMode(RAW, ModeSource.COMPONENT_ANNOTATION),
            id="a RawDeployment router annotation keeps the router on a Deployment",
        ),
        pytest.param(
            {"annotations": {MODE: "MultiNode"}},
            {},
            "engine",
            ResolvedMode(RAW, ModeSource.DEFAULT),
            id="a metadata annotation other than VirtualDeployment sets no component mode",
        ),
        pytest.param(
            {"annotations": {MODE: "VirtualDeployment"}, "engine": _annotated("OMENative")},
            {"engineConfig": _annotated("MultiNode")},
            "engine",
            ResolvedMode(VIRTUAL, ModeSource.SERVICE_ANNOTATION),
            id="the VirtualDeployment service annotation beats every other rule",
        ),
        pytest.param(
            {"annotations": {MODE: "VirtualDeployment"}, "router": {}},
            {},
            "router",
            ResolvedMode(VIRTUAL, ModeSource.SERVICE_ANNOTATION),
            id="the VirtualDeployment service annotation applies to the router too",
        ),
        pytest.param(
            {"annotations": {MODE: "virtualdeployment"}},
            {},
            "engine",
            ResolvedMode(RAW, ModeSource.DEFAULT),
            id="a misspelled VirtualDeployment service annotation has no effect",
        ),
    ],
)
def test_component_mode_resolution(
    isvc_kwargs: dict[str, Any],
    runtime_kwargs: dict[str, Any],
    component: str,
    expected: ResolvedMode,
) -> None:
    assert _resolve(make_isvc(**isvc_kwargs), make_runtime(**runtime_kwargs), component) == expected


def test_an_inference_service_declaring_no_mode_runs_a_multinode_runtime_as_multinode() -> None:
    isvc = make_isvc(decoder={})
    runtime = make_runtime(
        engineConfig=_annotated("MultiNode"), decoderConfig=_annotated("MultiNode")
    )
    assert [_resolve(isvc, runtime, c) for c in ("engine", "decoder")] == [
        ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
        ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
    ]


# --- S3.4: modes a component cannot run ----------------------------------------------------


@pytest.mark.parametrize(
    ("component", "resolved", "expected"),
    [
        pytest.param(
            "router",
            ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
            "invalid deployment mode for router",
            id="a router cannot run MultiNode",
        ),
        pytest.param(
            "router",
            ResolvedMode(VIRTUAL, ModeSource.COMPONENT_ANNOTATION),
            "invalid deployment mode for router",
            id="a router cannot run VirtualDeployment from a component annotation",
        ),
        pytest.param(
            "engine",
            ResolvedMode(VIRTUAL, ModeSource.COMPONENT_ANNOTATION),
            "invalid deployment mode for engine",
            id="an engine cannot run VirtualDeployment from a component annotation",
        ),
        pytest.param(
            "decoder",
            ResolvedMode(VIRTUAL, ModeSource.COMPONENT_ANNOTATION),
            "invalid deployment mode for decoder",
            id="a decoder cannot run VirtualDeployment from a component annotation",
        ),
    ],
)
def test_a_mode_the_component_cannot_run_fails_it(
    component: str, resolved: ResolvedMode, expected: str
) -> None:
    with pytest.raises(InvalidComponentModeError) as caught:
        check_component_mode(component, resolved)
    error = caught.value
    assert (str(error), error.component, error.mode) == (expected, component, resolved.mode)


@pytest.mark.parametrize(
    ("component", "resolved"),
    [
        pytest.param(
            "engine", ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION), id="engine MultiNode"
        ),
        pytest.param(
            "decoder",
            ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
            id="decoder MultiNode",
        ),
        pytest.param(
            "router", ResolvedMode(NATIVE, ModeSource.SERVICE_SPEC), id="router OMENative"
        ),
        pytest.param("router", ResolvedMode(RAW, ModeSource.DEFAULT), id="router RawDeployment"),
        pytest.param(
            "router",
            ResolvedMode(VIRTUAL, ModeSource.SERVICE_ANNOTATION),
            id="router VirtualDeployment from the service annotation",
        ),
        pytest.param(
            "engine",
            ResolvedMode(VIRTUAL, ModeSource.SERVICE_ANNOTATION),
            id="engine VirtualDeployment from the service annotation",
        ),
    ],
)
def test_modes_each_component_can_run(component: str, resolved: ResolvedMode) -> None:
    assert check_component_mode(component, resolved) is None


def test_a_multinode_router_config_fails_the_router_after_resolution() -> None:
    isvc = make_isvc(router={})
    runtime = make_runtime(routerConfig=_annotated("MultiNode"))
    resolved = _resolve(isvc, runtime, "router")
    with pytest.raises(InvalidComponentModeError) as caught:
        check_component_mode("router", resolved)
    assert (resolved, str(caught.value)) == (
        ResolvedMode(MULTI, ModeSource.COMPONENT_ANNOTATION),
        "invalid deployment mode for router",
    )
