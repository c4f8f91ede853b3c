"""Rules of SPEC S5.2, S5.3 + OPEN-18 and S5.4.6 (component Services), OPEN-15 (default port) and
S5.6 (the entry Service)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.rendering import (
    component_service,
    entry_component,
    render_component,
    render_entry_service,
    service_selector,
)
from ome_operator.core.rendering.services import service_ports
from tests.builders import make_isvc, make_runtime
from tests.core.rendering.contexts import make_context

MODE = "ome.io/deploymentMode"
OMENATIVE = {
    "component": "engine",
    "ome.io/inferenceservice": "llama",
    "ome.io/managed-by": "OMENative",
}


@pytest.mark.parametrize(
    ("isvc_spec", "runtime_engine", "expected"),
    [
        pytest.param({}, None, {"app": "llama-engine"}, id="RawDeployment selects by app"),
        pytest.param(
            {"engine": {"annotations": {MODE: "MultiNode"}}},
            None,
            {
                "leaderworkerset.sigs.k8s.io/name": "lws-llama-engine",
                "leaderworkerset.sigs.k8s.io/worker-index": "0",
            },
            id="MultiNode selects only its own LeaderWorkerSet's leaders",
        ),
        pytest.param(
            {"deploymentMode": "OMENative"},
            None,
            OMENATIVE,
            id="OMENative single-pod selects every pod of the component",
        ),
        pytest.param(
            {"engine": {"leader": {}, "worker": {"size": 2}}},
            None,
            {**OMENATIVE, "ome.io/runner": "leader"},
            id="an ISVC that declares a worker selects leaders only",
        ),
        pytest.param(
            {"engine": {"leader": {}, "worker": {}}},
            {"worker": {"size": 2}},
            {**OMENATIVE, "ome.io/runner": "leader"},
            id="empty leader and worker in the ISVC turn leader-only on",
        ),
        pytest.param(
            {},
            {"leader": {}, "worker": {"size": 2}},
            OMENATIVE,
            id="a worker only from the runtime selects workers too",
        ),
        pytest.param(
            {"engine": {"leader": {}}},
            {"worker": {"size": 2}},
            OMENATIVE,
            id="a leader alone in the ISVC does not turn leader-only on",
        ),
    ],
)
def test_component_service_selector(
    isvc_spec: dict[str, Any], runtime_engine: dict[str, Any] | None, expected: dict[str, str]
) -> None:
    isvc = make_isvc("llama", model=None, **isvc_spec)
    ctx = make_context(isvc, make_runtime("rt", engineConfig=runtime_engine))
    assert service_selector(ctx) == expected
    assert component_service(render_component(ctx))["spec"]["selector"] == expected


@pytest.mark.parametrize(
    ("ports", "expected"),
    [
        pytest.param(
            None,
            [{"name": "http1", "port": 8080, "targetPort": 8080, "protocol": "TCP"}],
            id="a runner without ports gets 8080 named http1",
        ),
        pytest.param(
            [{"containerPort": 30000, "name": "http"}],
            [{"name": "http", "port": 30000, "targetPort": 30000, "protocol": "TCP"}],
            id="a runner port is copied with its name",
        ),
        pytest.param(
            [{"containerPort": 8000}],
            [{"port": 8000, "targetPort": 8000, "protocol": "TCP"}],
            id="a single unnamed port stays unnamed",
        ),
        pytest.param(
            [{"containerPort": 8000, "name": "http"}, {"containerPort": 5000, "protocol": "UDP"}],
            [
                {"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP"},
                {"name": "port-5000", "port": 5000, "targetPort": 5000, "protocol": "UDP"},
            ],
            id="an unnamed port among several is named after its number",
        ),
    ],
)
def test_service_ports(ports: list[dict[str, Any]] | None, expected: list[dict[str, Any]]) -> None:
    runner = {"image": "img", **({"ports": ports} if ports else {})}
    ctx = make_context(
        make_isvc("llama", model=None, engine={"runner": runner}), make_runtime("rt")
    )
    assert service_ports(ctx) == expected


def _front_service(isvc_spec: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    isvc = make_isvc(
        "llama",
        namespace="llm",
        model=None,
        annotations={
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
            "prometheus.io/scrape": "true",
            "owner": "alice",
        },
        **isvc_spec,
    )
    front = entry_component(isvc)
    objects = render_component(make_context(isvc, make_runtime("rt"), front))
    return isvc, dict(component_service(objects))


@pytest.mark.parametrize(
    ("isvc_spec", "selector", "target_port"),
    [
        pytest.param(
            {"engine": {"runner": {"ports": [{"containerPort": 30000, "name": "http"}]}}},
            {"app": "llama-engine"},
            30000,
            id="without a router the entry Service fronts the engine",
        ),
        pytest.param(
            {"engine": {}, "router": {"annotations": {MODE: "OMENative"}}},
            {
                "component": "router",
                "ome.io/inferenceservice": "llama",
                "ome.io/managed-by": "OMENative",
            },
            8080,
            id="with a router the entry Service fronts the router",
        ),
    ],
)
def test_entry_service(
    isvc_spec: dict[str, Any], selector: dict[str, str], target_port: int
) -> None:
    isvc, front = _front_service(isvc_spec)
    assert render_entry_service(isvc, front) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "llama",
            "namespace": "llm",
            "labels": {"ome.io/inferenceservice": "llama"},
            "annotations": {"owner": "alice"},
        },
        "spec": {
            "type": "ClusterIP",
            "selector": selector,
            "ports": [
                {"name": "http1", "port": 8080, "targetPort": target_port, "protocol": "TCP"}
            ],
        },
    }
