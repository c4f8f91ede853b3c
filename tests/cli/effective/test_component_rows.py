"""The component rows of a view (SPEC S13, S3): each declared component's mode and the rule
that set it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import runtime_manifest
from tests.cli.effective.reports import LLAMA, MODE, MODEL, NAMED, rows_of, service


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


@pytest.mark.parametrize(
    ("runtime_spec", "isvc_spec", "expected"),
    [
        pytest.param(
            {},
            {},
            [("Live", "ENGINE", "RawDeployment (Default)")],
            id="bounds of the operator configuration alone are not listed",
        ),
        pytest.param(
            {"engineConfig": {"minReplicas": 1, "maxReplicas": 4}},
            {"engine": {"minReplicas": 2}},
            [
                ("Live", "ENGINE", "RawDeployment (Default)"),
                ("Live", "ENGINE-REPLICAS", "min 2 (InferenceService), max 4 (runtime)"),
            ],
            id="each bound says where it came from: the InferenceService or its runtime",
        ),
        pytest.param(
            {},
            {"engine": {"maxReplicas": 5}},
            [
                ("Live", "ENGINE", "RawDeployment (Default)"),
                ("Live", "ENGINE-REPLICAS", "min configuration, max 5 (InferenceService)"),
            ],
            id="a bound left to the operator configuration is named without its value",
        ),
    ],
)
def test_replica_bound_rows(
    runtime_spec: dict[str, Any], isvc_spec: dict[str, Any], expected: list[tuple]
) -> None:
    runtime = runtime_manifest("vllm-llama", **runtime_spec)
    rows = rows_of([runtime, MODEL, service(runtime=NAMED, **isvc_spec)])
    assert [r for r in rows if r[0] == "Live" and r[1].startswith("ENGINE")] == expected
