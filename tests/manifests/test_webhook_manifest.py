"""The ValidatingWebhookConfiguration (manifests/webhook/) registers the operator's webhooks
(docs/webhook.md#registration): CREATE and UPDATE of the three kinds with failurePolicy Fail,
and a runtime's DELETE, reviewed only for its warnings, in webhooks of its own with
failurePolicy Ignore, so that no delete waits for the operator."""

from __future__ import annotations

import pytest

from tests.manifests.manifest_files import find

#: Exact webhook names, resource, scope, path, operations and failure policy. A runtime's DELETE
#: goes to the same path as its CREATE and UPDATE: the handler warns what it moves.
WEBHOOKS = [
    (
        "inferenceservice.ome-webhook-server.validator",
        "inferenceservices",
        "Namespaced",
        "/validate-inferenceservice",
        ["CREATE", "UPDATE"],
        "Fail",
    ),
    (
        "clusterservingruntime.ome-webhook-server.validator",
        "clusterservingruntimes",
        "Cluster",
        "/validate-clusterservingruntime",
        ["CREATE", "UPDATE"],
        "Fail",
    ),
    (
        "servingruntime.ome-webhook-server.validator",
        "servingruntimes",
        "Namespaced",
        "/validate-servingruntime",
        ["CREATE", "UPDATE"],
        "Fail",
    ),
    (
        "clusterservingruntime-delete.ome-webhook-server.validator",
        "clusterservingruntimes",
        "Cluster",
        "/validate-clusterservingruntime",
        ["DELETE"],
        "Ignore",
    ),
    (
        "servingruntime-delete.ome-webhook-server.validator",
        "servingruntimes",
        "Namespaced",
        "/validate-servingruntime",
        ["DELETE"],
        "Ignore",
    ),
]
FIELDS = ("name", "resource", "scope", "path", "operations", "failure_policy")
CASES = [pytest.param(*w, id=w[0]) for w in WEBHOOKS]


def _webhooks() -> dict[str, dict]:
    configuration = find("ValidatingWebhookConfiguration", "ome-webhook-server").body
    return {webhook["name"]: webhook for webhook in configuration["webhooks"]}


def test_the_webhook_names_are_exactly_these_five() -> None:
    assert sorted(_webhooks()) == sorted(name for name, *_ in WEBHOOKS)


@pytest.mark.parametrize(FIELDS, CASES)
def test_each_webhook_reviews_its_operations_of_its_kind_only(
    name: str,
    resource: str,
    scope: str,
    path: str,
    operations: list[str],
    failure_policy: str,
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
        webhook["matchPolicy"],
        webhook["sideEffects"],
        webhook["timeoutSeconds"],
        webhook["admissionReviewVersions"],
    ) == (failure_policy, "Equivalent", "None", 10, ["v1"])


@pytest.mark.parametrize(
    ("operation", "policies"),
    [
        pytest.param("CREATE", {"Fail"}, id="a create is never stored unreviewed"),
        pytest.param("UPDATE", {"Fail"}, id="an update is never stored unreviewed"),
        pytest.param("DELETE", {"Ignore"}, id="a delete never waits for the operator"),
    ],
)
def test_each_operation_is_reviewed_under_one_failure_policy(
    operation: str, policies: set[str]
) -> None:
    found = {
        webhook["failurePolicy"]
        for webhook in _webhooks().values()
        for rule in webhook["rules"]
        if operation in rule["operations"]
    }
    assert found == policies


@pytest.mark.parametrize(FIELDS, CASES)
def test_each_webhook_calls_the_operator_webhook_service_on_its_path(
    name: str,
    resource: str,
    scope: str,
    path: str,
    operations: list[str],
    failure_policy: str,
) -> None:
    service = _webhooks()[name]["clientConfig"]["service"]
    assert service == {"name": "ome-webhook-server", "namespace": "ome", "path": path, "port": 443}
    found = find("Service", service["name"]).body
    assert found["metadata"]["namespace"] == service["namespace"]
    assert service["port"] in [port["port"] for port in found["spec"]["ports"]]
