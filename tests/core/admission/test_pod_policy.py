"""The pod policy (docs/configuration.md, "podPolicy"): each refused pod field of an
InferenceService is denied with its field path and rule, every rule can be switched off, and a
namespace whose labels match an exception gets its rules relaxed and more names allowed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.core.pod_policy import RULES, pod_policy_denials
from tests.builders import make_isvc
from tests.core.admission.reviews import (
    AdmissionVerdict,
    allowed_verdict,
    denied_verdict,
    review_of,
)

if TYPE_CHECKING:
    from _pytest.mark import ParameterSet

RUNNER = {"image": "vllm:1"}
HOST_NS = "host namespaces are refused by the pod policy (rule hostNamespaces)"
HOST_PATH = "hostPath volumes are refused by the pod policy (rule hostPath)"
PRIVILEGED = "privileged containers are refused by the pod policy (rule privileged)"
ESCALATION = "privilege escalation is refused by the pod policy (rule privilegeEscalation)"
ROOT = "running as root (user 0) is refused by the pod policy (rule runAsRoot)"
HOST_PORTS = "host ports are refused by the pod policy (rule hostPorts)"
NODE = "choosing the node by name is refused by the pod policy (rule nodeName)"
TOKEN = (
    "mounting the service account token is refused by the pod policy "
    "(rule automountServiceAccountToken)"
)


def capability(name: str, allowed: str = "NET_BIND_SERVICE") -> str:
    return f"capability {name} is refused by the pod policy (rule capabilities; allowed: {allowed})"


def account(name: str, allowed: str = "default") -> str:
    return (
        f'service account "{name}" is refused by the pod policy '
        f"(rule serviceAccountName; allowed: {allowed})"
    )


def config(**policy: Any) -> OperatorConfig:
    parsed = parse_operator_config({"podPolicy": json.dumps(policy)})
    assert parsed.problem is None
    return parsed


def review(
    isvc_fields: dict[str, Any],
    policy: OperatorConfig | None = None,
    labels: dict[str, str] | None = None,
) -> AdmissionVerdict:
    return review_of(make_isvc(**isvc_fields), config=policy, namespace_labels=labels or {})


def engine(**fields: Any) -> dict[str, Any]:
    return {"engine": {"runner": RUNNER, **fields}}


def runner(**fields: Any) -> dict[str, Any]:
    return {"engine": {"runner": {**RUNNER, **fields}}}


def secured(**context: Any) -> dict[str, Any]:
    return runner(securityContext=context)


def refused_pod_field(field: str, value: Any, reason: str, id: str) -> ParameterSet:
    """A row: the engine's pod ``field`` set to ``value`` is denied at its path for ``reason``."""
    return pytest.param(engine(**{field: value}), f"spec.engine.{field}: {reason}", id=id)


