"""The checks of the Pod Security ``baseline`` level, one function each
(https://kubernetes.io/docs/concepts/security/pod-security-standards/, "Baseline").

Each takes a pod spec and the pod's annotations (JSON trees) and returns the Violation the API
server's PodSecurity admission (Kubernetes 1.36) reports, or None. A check that changed between
policy versions has one function per version; ``evaluating`` says which applies when.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import partial
from typing import Any

from .pod_fields import (
    bad_profile_types,
    containers,
    field,
    go_quote,
    in_user_namespace,
    join_quote,
    listed,
    name_of,
    pluralize,
    pod_security_context,
    security_context,
    setters,
)
from .violations import Violation

__all__ = [
    "app_armor_profile",
    "capabilities_baseline",
    "host_namespaces",
    "host_path_volumes",
    "host_ports",
    "host_probes_and_lifecycle",
    "privileged",
    "proc_mount",
    "proc_mount_outside_user_namespaces",
    "se_linux_options_1_0",
    "se_linux_options_1_31",
    "seccomp_annotations",
    "seccomp_profile_baseline",
    "sysctls_1_0",
    "sysctls_1_27",
    "sysctls_1_29",
    "sysctls_1_32",
    "windows_host_process",
]

Spec = Mapping[str, Any]
Annotations = Mapping[str, str]

#: Capabilities a container may add: the container runtime's default set.
DEFAULT_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
_SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"


def _quoted_annotation(key: str, value: Any) -> str:
    return f"{key}={go_quote(str(value))}"


def app_armor_profile(spec: Spec, annotations: Annotations) -> Violation | None:
    """AppArmor: a profile type other than RuntimeDefault or Localhost, or an annotation other
    than ``runtime/default`` or ``localhost/*``."""
    pod_bad, bad_containers, bad_values = bad_profile_types(spec, "appArmorProfile")
    who = setters(pod_bad, bad_containers)
    forbidden = sorted(
        _quoted_annotation(key, value)
        for key, value in annotations.items()
        if key.startswith(_APPARMOR_ANNOTATION)
        and value
        and value != "runtime/default"
        and not str(value).startswith("localhost/")
    )
    if forbidden:
        who.append(pluralize("annotation", "annotations", len(forbidden)))
    if not who:
        return None
    values = [*sorted(bad_values), *forbidden]
    return Violation(
        pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
        f"{' and '.join(who)} must not set AppArmor profile type to {join_quote(values)}",
    )


def capabilities_baseline(spec: Spec, annotations: Annotations) -> Violation | None:
    """Capabilities: a container adds one outside the default set."""
    bad_containers, added = [], set()
    for container in containers(spec):
        adds = listed(field(security_context(container), "capabilities", "add"))
        extra = {str(c) for c in adds if str(c) not in DEFAULT_CAPABILITIES}
        if extra:
            bad_containers.append(name_of(container))
            added |= extra
    if not bad_containers:
        return None
    noun = pluralize("container", "containers", len(bad_containers))
    return Violation(
        "non-default capabilities",
        f"{noun} {join_quote(bad_containers)} must not include {join_quote(sorted(added))} in "
        "securityContext.capabilities.add",
    )


def host_namespaces(spec: Spec, annotations: Annotations) -> Violation | None:
    """Host namespaces: hostNetwork, hostPID or hostIPC set to true."""
    shared = [
        f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key) is True
    ]
    return Violation("host namespaces", ", ".join(shared)) if shared else None


def host_path_volumes(spec: Spec, annotations: Annotations) -> Violation | None:
    """HostPath volumes."""
    names = [
        str(volume.get("name") or "")
        for volume in listed(spec.get("volumes"))
        if isinstance(volume, Mapping) and volume.get("hostPath") is not None
    ]
    if not names:
        return None
    return Violation(
        "hostPath volumes", f"{pluralize('volume', 'volumes', len(names))} {join_quote(names)}"
    )


def host_ports(spec: Spec, annotations: Annotations) -> Violation | None:
    """Host ports: a non-zero ``hostPort``."""
    bad_containers, used = [], set()
    for container in containers(spec):
        found = {
            str(port["hostPort"])
            for port in listed(container.get("ports"))
            if isinstance(port, Mapping) and _is_int(port.get("hostPort")) and port["hostPort"]
        }
        if found:
            bad_containers.append(name_of(container))
            used |= found
    if not bad_containers:
        return None
    count = len(bad_containers)
    return Violation(
        "hostPort",
        f"{pluralize('container', 'containers', count)} {join_quote(bad_containers)} "
        f"{pluralize('uses', 'use', count)} {pluralize('hostPort', 'hostPorts', len(used))} "
        + ", ".join(sorted(used)),
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _handler_hosts(handler: Any) -> list[str]:
    hosts = (field(handler, "httpGet", "host"), field(handler, "tcpSocket", "host"))
    return [host for host in hosts if isinstance(host, str) and host]


def host_probes_and_lifecycle(spec: Spec, annotations: Annotations) -> Violation | None:
    """Probes and lifecycle handlers: a ``host`` in an httpGet or tcpSocket action."""
    bad_containers, hosts = set(), set()
    for container in containers(spec):
        handlers = [container.get(p) for p in ("livenessProbe", "readinessProbe", "startupProbe")]
        handlers += [field(container, "lifecycle", h) for h in ("postStart", "preStop")]
        found = {host for handler in handlers for host in _handler_hosts(handler)}
        if found:
            bad_containers.add(name_of(container))
            hosts |= found
    if not bad_containers:
        return None
    count = len(bad_containers)
    return Violation(
        "probe or lifecycle host",
        f"{pluralize('container', 'containers', count)} {join_quote(sorted(bad_containers))} "
        f"{pluralize('uses', 'use', count)} "
        f"{pluralize('probe or lifecycle host', 'probe or lifecycle hosts', len(hosts))} "
        f"{join_quote(sorted(hosts))}",
    )


def privileged(spec: Spec, annotations: Annotations) -> Violation | None:
    """Privileged containers."""
    bad = [name_of(c) for c in containers(spec) if field(security_context(c), "privileged") is True]
    if not bad:
        return None
    noun = pluralize("container", "containers", len(bad))
    return Violation(
        "privileged", f"{noun} {join_quote(bad)} must not set securityContext.privileged=true"
    )


def proc_mount(spec: Spec, annotations: Annotations) -> Violation | None:
    """/proc mount type: a ``procMount`` other than ``Default``."""
    bad_containers, types = [], set()
    for container in containers(spec):
        mount = field(security_context(container), "procMount")
        if mount is not None and mount != "Default":
            bad_containers.append(name_of(container))
            types.add(str(mount))
    if not bad_containers:
        return None
    noun = pluralize("container", "containers", len(bad_containers))
    return Violation(
        "procMount",
        f"{noun} {join_quote(bad_containers)} must not set securityContext.procMount to "
        f"{join_quote(sorted(types))}",
    )


def proc_mount_outside_user_namespaces(spec: Spec, annotations: Annotations) -> Violation | None:
    """/proc mount type, any value allowed in a user namespace (``hostUsers: false``)."""
    return None if in_user_namespace(spec) else proc_mount(spec, annotations)


def _se_linux_options(
    allowed_types: Collection[str], spec: Spec, annotations: Annotations
) -> Violation | None:
    bad_types: set[str] = set()
    user = role = False

    def valid(options: Mapping[str, Any]) -> bool:
        nonlocal user, role
        kind = str(options.get("type") or "")
        if kind not in allowed_types:
            bad_types.add(kind)
        user = user or bool(options.get("user"))
        role = role or bool(options.get("role"))
        return kind in allowed_types and not options.get("user") and not options.get("role")

    pod = field(pod_security_context(spec), "seLinuxOptions")
    pod_bad = isinstance(pod, Mapping) and not valid(pod)
    bad_containers = []
    for container in containers(spec):
        options = field(security_context(container), "seLinuxOptions")
        if isinstance(options, Mapping) and not valid(options):
            bad_containers.append(name_of(container))
    who = setters(pod_bad, bad_containers)
    if not who:
        return None
    found = []
    if bad_types:
        types = sorted(bad_types)
        found.append(f"{pluralize('type', 'types', len(types))} {join_quote(types)}")
    found += ["user may not be set"] if user else []
    found += ["role may not be set"] if role else []
    return Violation(
        "seLinuxOptions",
        f"{' and '.join(who)} set forbidden securityContext.seLinuxOptions: {'; '.join(found)}",
    )


_SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t")
#: SELinux options: a type outside the container types, or a user or role.
se_linux_options_1_0 = partial(_se_linux_options, _SELINUX_TYPES)
se_linux_options_1_31 = partial(_se_linux_options, (*_SELINUX_TYPES, "container_engine_t"))


def _seccomp_annotation_allowed(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_annotations(spec: Spec, annotations: Annotations) -> Violation | None:
    """Seccomp before policy 1.19: an annotation other than the runtime's default or localhost."""
    keys = [_SECCOMP_POD_ANNOTATION]
    keys += [_SECCOMP_CONTAINER_ANNOTATION + name_of(c) for c in containers(spec)]
    forbidden = {
        _quoted_annotation(key, annotations[key])
        for key in keys
        if key in annotations and not _seccomp_annotation_allowed(str(annotations[key]))
    }
    if not forbidden:
        return None
    noun = pluralize("annotation", "annotations", len(forbidden))
    return Violation("seccompProfile", f"forbidden {noun} {', '.join(sorted(forbidden))}")


def seccomp_profile_baseline(spec: Spec, annotations: Annotations) -> Violation | None:
    """Seccomp: a profile type other than RuntimeDefault or Localhost (Unconfined)."""
    pod_bad, bad_containers, bad_values = bad_profile_types(spec, "seccompProfile")
    who = setters(pod_bad, bad_containers)
    if not who:
        return None
    return Violation(
        "seccompProfile",
        f"{' and '.join(who)} must not set securityContext.seccompProfile.type to "
        f"{join_quote(sorted(bad_values))}",
    )


def _sysctls(allowed: Collection[str], spec: Spec, annotations: Annotations) -> Violation | None:
    names = [
        str(sysctl.get("name") or "")
        for sysctl in listed(field(pod_security_context(spec), "sysctls"))
        if isinstance(sysctl, Mapping) and sysctl.get("name") not in allowed
    ]
    return Violation("forbidden sysctls", ", ".join(names)) if names else None


_SYSCTLS_1_0 = (
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
)
_SYSCTLS_1_27 = (*_SYSCTLS_1_0, "net.ipv4.ip_local_reserved_ports")
_SYSCTLS_1_29 = (
    *_SYSCTLS_1_27,
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
)
#: Sysctls: one outside the safe set of the policy version.
sysctls_1_0 = partial(_sysctls, _SYSCTLS_1_0)
sysctls_1_27 = partial(_sysctls, _SYSCTLS_1_27)
sysctls_1_29 = partial(_sysctls, _SYSCTLS_1_29)
sysctls_1_32 = partial(_sysctls, (*_SYSCTLS_1_29, "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"))


def windows_host_process(spec: Spec, annotations: Annotations) -> Violation | None:
    """HostProcess: Windows host process containers."""
    pod = field(pod_security_context(spec), "windowsOptions", "hostProcess") is True
    bad = [
        name_of(c)
        for c in containers(spec)
        if field(security_context(c), "windowsOptions", "hostProcess") is True
    ]
    who = setters(pod, bad)
    if not who:
        return None
    return Violation(
        "hostProcess",
        f"{' and '.join(who)} must not set securityContext.windowsOptions.hostProcess=true",
    )
