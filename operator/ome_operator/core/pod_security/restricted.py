"""The checks the Pod Security ``restricted`` level adds to ``baseline``, one function each
(https://kubernetes.io/docs/concepts/security/pod-security-standards/, "Restricted").

Each takes a pod spec and the pod's annotations (JSON trees) and returns the Violation the API
server's PodSecurity admission (Kubernetes 1.36) reports, or None. A check that changed between
policy versions has one function per version; ``evaluating`` says which applies when.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .pod_fields import (
    bad_profile_types,
    containers,
    field,
    in_user_namespace,
    is_windows,
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
    "allow_privilege_escalation",
    "capabilities_restricted",
    "for_linux",
    "outside_user_namespaces",
    "restricted_volumes",
    "run_as_non_root",
    "run_as_user",
    "seccomp_profile_restricted",
]

Spec = Mapping[str, Any]
Annotations = Mapping[str, str]
Check = Callable[[Spec, Annotations], Violation | None]

#: Volume sources ``restricted`` allows: the core ones, and those a PersistentVolume defines.
ALLOWED_VOLUME_SOURCES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
)
#: The other sources, in the order the API server names the first one a volume sets.
RESTRICTED_VOLUME_SOURCES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)


def for_linux(check: Check) -> Check:
    """``check``, passed by a pod whose ``spec.os.name`` is ``windows`` (policy 1.25 on)."""

    def checked(spec: Spec, annotations: Annotations) -> Violation | None:
        return None if is_windows(spec) else check(spec, annotations)

    checked.__doc__ = check.__doc__
    return checked


def outside_user_namespaces(check: Check) -> Check:
    """``check``, passed by a pod in a user namespace, ``hostUsers: false`` (policy 1.35 on)."""

    def checked(spec: Spec, annotations: Annotations) -> Violation | None:
        return None if in_user_namespace(spec) else check(spec, annotations)

    checked.__doc__ = check.__doc__
    return checked


def _containers_phrase(names: list[str]) -> str:
    return f"{pluralize('container', 'containers', len(names))} {join_quote(names)}"


def allow_privilege_escalation(spec: Spec, annotations: Annotations) -> Violation | None:
    """Privilege escalation: a container that does not set ``allowPrivilegeEscalation: false``."""
    bad = [
        name_of(c)
        for c in containers(spec)
        if field(security_context(c), "allowPrivilegeEscalation") is not False
    ]
    if not bad:
        return None
    return Violation(
        "allowPrivilegeEscalation != false",
        f"{_containers_phrase(bad)} must set securityContext.allowPrivilegeEscalation=false",
    )


def capabilities_restricted(spec: Spec, annotations: Annotations) -> Violation | None:
    """Capabilities: a container that does not drop ALL, or adds one but NET_BIND_SERVICE."""
    missing_drop, adding, added = [], [], set()
    for container in containers(spec):
        capabilities = field(security_context(container), "capabilities")
        if not isinstance(capabilities, Mapping):
            missing_drop.append(name_of(container))
            continue
        if "ALL" not in listed(capabilities.get("drop")):
            missing_drop.append(name_of(container))
        extra = {str(c) for c in listed(capabilities.get("add")) if c != "NET_BIND_SERVICE"}
        if extra:
            adding.append(name_of(container))
            added |= extra
    details = []
    if missing_drop:
        details.append(
            f'{_containers_phrase(missing_drop)} must set securityContext.capabilities.drop=["ALL"]'
        )
    if adding:
        details.append(
            f"{_containers_phrase(adding)} must not include {join_quote(sorted(added))} in "
            "securityContext.capabilities.add"
        )
    return Violation("unrestricted capabilities", "; ".join(details)) if details else None


def restricted_volumes(spec: Spec, annotations: Annotations) -> Violation | None:
    """Volume types: a volume of a source other than ``ALLOWED_VOLUME_SOURCES``."""
    names, kinds = [], set()
    for volume in listed(spec.get("volumes")):
        if not isinstance(volume, Mapping):
            continue
        if any(volume.get(source) is not None for source in ALLOWED_VOLUME_SOURCES):
            continue
        names.append(str(volume.get("name") or ""))
        kinds.add(
            next((s for s in RESTRICTED_VOLUME_SOURCES if volume.get(s) is not None), "unknown")
        )
    if not names:
        return None
    count = len(names)
    return Violation(
        "restricted volume types",
        f"{pluralize('volume', 'volumes', count)} {join_quote(names)} "
        f"{pluralize('uses', 'use', count)} "
        f"{pluralize('restricted volume type', 'restricted volume types', len(kinds))} "
        f"{join_quote(sorted(kinds))}",
    )


def run_as_non_root(spec: Spec, annotations: Annotations) -> Violation | None:
    """Running as non-root: ``runAsNonRoot: true`` on the pod or on every container."""
    pod = pod_security_context(spec).get("runAsNonRoot")
    explicit, implicit = [], []
    for container in containers(spec):
        value = field(security_context(container), "runAsNonRoot")
        if value is False:
            explicit.append(name_of(container))
        elif value is None and pod is not True:
            implicit.append(name_of(container))
    who = setters(pod is False, explicit)
    if who:
        return Violation(
            "runAsNonRoot != true",
            f"{' and '.join(who)} must not set securityContext.runAsNonRoot=false",
        )
    if implicit:
        return Violation(
            "runAsNonRoot != true",
            f"pod or {_containers_phrase(implicit)} must set securityContext.runAsNonRoot=true",
        )
    return None


def _is_root(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


def run_as_user(spec: Spec, annotations: Annotations) -> Violation | None:
    """Running as non-root user: ``runAsUser: 0`` on the pod or a container."""
    pod = _is_root(pod_security_context(spec).get("runAsUser"))
    bad = [
        name_of(c) for c in containers(spec) if _is_root(field(security_context(c), "runAsUser"))
    ]
    who = setters(pod, bad)
    if not who:
        return None
    return Violation("runAsUser=0", f"{' and '.join(who)} must not set runAsUser=0")


def seccomp_profile_restricted(spec: Spec, annotations: Annotations) -> Violation | None:
    """Seccomp: RuntimeDefault or Localhost on the pod or on every container."""
    pod_bad, explicit, bad_values = bad_profile_types(spec, "seccompProfile")
    pod_set = isinstance(field(pod_security_context(spec), "seccompProfile"), Mapping)
    implicit = [
        name_of(container)
        for container in containers(spec)
        if not pod_set
        and not isinstance(field(security_context(container), "seccompProfile"), Mapping)
    ]
    who = setters(pod_bad, explicit)
    if who:
        return Violation(
            "seccompProfile",
            f"{' and '.join(who)} must not set securityContext.seccompProfile.type to "
            f"{join_quote(sorted(bad_values))}",
        )
    if implicit:
        return Violation(
            "seccompProfile",
            f"pod or {_containers_phrase(implicit)} must set securityContext.seccompProfile.type "
            'to "RuntimeDefault" or "Localhost"',
        )
    return None
