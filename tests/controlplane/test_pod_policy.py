"""The pod policy and the bound of copied metadata, as a tenant meets them (docs/configuration.md,
``podPolicy`` and ``metadataPropagation``): "alice", who may only create InferenceServices in her
namespace, is denied each refused pod field with its exact text, and an InferenceService over
the bound with its size; a namespace whose labels match an exception of the policy gets the
relaxed rule. Requests are made as alice through impersonation (``kubectl --as``)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from tests.controlplane.conftest import start_operator
from tests.controlplane.scenarios import RUNNER, admitted, isvc, seed
from tests.support.installed_cluster import EVENT, ISVC, Cluster, eventually

if TYPE_CHECKING:
    from _pytest.mark import ParameterSet

pytestmark = pytest.mark.controlplane

TENANT = "alice"
CONFIG_MAP = "v1/configmaps"
DENIED = (
    'Error from server: error when creating "STDIN": admission webhook '
    '"inferenceservice.ome-webhook-server.validator" denied the request: {message}\n'
)
HOST_NS = "host namespaces are refused by the pod policy (rule hostNamespaces)"
ROOT = "running as root (user 0) is refused by the pod policy (rule runAsRoot)"
NODE = "choosing the node by name is refused by the pod policy (rule nodeName)"
EXEMPT_LABEL = {"ome.io/pod-policy": "host-network"}


def tenant(cluster: Cluster, namespace: str) -> None:
    """alice may create InferenceServices in ``namespace``, and nothing else."""
    rbac = "rbac.authorization.k8s.io/v1"
    cluster.apply(
        {
            "apiVersion": rbac,
            "kind": "Role",
            "metadata": {"name": "isvc-creator", "namespace": namespace},
            "rules": [
                {"apiGroups": ["ome.io"], "resources": ["inferenceservices"], "verbs": ["create"]}
            ],
        },
        {
            "apiVersion": rbac,
            "kind": "RoleBinding",
            "metadata": {"name": "alice-isvc-creator", "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "isvc-creator",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": TENANT}],
        },
    )


def create_as_tenant(cluster: Cluster, manifest: dict[str, Any]) -> tuple[int, str]:
    done = cluster.plane.kubectl(
        "create", f"--as={TENANT}", "-f", "-", stdin=yaml.safe_dump(manifest), check=False
    )
    return done.returncode, done.stderr


def engine(namespace: str, **fields: Any) -> dict[str, Any]:
    return isvc(namespace, engine={"runner": copy.deepcopy(RUNNER), **fields})


def runner(namespace: str, **fields: Any) -> dict[str, Any]:
    return isvc(namespace, engine={"runner": {**copy.deepcopy(RUNNER), **fields}})


def refused_pod_field(field: str, value: Any, reason: str, id: str) -> ParameterSet:
    """A row: the engine's pod ``field`` set to ``value`` is denied at its path for ``reason``."""
    return pytest.param(
        lambda ns: engine(ns, **{field: value}), f"spec.engine.{field}: {reason}", id=id
    )


def refused_runner_context(field: str, value: Any, reason: str, id: str) -> ParameterSet:
    """A row: the runner's ``securityContext.<field>`` set to ``value`` is denied for ``reason``."""
    return pytest.param(
        lambda ns: runner(ns, securityContext={field: value}),
        f"spec.engine.runner.securityContext.{field}: {reason}",
        id=id,
    )


#: Each refused field of the issue's probe and the policy's other rules, and its denial.
REFUSED = [
    refused_pod_field("hostNetwork", True, HOST_NS, id="hostNetwork"),
    refused_pod_field("hostPID", True, HOST_NS, id="hostPID"),
    refused_pod_field("hostIPC", True, HOST_NS, id="hostIPC"),
    pytest.param(
        lambda ns: engine(ns, volumes=[{"name": "root", "hostPath": {"path": "/"}}]),
        "spec.engine.volumes[0].hostPath: hostPath volumes are refused by the pod policy "
        "(rule hostPath)",
        id="a hostPath volume of /",
    ),
    refused_runner_context(
        "privileged",
        True,
        "privileged containers are refused by the pod policy (rule privileged)",
        id="a privileged runner",
    ),
    pytest.param(
        lambda ns: runner(ns, securityContext={"capabilities": {"add": ["SYS_ADMIN"]}}),
        "spec.engine.runner.securityContext.capabilities.add[0]: capability SYS_ADMIN is "
        "refused by the pod policy (rule capabilities; allowed: NET_BIND_SERVICE)",
        id="SYS_ADMIN added",
    ),
    refused_runner_context(
        "allowPrivilegeEscalation",
        True,
        "privilege escalation is refused by the pod policy (rule privilegeEscalation)",
        id="allowPrivilegeEscalation",
    ),
    pytest.param(
        lambda ns: engine(ns, securityContext={"runAsUser": 0}),
        f"spec.engine.securityContext.runAsUser: {ROOT}",
        id="runAsUser 0",
    ),
    refused_pod_field("nodeName", "gpu-node-1", NODE, id="nodeName"),
    refused_pod_field(
        "serviceAccountName",
        "ome-operator",
        'service account "ome-operator" is refused by the pod policy '
        "(rule serviceAccountName; allowed: default)",
        id="another serviceAccountName",
    ),
    refused_pod_field(
        "automountServiceAccountToken",
        True,
        "mounting the service account token is refused by the pod policy "
        "(rule automountServiceAccountToken)",
        id="automountServiceAccountToken",
    ),
    pytest.param(
        lambda ns: runner(ns, ports=[{"containerPort": 8080, "hostPort": 8080}]),
        "spec.engine.runner.ports[0].hostPort: host ports are refused by the pod policy "
        "(rule hostPorts)",
        id="a hostPort",
    ),
]


