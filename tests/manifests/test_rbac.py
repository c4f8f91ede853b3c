"""The operator's RBAC (manifests/rbac/) grants what SPEC S5, S7, S8, S9 and S11 need, bound to
the ServiceAccount the Deployment runs as."""

from __future__ import annotations

import pytest

from tests.manifests.manifest_files import find
from tests.support.crd_schema import load_crds


def _grants(rules: list[dict], group: str, resource: str, verb: str, name: str | None) -> bool:
    return any(
        group in rule.get("apiGroups", ())
        and resource in rule.get("resources", ())
        and verb in rule.get("verbs", ())
        and (not rule.get("resourceNames") or name in rule["resourceNames"])
        for rule in rules
    )


def _cluster_rules() -> list[dict]:
    return find("ClusterRole", "ome-operator").body["rules"]


READ = ("get", "list", "watch")
WRITE = ("get", "list", "watch", "create", "update", "patch", "delete")

NEEDED = [
    *[("ome.io", "inferenceservices", verb) for verb in (*READ, "update", "patch")],
    *[("ome.io", "inferenceservices/status", verb) for verb in ("update", "patch")],
    *[("ome.io", "inferencereplicas", verb) for verb in WRITE],
    *[("ome.io", "inferencereplicas/status", verb) for verb in ("update", "patch")],
    ("ome.io", "inferenceservices/finalizers", "update"),
    *[("apps", "deployments", verb) for verb in WRITE],
    *[("apps", "controllerrevisions", verb) for verb in READ],
    *[("", "services", verb) for verb in WRITE],
    *[("", "pods", verb) for verb in WRITE],
    ("", "pods/status", "patch"),
    ("", "events", "create"),
    *[("policy", "poddisruptionbudgets", verb) for verb in WRITE],
    *[("leaderworkerset.x-k8s.io", "leaderworkersets", verb) for verb in WRITE],
    *[
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", verb)
        for verb in ("get", "create", "patch")
    ],
    *[("apiextensions.k8s.io", "customresourcedefinitions", verb) for verb in READ],
    *[("", "namespaces", verb) for verb in ("list", "watch")],
]


@pytest.mark.parametrize(
    ("group", "resource", "verb"),
    [pytest.param(*need, id=f"{need[2]} {need[1]}.{need[0] or 'core'}") for need in NEEDED],
)
def test_the_cluster_role_grants_what_the_operator_does(
    group: str, resource: str, verb: str
) -> None:
    assert _grants(_cluster_rules(), group, resource, verb, None)


@pytest.mark.parametrize("plural", [crd["spec"]["names"]["plural"] for crd in load_crds()])
def test_the_cluster_role_reads_every_ome_io_kind(plural: str) -> None:
    assert all(_grants(_cluster_rules(), "ome.io", plural, verb, None) for verb in READ)


@pytest.mark.parametrize(
    ("resource", "verb"),
    [
        pytest.param("servingruntimes", "patch", id="runtimes are never written"),
        pytest.param("clusterbasemodels", "update", id="models are never written"),
        pytest.param("inferenceservices", "delete", id="inference services are never deleted"),
        pytest.param("secrets", "get", id="no secrets"),
        pytest.param("configmaps", "list", id="no ConfigMap cluster-wide"),
    ],
)
def test_the_cluster_role_grants_nothing_the_operator_does_not_need(
    resource: str, verb: str
) -> None:
    rules = _cluster_rules()
    assert not any(_grants(rules, group, resource, verb, None) for group in ("", "ome.io"))
    assert all(
        "*" not in rule.get(key, ())
        for rule in rules
        for key in ("apiGroups", "resources", "verbs")
    )


@pytest.mark.parametrize("verb", READ)
def test_the_namespaced_role_reads_only_the_operator_config_map(verb: str) -> None:
    role = find("Role", "ome-operator-config").body
    assert role["metadata"]["namespace"] == "ome"
    assert _grants(role["rules"], "", "configmaps", verb, "inferenceservice-config")
    assert not _grants(role["rules"], "", "configmaps", verb, "another-config-map")


@pytest.mark.parametrize(
    ("kind", "name", "role_kind", "role_name"),
    [
        pytest.param(
            "ClusterRoleBinding", "ome-operator", "ClusterRole", "ome-operator", id="cluster"
        ),
        pytest.param(
            "RoleBinding", "ome-operator-config", "Role", "ome-operator-config", id="config"
        ),
    ],
)
def test_bindings_give_the_roles_to_the_operator_service_account(
    kind: str, name: str, role_kind: str, role_name: str
) -> None:
    binding = find(kind, name).body
    find(role_kind, role_name)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": role_kind,
        "name": role_name,
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "ome-operator", "namespace": "ome"}
    ]
    find("ServiceAccount", "ome-operator")
