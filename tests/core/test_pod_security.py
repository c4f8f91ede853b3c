"""Pod Security checks (docs/security.md, "Pod Security before apply"): every check of
``baseline`` and ``restricted``, and the policy versions that changed one, with the exact
sentence the API server's PodSecurity admission (Kubernetes 1.36) answers a pod create with.

Each case's sentence is the one a kube-apiserver v1.36.3 (``--allow-privileged``) answered a
dry-run create of its pod with, in a namespace enforcing its level and version."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core import pod_security
from ome_operator.core.pod_security import (
    CHECKS,
    LevelVersion,
    Violation,
    forbidden_detail,
    pod_violations,
    refusal,
    warning,
)

BASELINE = LevelVersion("baseline")
RESTRICTED = LevelVersion("restricted")
#: What ``restricted`` asks of every container, and of the pod.
HARDENED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
HARDENED_POD = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def container(name: str = "app", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", **fields}


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"containers": list(containers) or [container()], **spec}


def hardened(name: str = "app", **context: Any) -> dict[str, Any]:
    return container(name, securityContext={**HARDENED, **context})


def restricted_pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A pod ``restricted`` allows, but for what ``containers`` and ``spec`` change."""
    context = {**HARDENED_POD, **spec.pop("securityContext", {})}
    return pod(*(containers or [hardened()]), securityContext=context, **spec)


def at(level: str, minor: int | None = None) -> LevelVersion:
    return LevelVersion(level, minor)