@pytest.mark.parametrize(("make", "message"), REFUSED)
def test_each_refused_field_is_denied_to_the_tenant_with_its_text(
    cluster, namespace, operator, make, message
):
    tenant(cluster, namespace)
    assert create_as_tenant(cluster, make(namespace)) == (1, DENIED.format(message=message))
    assert cluster.get(ISVC, namespace, "chat") is None


def test_an_inference_service_over_the_bound_is_denied_with_its_size(cluster, namespace, operator):
    tenant(cluster, namespace)
    manifest = engine(namespace)
    manifest["metadata"]["annotations"] = {"blob": "x" * 250_000}
    message = (
        "metadata.labels, metadata.annotations and the components' labels and annotations "
        "copied onto workloads and pods total 250004 bytes, over the bound of 65536 bytes "
        "(metadataPropagation.maxBytes)"
    )
    assert create_as_tenant(cluster, manifest) == (1, DENIED.format(message=message))


@pytest.fixture
def host_network_exception(cluster: Cluster) -> Iterator[None]:
    """A ``podPolicy`` whose exception relaxes ``hostNamespaces`` for namespaces labelled
    ``EXEMPT_LABEL`` (set before the operator starts, put back after the test)."""
    shipped = cluster.stored(CONFIG_MAP, "ome", "inferenceservice-config").get("data") or {}
    policy = {
        "exceptions": [
            {"namespaceSelector": {"matchLabels": EXEMPT_LABEL}, "relax": ["hostNamespaces"]}
        ]
    }
    set_pod_policy(cluster, json.dumps(policy))
    yield
    set_pod_policy(cluster, shipped.get("podPolicy"))


def set_pod_policy(cluster: Cluster, text: str | None) -> None:
    cluster.patch(CONFIG_MAP, "ome", "inferenceservice-config", {"data": {"podPolicy": text}})


def test_a_namespace_the_exception_selects_gets_the_relaxed_rule(
    cluster, namespace, host_network_exception, operator
):
    seed(cluster, namespace)
    tenant(cluster, namespace)
    manifest = engine(namespace, hostNetwork=True, hostPID=True, nodeName="gpu-node-1")
    other = f"spec.engine.nodeName: {NODE}"
    # Not labelled: the whole policy.
    assert create_as_tenant(cluster, manifest) == (
        1,
        DENIED.format(
            message=f"spec.engine.hostNetwork: {HOST_NS}; spec.engine.hostPID: {HOST_NS}; {other}"
        ),
    )
    cluster.patch("v1/namespaces", None, namespace, {"metadata": {"labels": EXEMPT_LABEL}})
    # Labelled (the operator reads the labels again within --config-cache-ttl, 30 s): only
    # the rule the exception does not relax.
    eventually(
        lambda: create_as_tenant(cluster, manifest) == (1, DENIED.format(message=other)),
        timeout=45,
        interval=1.0,
    )
    del manifest["spec"]["engine"]["nodeName"]
    assert create_as_tenant(cluster, manifest)[0] == 0
    stored = cluster.stored(ISVC, namespace, "chat")
    assert stored["spec"]["engine"]["hostNetwork"] is True


def _ready(cluster: Cluster, namespace: str) -> tuple[str, str, str]:
    found = cluster.stored(ISVC, namespace, "chat")
    ready = [c for c in (found.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"]
    return (ready[0]["status"], ready[0]["reason"], ready[0]["message"]) if ready else ("", "", "")


def test_an_inference_service_admitted_before_the_policy_is_refused_by_the_controller(
    cluster, namespace
):
    """Admitted while ``hostNamespaces`` was off; once the rule is on, the next operator writes
    nothing for the engine and says why, with the webhook's sentence."""
    shipped = cluster.stored(CONFIG_MAP, "ome", "inferenceservice-config").get("data") or {}
    set_pod_policy(cluster, json.dumps({"rules": {"hostNamespaces": False}}))
    try:
        before = start_operator(cluster, f"{namespace}-before")
        try:
            seed(cluster, namespace)
            admitted(cluster, engine(namespace, hostNetwork=True))
        finally:
            assert before.stop() == 0
    finally:
        set_pod_policy(cluster, shipped.get("podPolicy"))
    mark = cluster.plane.audit_mark()
    after = start_operator(cluster, f"{namespace}-after")
    try:
        message = f"engine component: spec.engine.hostNetwork: {HOST_NS}"
        eventually(lambda: _ready(cluster, namespace)[1] == "PodPolicyDenied")
        assert _ready(cluster, namespace) == ("False", "PodPolicyDenied", message)
        warned = eventually(
            lambda: [
                e["message"]
                for e in cluster.list(EVENT, namespace)
                if e["reason"] == "PodPolicyDenied"
            ]
        )
        assert warned == [message]
    finally:
        assert after.stop() == 0
    workloads = [
        w
        for w in cluster.operator_writes(mark, namespace)
        if w.split()[1] in ("deployments", "pods", "inferencereplicas", "leaderworkersets")
    ]
    assert workloads == []
