"""Rules of SPEC S5.1.1 and OPEN-12 (object names), S1.9 (the ``app`` label), S5.2 and S5.6
(component and entry URLs)."""

from __future__ import annotations

import pytest

from ome_operator.core import rendering
from ome_operator.core.rendering import component_url, entry_url, object_name
from ome_operator.core.rendering.naming import app_label, instance_pod_name
from tests.builders import make_isvc


def test_the_package_exports_exactly_its_public_api() -> None:
    assert sorted(rendering.__all__) == [
        "Budget",
        "ComponentContext",
        "ComponentRenderError",
        "PdbPreflightError",
        "PdbResolutionError",
        "PlaceholderError",
        "PodPolicyDenied",
        "ResourceQuantityError",
        "SERVING_GATE",
        "component_service",
        "component_url",
        "entry_component",
        "entry_url",
        "object_name",
        "render_component",
        "render_entry_service",
        "render_instance_pods",
        "resolve_pdb",
        "revision_hash",
        "service_selector",
    ]


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        pytest.param(("llama", "engine"), "llama-engine", id="parts are joined with a dash"),
        pytest.param(
            ("lws", "llama", "decoder"), "lws-llama-decoder", id="the lws prefix is a part"
        ),
        pytest.param(
            ("x" * 56, "engine"),
            "x" * 56 + "-engine",
            id="a name of exactly 63 characters is kept",
        ),
        pytest.param(
            ("x" * 57, "engine"),
            "x" * 54 + "-35064025",
            id="a 64-character name keeps 54 characters and appends 8 hex of its sha256",
        ),
        pytest.param(
            ("lws", "x" * 55, "engine"),
            "lws-" + "x" * 50 + "-b5a8d94e",
            id="a long LeaderWorkerSet name is shortened the same way",
        ),
        pytest.param(
            ("very-long-inference-service-name-for-a-big-model-deploy", "decoder", "headless"),
            "very-long-inference-service-name-for-a-big-model-deplo-571b9de2",
            id="a long headless Service name is shortened the same way",
        ),
    ],
)
def test_object_name(parts: tuple[str, ...], expected: str) -> None:
    assert object_name(*parts) == expected
    assert len(object_name(*parts)) <= 63


@pytest.mark.parametrize(
    ("isvc", "component", "expected"),
    [
        pytest.param("llama", "engine", "llama-engine", id="the app label is isvc-component"),
        pytest.param(
            "x" * 60, "router", "x" * 60 + "-ro", id="a long app label is cut to 63 characters"
        ),
        pytest.param("x" * 62, "engine", "x" * 62, id="a cut app label does not end with a dash"),
    ],
)
def test_app_label(isvc: str, component: str, expected: str) -> None:
    assert app_label(isvc, component) == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ("llama", "engine", 0, "default", 0),
            "llama-engine-0-default-0",
            id="a single-pod Instance's pod is named after its index, runner and ordinal",
        ),
        pytest.param(
            ("qwen3-multi-node", "engine", 3, "worker", 1),
            "qwen3-multi-node-engine-3-worker-1",
            id="a worker pod is numbered within its runner",
        ),
        pytest.param(
            ("x" * 50, "decoder", 12, "leader", 0),
            "x" * 50 + "-dec-bca616c7",
            id="a pod name over 63 characters is shortened so it can be the pod's hostname",
        ),
    ],
)
def test_instance_pod_name(args: tuple[str, str, int, str, int], expected: str) -> None:
    assert instance_pod_name(*args) == expected


@pytest.mark.parametrize(
    ("domain", "expected_entry", "expected_engine"),
    [
        pytest.param(
            None,
            "http://llama.llm.svc.cluster.local:8080",
            "http://llama-engine.llm.svc.cluster.local:30000",
            id="urls use cluster.local by default and the port each Service listens on",
        ),
        pytest.param(
            "corp.internal",
            "http://llama.llm.svc.corp.internal:8080",
            "http://llama-engine.llm.svc.corp.internal:30000",
            id="urls use the configured cluster domain",
        ),
    ],
)
def test_urls(domain: str | None, expected_entry: str, expected_engine: str) -> None:
    isvc = make_isvc("llama", namespace="llm")
    kwargs = {} if domain is None else {"cluster_domain": domain}
    assert entry_url(isvc, **kwargs) == expected_entry
    assert component_url(isvc, "engine", 30000, **kwargs) == expected_engine