CASES = [
    # -- baseline --------------------------------------------------------------------------
    pytest.param(BASELINE, pod(), {}, None, id="a pod that sets nothing passes baseline"),
    pytest.param(
        BASELINE,
        pod(securityContext={"appArmorProfile": {"type": "Unconfined"}}),
        {},
        'forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")',
        id="baseline refuses an Unconfined AppArmor profile on the pod",
    ),
    pytest.param(
        BASELINE,
        pod(container(securityContext={"appArmorProfile": {"type": "Unconfined"}})),
        {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"},
        'forbidden AppArmor profiles (container "app" and annotation must not set AppArmor '
        'profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/app='
        '"unconfined"")',
        id="baseline names the containers and annotations that set an AppArmor profile",
    ),
    pytest.param(
        BASELINE,
        pod(
            container(securityContext={"capabilities": {"add": ["SYS_TIME", "CHOWN"]}}),
            container("sidecar", securityContext={"capabilities": {"add": ["NET_ADMIN"]}}),
        ),
        {},
        'non-default capabilities (containers "app", "sidecar" must not include "NET_ADMIN", '
        '"SYS_TIME" in securityContext.capabilities.add)',
        id="baseline refuses capabilities outside the default set, sorted",
    ),
    pytest.param(
        BASELINE,
        pod(hostNetwork=True, hostPID=True, hostIPC=True),
        {},
        "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)",
        id="baseline refuses each host namespace",
    ),
    pytest.param(
        BASELINE,
        pod(volumes=[{"name": "model", "hostPath": {"path": "/models"}}]),
        {},
        'hostPath volumes (volume "model")',
        id="baseline refuses a hostPath volume",
    ),
    pytest.param(
        BASELINE,
        pod(
            volumes=[
                {"name": "model", "hostPath": {"path": "/models"}},
                {"name": "cache", "emptyDir": {}},
                {"name": "dev", "hostPath": {"path": "/dev"}},
            ]
        ),
        {},
        'hostPath volumes (volumes "model", "dev")',
        id="baseline names every hostPath volume in order",
    ),
    pytest.param(
        BASELINE,
        pod(
            container(ports=[{"containerPort": 8080, "hostPort": 8080}]),
            container("metrics", ports=[{"containerPort": 9090, "hostPort": 10090}]),
        ),
        {},
        'hostPort (containers "app", "metrics" use hostPorts 10090, 8080)',
        id="baseline refuses host ports, sorted as text",
    ),
    pytest.param(
        BASELINE,
        pod(
            container(
                "web",
                readinessProbe={"httpGet": {"host": "10.0.0.1", "port": 8080}},
                lifecycle={"preStop": {"httpGet": {"host": "metadata", "port": 80}}},
            ),
            container("app", livenessProbe={"tcpSocket": {"host": "10.0.0.1", "port": 22}}),
        ),
        {},
        'probe or lifecycle host (containers "app", "web" use probe or lifecycle hosts '
        '"10.0.0.1", "metadata")',
        id="baseline refuses a host in probes and lifecycle handlers, both sorted",
    ),
    pytest.param(
        BASELINE,
        pod(container(securityContext={"privileged": True})),
        {},
        'privileged (container "app" must not set securityContext.privileged=true)',
        id="baseline refuses a privileged container",
    ),
    pytest.param(
        BASELINE,
        pod(container(securityContext={"procMount": "Unmasked"}), hostUsers=False),
        {},
        None,
        id="baseline allows an unmasked /proc in a user namespace",
    ),
    pytest.param(
        BASELINE,
        pod(
            container(securityContext={"seLinuxOptions": {"type": "spc_t", "role": "sysadm_r"}}),
            securityContext={"seLinuxOptions": {"user": "root"}},
        ),
        {},
        'seLinuxOptions (pod and container "app" set forbidden securityContext.seLinuxOptions: '
        'type "spc_t"; user may not be set; role may not be set)',
        id="baseline refuses SELinux types outside the container types, users and roles",
    ),
    pytest.param(
        BASELINE,
        pod(container(securityContext={"seLinuxOptions": {"type": "container_engine_t"}})),
        {},
        None,
        id="baseline allows the container_engine_t SELinux type",
    ),
    pytest.param(
        BASELINE,
        pod(
            container(securityContext={"seccompProfile": {"type": "Unconfined"}}),
            securityContext={"seccompProfile": {"type": "Unconfined"}},
        ),
        {},
        'seccompProfile (pod and container "app" must not set securityContext.seccompProfile.'
        'type to "Unconfined")',
        id="baseline refuses an Unconfined seccomp profile",
    ),
    pytest.param(
        BASELINE,
        pod(
            securityContext={
                "sysctls": [
                    {"name": "kernel.msgmax", "value": "1"},
                    {"name": "net.ipv4.tcp_rmem", "value": "4096 87380 6291456"},
                    {"name": "kernel.sem", "value": "1"},
                ]
            }
        ),
        {},
        "forbidden sysctls (kernel.msgmax, kernel.sem)",
        id="baseline refuses sysctls outside the safe set, in order",
    ),
    pytest.param(
        BASELINE,
        pod(
            container(securityContext={"windowsOptions": {"hostProcess": True}}),
            os={"name": "windows"},
            hostNetwork=True,
            securityContext={"windowsOptions": {"hostProcess": True}},
        ),
        {},
        'host namespaces (hostNetwork=true), hostProcess (pod and container "app" must not '
        "set securityContext.windowsOptions.hostProcess=true)",
        id="baseline refuses Windows host processes",
    ),
    # -- restricted ------------------------------------------------------------------------
    pytest.param(
        RESTRICTED,
        restricted_pod(volumes=[{"name": "cache", "emptyDir": {}}]),
        {},
        None,
        id="a pod that drops everything and runs as non-root passes restricted",
    ),
    pytest.param(
        RESTRICTED,
        pod(),
        {},
        'allowPrivilegeEscalation != false (container "app" must set securityContext.'
        'allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set '
        'securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container '
        '"app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container '
        '"app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
        id="restricted asks a pod that sets nothing for four fields",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            hardened(allowPrivilegeEscalation=True),
            container("init", securityContext={"capabilities": {"drop": ["ALL"]}}),
        ),
        {},
        'allowPrivilegeEscalation != false (containers "app", "init" must set '
        "securityContext.allowPrivilegeEscalation=false)",
        id="restricted refuses privilege escalation allowed or left unset",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            hardened(capabilities={"drop": ["NET_RAW"], "add": ["SYS_ADMIN", "NET_BIND_SERVICE"]})
        ),
        {},
        'unrestricted capabilities (container "app" must set securityContext.capabilities.'
        'drop=["ALL"]; container "app" must not include "SYS_ADMIN" in '
        "securityContext.capabilities.add)",
        id="restricted asks to drop ALL and add only NET_BIND_SERVICE, replacing the baseline",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(hardened(procMount="Unmasked"), hostUsers=False),
        {},
        'procMount (container "app" must not set securityContext.procMount to "Unmasked")',
        id="restricted refuses an unmasked /proc even in a user namespace",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            volumes=[
                {"name": "model", "hostPath": {"path": "/models"}},
                {"name": "claim", "persistentVolumeClaim": {"claimName": "models"}},
                {"name": "share", "nfs": {"server": "nfs", "path": "/"}},
                {"name": "inline", "csi": {"driver": "models.example.com"}},
            ]
        ),
        {},
        'restricted volume types (volumes "model", "share" use restricted volume types '
        '"hostPath", "nfs")',
        id="restricted refuses volume types but the core ones, replacing hostPath volumes",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            hardened(runAsNonRoot=False),
            hardened("sidecar"),
            securityContext={"runAsNonRoot": False},
        ),
        {},
        'runAsNonRoot != true (pod and container "app" must not set '
        "securityContext.runAsNonRoot=false)",
        id="restricted names who sets runAsNonRoot to false",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            hardened(runAsNonRoot=True),
            hardened("sidecar"),
            securityContext={"seccompProfile": {"type": "RuntimeDefault"}, "runAsNonRoot": None},
        ),
        {},
        'runAsNonRoot != true (pod or container "sidecar" must set '
        "securityContext.runAsNonRoot=true)",
        id="restricted names the containers that leave runAsNonRoot unset without the pod's",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(hardened(runAsUser=0), securityContext={"runAsUser": 0}),
        {},
        'runAsUser=0 (pod and container "app" must not set runAsUser=0)',
        id="restricted refuses runAsUser 0",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            hardened(seccompProfile={"type": "Unconfined"}),
            hardened("sidecar"),
            securityContext={"runAsNonRoot": True},
        ),
        {},
        'seccompProfile (container "app" must not set securityContext.seccompProfile.type to '
        '"Unconfined")',
        id="restricted names who sets an Unconfined seccomp profile, replacing the baseline",
    ),
    pytest.param(
        RESTRICTED,
        pod(
            hardened(seccompProfile={"type": "Localhost", "localhostProfile": "p.json"}),
            hardened("sidecar"),
            securityContext={"runAsNonRoot": True},
        ),
        {},
        'seccompProfile (pod or container "sidecar" must set securityContext.seccompProfile.'
        'type to "RuntimeDefault" or "Localhost")',
        id="restricted names the containers without a seccomp profile or the pod's",
    ),
    pytest.param(
        RESTRICTED,
        pod(container(securityContext={"runAsNonRoot": True}), os={"name": "windows"}),
        {},
        None,
        id="restricted asks a Windows pod for no Linux field",
    ),
    pytest.param(
        RESTRICTED,
        restricted_pod(
            hardened(runAsUser=0), securityContext={"runAsNonRoot": False}, hostUsers=False
        ),
        {},
        None,
        id="restricted allows root in a user namespace",
    ),
]