def refused_runner_context(field: str, value: Any, reason: str, id: str) -> ParameterSet:
    """A row: the runner's ``securityContext.<field>`` set to ``value`` is denied for ``reason``."""
    path = f"spec.engine.runner.securityContext.{field}"
    return pytest.param(secured(**{field: value}), f"{path}: {reason}", id=id)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        refused_pod_field("hostNetwork", True, HOST_NS, id="hostNetwork"),
        refused_pod_field("hostPID", True, HOST_NS, id="hostPID"),
        refused_pod_field("hostIPC", True, HOST_NS, id="hostIPC"),
        refused_pod_field("nodeName", "gpu-7", NODE, id="a nodeName"),
        refused_pod_field(
            "serviceAccountName",
            "admin",
            account("admin"),
            id="a serviceAccountName other than default",
        ),
        refused_pod_field(
            "serviceAccount", "admin", account("admin"), id="the deprecated serviceAccount field"
        ),
        refused_pod_field(
            "automountServiceAccountToken", True, TOKEN, id="automountServiceAccountToken true"
        ),
        pytest.param(
            engine(
                volumes=[
                    {"name": "ok", "emptyDir": {}},
                    {"name": "root", "hostPath": {"path": "/"}},
                ]
            ),
            f"spec.engine.volumes[1].hostPath: {HOST_PATH}",
            id="a hostPath volume",
        ),
        pytest.param(
            engine(securityContext={"runAsUser": 0}),
            f"spec.engine.securityContext.runAsUser: {ROOT}",
            id="the pod running as user 0",
        ),
        refused_runner_context("privileged", True, PRIVILEGED, id="a privileged runner"),
        pytest.param(
            secured(capabilities={"add": ["NET_BIND_SERVICE", "SYS_ADMIN"]}),
            f"spec.engine.runner.securityContext.capabilities.add[1]: {capability('SYS_ADMIN')}",
            id="an added capability other than NET_BIND_SERVICE",
        ),
        refused_runner_context(
            "allowPrivilegeEscalation", True, ESCALATION, id="allowPrivilegeEscalation true"
        ),
        refused_runner_context("runAsUser", 0, ROOT, id="a runner running as user 0"),
        pytest.param(
            runner(ports=[{"containerPort": 8080, "hostPort": 80}]),
            f"spec.engine.runner.ports[0].hostPort: {HOST_PORTS}",
            id="a host port",
        ),
        pytest.param(
            engine(initContainers=[{"name": "i", "securityContext": {"privileged": True}}]),
            f"spec.engine.initContainers[0].securityContext.privileged: {PRIVILEGED}",
            id="a privileged init container",
        ),
        pytest.param(
            engine(containers=[{"name": "side", "securityContext": {"runAsUser": 0}}]),
            f"spec.engine.containers[0].securityContext.runAsUser: {ROOT}",
            id="a sidecar running as user 0",
        ),
        pytest.param(
            engine(ephemeralContainers=[{"name": "e", "ports": [{"hostPort": 1}]}]),
            f"spec.engine.ephemeralContainers[0].ports[0].hostPort: {HOST_PORTS}",
            id="an ephemeral container's host port",
        ),
        pytest.param(
            {
                "engine": {
                    "leader": {"hostNetwork": True, "runner": RUNNER},
                    "worker": {
                        "size": 1,
                        "runner": {**RUNNER, "securityContext": {"privileged": True}},
                    },
                }
            },
            f"spec.engine.leader.hostNetwork: {HOST_NS}; "
            f"spec.engine.worker.runner.securityContext.privileged: {PRIVILEGED}",
            id="a leader's pod fields and a worker's runner",
        ),
        pytest.param(
            {"engine": {"runner": RUNNER}, "decoder": {"runner": RUNNER, "hostPID": True}},
            f"spec.decoder.hostPID: {HOST_NS}",
            id="the decoder",
        ),
        pytest.param(
            {"engine": {"runner": RUNNER}, "router": {"runner": RUNNER, "nodeName": "n"}},
            f"spec.router.nodeName: {NODE}",
            id="the router",
        ),
    ],
)
def test_each_refused_field_is_denied_with_its_path_and_rule(
    fields: dict[str, Any], message: str
) -> None:
    assert review(fields) == denied_verdict(message)


def test_every_denial_is_listed_in_one_message_in_a_fixed_order() -> None:
    fields = {
        "engine": {
            "hostPID": True,
            "hostNetwork": True,
            "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "nodeName": "n",
            "serviceAccountName": "admin",
            "runner": {
                **RUNNER,
                "securityContext": {"runAsUser": 0, "capabilities": {"add": ["SYS_ADMIN"]}},
            },
        },
        "router": {"runner": RUNNER, "automountServiceAccountToken": True},
    }
    assert review(fields) == denied_verdict(
        "; ".join(
            [
                f"spec.engine.hostNetwork: {HOST_NS}",
                f"spec.engine.hostPID: {HOST_NS}",
                f"spec.engine.nodeName: {NODE}",
                f"spec.engine.serviceAccountName: {account('admin')}",
                f"spec.engine.volumes[0].hostPath: {HOST_PATH}",
                "spec.engine.runner.securityContext.capabilities.add[0]: "
                f"{capability('SYS_ADMIN')}",
                f"spec.engine.runner.securityContext.runAsUser: {ROOT}",
                f"spec.router.automountServiceAccountToken: {TOKEN}",
            ]
        )
    )


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param(engine(hostNetwork=False, hostPID=False), id="host namespaces set to false"),
        pytest.param(engine(serviceAccountName="default"), id="the default service account"),
        pytest.param(engine(automountServiceAccountToken=False), id="no token mounted"),
        pytest.param(
            secured(
                runAsUser=1000,
                runAsNonRoot=True,
                privileged=False,
                allowPrivilegeEscalation=False,
                capabilities={"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
            ),
            id="a restricted runner",
        ),
        pytest.param(engine(volumes=[{"name": "cache", "emptyDir": {}}]), id="an emptyDir volume"),
        pytest.param(runner(ports=[{"containerPort": 8080}]), id="a container port"),
    ],
)
def test_what_the_policy_does_not_refuse_is_admitted(fields: dict[str, Any]) -> None:
    assert review(fields) == allowed_verdict()


