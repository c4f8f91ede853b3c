"""The operator's RBAC (manifests/rbac/): exactly what it uses (least privilege), bound to the
ServiceAccount the Deployment runs as. tests/controlplane/test_rbac.py proves on a real API server
that a run uses every grant and is refused nothing."""

from __future__ import annotations

import pytest

from tests.manifests.manifest_files import find
from tests.support.rbac_rules import grants

WORKLOAD = ("list", "watch", "create", "patch", "delete")
WATCHED = (
    "inferenceservices",
    "servingruntimes",
    "clusterservingruntimes",
    "basemodels",
    "clusterbasemodels",
    "acceleratorclasses",
)
CLUSTER_ROLE = {
    *[("ome.io", plural, verb, None) for plural in WATCHED for verb in ("list", "watch")],
    ("ome.io", "inferenceservices", "get", None),  # read before an adoption
    ("ome.io", "inferenceservices/status", "patch", None),
    ("ome.io", "inferenceservices/finalizers", "update", None),
    *[("ome.io", "inferencereplicas", verb, None) for verb in WORKLOAD],
    # Read before its pods are adopted, and, with the other workloads, before the operator
    # takes over its create's or the previous release's record (docs/workloads.md).
    *[
        (group, plural, "get", None)
        for group, plural in (
            ("ome.io", "inferencereplicas"),
            ("apps", "deployments"),
            ("", "services"),
            ("policy", "poddisruptionbudgets"),
            ("leaderworkerset.x-k8s.io", "leaderworkersets"),
            ("autoscaling", "horizontalpodautoscalers"),
            ("keda.sh", "scaledobjects"),
        )
    ],
    *[("apps", "deployments", verb, None) for verb in WORKLOAD],
    *[("", "services", verb, None) for verb in WORKLOAD],
    *[("policy", "poddisruptionbudgets", verb, None) for verb in WORKLOAD],
    *[("leaderworkerset.x-k8s.io", "leaderworkersets", verb, None) for verb in WORKLOAD],
    *[("autoscaling", "horizontalpodautoscalers", verb, None) for verb in WORKLOAD],
    *[("keda.sh", "scaledobjects", verb, None) for verb in WORKLOAD],
    *[("", "pods", verb, None) for verb in ("list", "watch", "create", "patch", "delete")],
    ("", "pods/status", "patch", None),  # the ome.io/serving condition
    *[("scheduling.k8s.io", "podgroups", v, None) for v in ("list", "watch", "create", "delete")],
    ("ome.io", "inferencereplicas/status", "patch", None),
    ("ome.io", "inferencereplicas/finalizers", "update", None),  # pods block its deletion
    ("", "namespaces", "get", None),  # the pod policy's per-namespace exceptions
    ("", "events", "create", None),
    *[
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", verb, name)
        for verb in ("get", "patch")
        for name in ("ome-webhook-server",)
    ],
    # OME's webhook configurations, looked up once at start (docs/migrating-from-ome.md).
    *[
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "get", f"{kind}.ome.io")
        for kind in (
            "basemodel",
            "clusterbasemodel",
            "clusterservingruntime",
            "inferencereplica",
            "inferenceservice",
            "servingruntime",
        )
    ],
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        "get",
        "inferenceservice.ome.io",
    ),
}
ROLE = {
    *[("", "configmaps", verb, "inferenceservice-config") for verb in ("get", "list", "watch")],
    ("", "secrets", "get", "ome-webhook-server-cert"),
    ("", "secrets", "patch", "ome-webhook-server-cert"),
    ("", "secrets", "create", None),
    ("coordination.k8s.io", "leases", "get", "ome-operator"),
    ("coordination.k8s.io", "leases", "patch", "ome-operator"),
    ("coordination.k8s.io", "leases", "create", None),
}


def test_the_cluster_role_grants_exactly_what_the_operator_uses() -> None:
    assert grants(find("ClusterRole", "ome-operator").body["rules"]) == CLUSTER_ROLE


def test_the_namespaced_role_grants_the_config_map_and_the_certificate_secret_by_name() -> None:
    role = find("Role", "ome-operator-config").body
    assert role["metadata"]["namespace"] == "ome"
    assert grants(role["rules"]) == ROLE


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