VERSION_CASES = [
    pytest.param(
        at("baseline", 33),
        pod(container(readinessProbe={"httpGet": {"host": "10.0.0.1", "port": 8080}})),
        {},
        None,
        id="before 1.34 baseline allows a host in probes",
    ),
    pytest.param(
        at("baseline", 30),
        pod(container(securityContext={"seLinuxOptions": {"type": "container_engine_t"}})),
        {},
        'seLinuxOptions (container "app" set forbidden securityContext.seLinuxOptions: type '
        '"container_engine_t")',
        id="before 1.31 baseline refuses the container_engine_t SELinux type",
    ),
    pytest.param(
        at("baseline", 26),
        pod(securityContext={"sysctls": [{"name": "net.ipv4.ip_local_reserved_ports"}]}),
        {},
        "forbidden sysctls (net.ipv4.ip_local_reserved_ports)",
        id="before 1.27 baseline refuses reserved local ports",
    ),
    pytest.param(
        at("baseline", 28),
        pod(securityContext={"sysctls": [{"name": "net.ipv4.tcp_keepalive_time"}]}),
        {},
        "forbidden sysctls (net.ipv4.tcp_keepalive_time)",
        id="before 1.29 baseline refuses TCP keepalive sysctls",
    ),
    pytest.param(
        at("baseline", 31),
        pod(securityContext={"sysctls": [{"name": "net.ipv4.tcp_wmem"}]}),
        {},
        "forbidden sysctls (net.ipv4.tcp_wmem)",
        id="before 1.32 baseline refuses TCP buffer sysctls",
    ),
    pytest.param(
        at("baseline", 34),
        pod(container(securityContext={"procMount": "Unmasked"}), hostUsers=False),
        {},
        'procMount (container "app" must not set securityContext.procMount to "Unmasked")',
        id="before 1.35 baseline refuses an unmasked /proc even in a user namespace",
    ),
    pytest.param(
        at("baseline", 18),
        pod(securityContext={"seccompProfile": {"type": "Unconfined"}}),
        {
            "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/app": "localhost/p.json",
        },
        "seccompProfile (forbidden annotation "
        'seccomp.security.alpha.kubernetes.io/pod="unconfined")',
        id="before 1.19 baseline reads the seccomp annotations, not the fields",
    ),
    pytest.param(
        at("restricted", 21),
        pod(
            container(securityContext={"capabilities": {"add": ["SYS_ADMIN"]}}),
            securityContext={"runAsNonRoot": True},
        ),
        {},
        'non-default capabilities (container "app" must not include "SYS_ADMIN" in '
        "securityContext.capabilities.add), allowPrivilegeEscalation != false (container "
        '"app" must set securityContext.allowPrivilegeEscalation=false), seccompProfile (pod '
        'or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" '
        'or "Localhost")',
        id="before 1.22 restricted keeps the baseline capabilities check",
    ),
    pytest.param(
        at("restricted", 7),
        pod(securityContext={"runAsNonRoot": True}),
        {},
        None,
        id="before 1.8 restricted asks nothing about privilege escalation",
    ),
    pytest.param(
        at("restricted", 22),
        restricted_pod(securityContext={"runAsUser": 0}),
        {},
        None,
        id="before 1.23 restricted allows runAsUser 0",
    ),
    pytest.param(
        at("restricted", 24),
        pod(container(securityContext={"runAsNonRoot": True}), os={"name": "windows"}),
        {},
        'allowPrivilegeEscalation != false (container "app" must set securityContext.'
        'allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set '
        'securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "app" '
        'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
        id="before 1.25 restricted asks a Windows pod for the Linux fields",
    ),
    pytest.param(
        at("restricted", 34),
        restricted_pod(
            hardened(runAsUser=0), securityContext={"runAsNonRoot": False}, hostUsers=False
        ),
        {},
        "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), "
        'runAsUser=0 (container "app" must not set runAsUser=0)',
        id="before 1.35 restricted refuses root even in a user namespace",
    ),
    pytest.param(
        at("baseline", 99),
        pod(volumes=[{"name": "model", "hostPath": {"path": "/models"}}]),
        {},
        'hostPath volumes (volume "model")',
        id="a version after the newest change is checked as the newest",
    ),
    pytest.param(
        at("privileged"),
        pod(hostNetwork=True, volumes=[{"name": "model", "hostPath": {"path": "/models"}}]),
        {},
        None,
        id="privileged checks nothing",
    ),
]