EVERYTHING = {
    "engine": {
        "hostNetwork": True,
        "nodeName": "n",
        "serviceAccountName": "admin",
        "automountServiceAccountToken": True,
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "runner": {
            **RUNNER,
            "ports": [{"hostPort": 80}],
            "securityContext": {
                "privileged": True,
                "capabilities": {"add": ["SYS_ADMIN"]},
                "allowPrivilegeEscalation": True,
                "runAsUser": 0,
            },
        },
    }
}


def test_with_every_rule_switched_off_nothing_is_refused() -> None:
    off = config(rules={rule: False for rule in RULES})
    assert review(EVERYTHING, off) == allowed_verdict()


@pytest.mark.parametrize(
    "rule",
    [pytest.param(rule, id=f"rule {rule} off refuses everything else") for rule in RULES],
)
def test_one_rule_switched_off_drops_only_its_denials(rule: str) -> None:
    isvc = make_isvc(**EVERYTHING)
    everything = pod_policy_denials(isvc, OperatorConfig().pod_policy, {})
    relaxed = pod_policy_denials(isvc, config(rules={rule: False}).pod_policy, {})
    assert relaxed == tuple(d for d in everything if f"(rule {rule}" not in d)
    assert len(relaxed) == len(everything) - 1


GPU_TEAM = {
    "exceptions": [
        {
            "namespaceSelector": {"matchLabels": {"team": "gpu-infra"}},
            "relax": ["hostPath", "hostNamespaces"],
            "allowedServiceAccountNames": ["inference"],
            "allowedCapabilities": ["IPC_LOCK"],
        }
    ]
}
INFRA = engine(
    hostNetwork=True,
    volumes=[{"name": "m", "hostPath": {"path": "/models"}}],
    serviceAccountName="inference",
    runner={**RUNNER, "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}},
)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param(
            {"team": "gpu-infra", "other": "x"},
            allowed_verdict(),
            id="a namespace whose labels match the exception gets its rules relaxed",
        ),
        pytest.param(
            {"team": "web"},
            denied_verdict(
                f"spec.engine.hostNetwork: {HOST_NS}; "
                f"spec.engine.serviceAccountName: {account('inference')}; "
                f"spec.engine.volumes[0].hostPath: {HOST_PATH}; "
                "spec.engine.runner.securityContext.capabilities.add[0]: "
                f"{capability('IPC_LOCK')}"
            ),
            id="a namespace that does not match gets the whole policy",
        ),
    ],
)
def test_an_exception_applies_to_the_namespaces_it_selects(
    labels: dict[str, str], expected: AdmissionVerdict
) -> None:
    assert review(INFRA, config(**GPU_TEAM), labels) == expected


def test_an_exception_keeps_the_rules_it_does_not_relax() -> None:
    fields = engine(nodeName="n", hostIPC=True)
    assert review(fields, config(**GPU_TEAM), {"team": "gpu-infra"}) == denied_verdict(
        f"spec.engine.nodeName: {NODE}"
    )


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param({}, True, id="an empty selector selects every namespace"),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
            True,
            id="In selects a listed value",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["b"]}]},
            True,
            id="NotIn selects another value",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
            True,
            id="Exists selects a present key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
            False,
            id="DoesNotExist does not select a present key",
        ),
        pytest.param(
            {
                "matchLabels": {"tier": "a"},
                "matchExpressions": [{"key": "x", "operator": "Exists"}],
            },
            False,
            id="every term must hold",
        ),
    ],
)
def test_namespace_selectors_select_as_kubernetes_does(
    selector: dict[str, Any], matches: bool
) -> None:
    policy = config(exceptions=[{"namespaceSelector": selector, "relax": ["nodeName"]}])
    verdict = review(engine(nodeName="n"), policy, {"tier": "a"})
    assert verdict.allowed is matches


def test_a_runtime_s_pod_fields_are_not_the_tenant_s_and_are_not_checked() -> None:
    """Only the InferenceService is reviewed: ServingRuntimes are written by platform admins."""
    isvc = make_isvc(engine={"runner": RUNNER})
    assert pod_policy_denials(isvc, OperatorConfig().pod_policy, {}) == ()
