"""The ValidatingWebhookConfiguration (manifests/webhook/) registers SPEC S7.1's webhooks."""

from __future__ import annotations

import pytest

from tests.manifests.manifest_files import find

#: SPEC S7.1 (and OPEN-24 for ServingRuntime): exact webhook names, resource, scope, path, and
#: the operations: a runtime's DELETE too, for S16.6's warning.
WEBHOOKS = [
    (
        "inferenceservice.ome-webhook-server.validator",
        "inferenceservices",
        "Namespaced",
        "/validate-inferenceservice",
        ["CREATE", "UPDATE"],
    ),
    (
        "clusterservingruntime.ome-webhook-server.validator",
        "clusterservingruntimes",
        "Cluster",
        "/validate-clusterservingruntime",
        ["CREATE", "UPDATE", "DELETE"],
    ),
    (
        "servingruntime.ome-webhook-server.validator",
        "servingruntimes",
        "Namespaced",
        "/validate-servingruntime",
        ["CREATE", "UPDATE", "DELETE"],
    ),
]


def _webhooks() -> dict[str, dict]:
    configuration = find("ValidatingWebhookConfiguration", "ome-webhook-server").body
    return {webhook["name"]: webhook for webhook in configuration["webhooks"]}


def test_the_webhook_names_are_exactly_the_three_of_the_spec() -> None:
    assert sorted(_webhooks()) == sorted(name for name, *_ in WEBHOOKS)


@pytest.mark.parametrize(
    ("name", "resource", "scope", "path", "operations"),
    [pytest.param(*w, id=w[0]) for w in WEBHOOKS],
)
def test_each_webhook_reviews_its_operations_of_its_kind_only(
    name: str, resource: str, scope: str, path: str, operations: list[str]
) -> None:
    webhook = _webhooks()[name]
    assert webhook["rules"] == [
        {
            "apiGroups": ["ome.io"],
            "apiVersions": ["v1beta1"],
            "operations": operations,
            "resources": [resource],
            "scope": scope,
        }
    ]
    assert (
        webhook["failurePolicy"],
        webhook["sideEffects"],
        webhook["admissionReviewVersions"],
    ) == (
        "Fail",
        "None",
        ["v1"],
    )


@pytest.mark.parametrize(
    ("name", "resource", "scope", "path", "operations"),
    [pytest.param(*w, id=w[0]) for w in WEBHOOKS],
)
def test_each_webhook_calls_the_operator_webhook_service_on_its_path(
    name: str, resource: str, scope: str, path: str, operations: list[str]
) -> None:
    service = _webhooks()[name]["clientConfig"]["service"]
    assert service == {"name": "ome-webhook-server", "namespace": "ome", "path": path, "port": 443}
    found = find("Service", service["name"]).body
    assert found["metadata"]["namespace"] == service["namespace"]
    assert service["port"] in [port["port"] for port in found["spec"]["ports"]]