@pytest.mark.parametrize(("level", "spec", "annotations", "detail"), CASES + VERSION_CASES)
def test_a_level_refuses_what_the_api_server_refuses(
    level: LevelVersion, spec: dict, annotations: dict, detail: str | None
) -> None:
    found = pod_violations(level, spec, annotations)
    expected = None if detail is None else f'violates PodSecurity "{level}": {detail}'
    assert (refusal(level, found) if found else None) == expected


def test_every_check_is_covered_by_a_case_that_it_refuses() -> None:
    refused = set()
    for case in CASES + VERSION_CASES:
        _, spec, annotations, detail = case.values
        if detail is not None:
            refused |= {
                check.id
                for check in CHECKS
                if any(fn(spec, annotations) for _, fn in check.versions)
            }
    assert refused == {check.id for check in CHECKS}


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param(
            refusal,
            'violates PodSecurity "baseline:v1.30": hostPath volumes (volume "model"), hostPort',
            id="a refusal is the API server's forbidden message",
        ),
        pytest.param(
            warning,
            'would violate PodSecurity "baseline:v1.30": hostPath volumes (volume "model"), '
            "hostPort",
            id="a warning is the API server's warning and audit annotation",
        ),
    ],
)
def test_violations_are_worded_as_the_api_server_words_them(words, expected: str) -> None:
    violations = (Violation("hostPath volumes", 'volume "model"'), Violation("hostPort"))
    assert words(LevelVersion("baseline", 30), violations) == expected


def test_the_detail_lists_each_reason_with_its_detail_in_parentheses() -> None:
    assert forbidden_detail([Violation("a", "1"), Violation("b")]) == "a (1), b"


def test_the_package_exports_exactly_its_public_api() -> None:
    assert sorted(pod_security.__all__) == [
        "BASELINE",
        "CHECKS",
        "Check",
        "LABEL_PREFIX",
        "LEVELS",
        "LevelVersion",
        "MODES",
        "NEWEST_MINOR",
        "NamespacePolicy",
        "PRIVILEGED",
        "RESTRICTED",
        "Violation",
        "forbidden_detail",
        "namespace_policy",
        "pod_violations",
        "refusal",
        "warning",
    ]
