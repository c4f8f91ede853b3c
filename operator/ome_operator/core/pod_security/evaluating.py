"""Which checks a level runs at a policy version, in which order, and the sentence the API
server's PodSecurity admission answers with.

Order: the ``baseline`` checks sorted by id, then, at ``restricted``, the ``restricted`` checks
sorted by id; a ``restricted`` check replaces the ``baseline`` check it overrides (volume types
replace hostPath volumes, for example). A version after the newest one that changed a check
(``NEWEST_MINOR``) is evaluated as that one, as is ``latest``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import baseline as b
from . import restricted as r
from .policy import BASELINE, PRIVILEGED, RESTRICTED, LevelVersion
from .violations import Violation

__all__ = [
    "CHECKS",
    "NEWEST_MINOR",
    "Check",
    "forbidden_detail",
    "pod_violations",
    "refusal",
    "warning",
]

CheckFn = Callable[[Mapping[str, Any], Mapping[str, str]], Violation | None]


@dataclass(frozen=True)
class Check:
    """One control of the Pod Security Standards, as the API server identifies it."""

    id: str
    level: str
    #: ``(minor, function)``: from policy ``v1.<minor>`` on, until the next entry.
    versions: tuple[tuple[int, CheckFn], ...]
    #: The ``baseline`` checks this one replaces at ``restricted``, once it applies.
    overrides: tuple[str, ...] = ()

    def at(self, minor: int) -> CheckFn | None:
        """The function of policy version ``v1.<minor>``; None before the check existed."""
        found = [fn for since, fn in self.versions if since <= minor]
        return found[-1] if found else None


#: Every check of Kubernetes 1.36, with the policy versions that changed it.
CHECKS = (
    Check("appArmorProfile", BASELINE, ((0, b.app_armor_profile),)),
    Check("capabilities_baseline", BASELINE, ((0, b.capabilities_baseline),)),
    Check("hostNamespaces", BASELINE, ((0, b.host_namespaces),)),
    Check("hostPathVolumes", BASELINE, ((0, b.host_path_volumes),)),
    Check("hostPorts", BASELINE, ((0, b.host_ports),)),
    Check("hostProbesAndHostLifecycle", BASELINE, ((34, b.host_probes_and_lifecycle),)),
    Check("privileged", BASELINE, ((0, b.privileged),)),
    Check("procMount", BASELINE, ((0, b.proc_mount), (35, b.proc_mount_outside_user_namespaces))),
    Check("seLinuxOptions", BASELINE, ((0, b.se_linux_options_1_0), (31, b.se_linux_options_1_31))),
    Check(
        "seccompProfile_baseline",
        BASELINE,
        ((0, b.seccomp_annotations), (19, b.seccomp_profile_baseline)),
    ),
    Check(
        "sysctls",
        BASELINE,
        ((0, b.sysctls_1_0), (27, b.sysctls_1_27), (29, b.sysctls_1_29), (32, b.sysctls_1_32)),
    ),
    Check("windowsHostProcess", BASELINE, ((0, b.windows_host_process),)),
    Check(
        "allowPrivilegeEscalation",
        RESTRICTED,
        ((8, r.allow_privilege_escalation), (25, r.for_linux(r.allow_privilege_escalation))),
    ),
    Check(
        "capabilities_restricted",
        RESTRICTED,
        ((22, r.capabilities_restricted), (25, r.for_linux(r.capabilities_restricted))),
        overrides=("capabilities_baseline",),
    ),
    Check("procMount_restricted", RESTRICTED, ((35, b.proc_mount),), overrides=("procMount",)),
    Check(
        "restrictedVolumes",
        RESTRICTED,
        ((0, r.restricted_volumes),),
        overrides=("hostPathVolumes",),
    ),
    Check(
        "runAsNonRoot",
        RESTRICTED,
        ((0, r.run_as_non_root), (35, r.outside_user_namespaces(r.run_as_non_root))),
    ),
    Check(
        "runAsUser",
        RESTRICTED,
        ((23, r.run_as_user), (35, r.outside_user_namespaces(r.run_as_user))),
    ),
    Check(
        "seccompProfile_restricted",
        RESTRICTED,
        ((19, r.seccomp_profile_restricted), (25, r.for_linux(r.seccomp_profile_restricted))),
        overrides=("seccompProfile_baseline",),
    ),
)
#: The newest policy version that changed a check: later ones, and ``latest``, are this one.
NEWEST_MINOR = max(since for check in CHECKS for since, _ in check.versions)


def _checks(level_version: LevelVersion) -> list[CheckFn]:
    """The functions ``level_version`` runs, in the API server's order."""
    if level_version.level == PRIVILEGED:
        return []
    minor = min(NEWEST_MINOR, NEWEST_MINOR if level_version.minor is None else level_version.minor)
    levels = (BASELINE,) if level_version.level == BASELINE else (BASELINE, RESTRICTED)
    active = [
        (check, fn)
        for check in sorted(CHECKS, key=lambda c: (c.level != BASELINE, c.id))
        if check.level in levels and (fn := check.at(minor)) is not None
    ]
    replaced = {overridden for check, _ in active for overridden in check.overrides}
    return [fn for check, fn in active if check.id not in replaced]


def pod_violations(
    level_version: LevelVersion,
    spec: Mapping[str, Any],
    annotations: Mapping[str, str] | None = None,
) -> tuple[Violation, ...]:
    """What ``level_version`` refuses in a pod (its spec and annotations), in order."""
    found = (fn(spec, annotations or {}) for fn in _checks(level_version))
    return tuple(violation for violation in found if violation is not None)


def forbidden_detail(violations: Sequence[Violation]) -> str:
    """``hostPath volumes (volume "model"), privileged (...)``."""
    return ", ".join(str(violation) for violation in violations)


def refusal(level_version: LevelVersion, violations: Sequence[Violation]) -> str:
    """The API server's answer when ``enforce`` refuses a pod, after ``pods "x" is forbidden:``."""
    return f'violates PodSecurity "{level_version}": {forbidden_detail(violations)}'


def warning(level_version: LevelVersion, violations: Sequence[Violation]) -> str:
    """The API server's ``warn`` warning and ``audit`` annotation for a pod or a workload."""
    return f'would violate PodSecurity "{level_version}": {forbidden_detail(violations)}'
