"""What Pod Security admission would say of the workloads ``ome-operator render`` writes
(docs/security.md, "Pod Security before apply"; docs/reference/cli.md, "ome-operator render").

The namespace's ``pod-security.kubernetes.io/*`` labels come from a Namespace in the input;
without one, or without labels, every mode is ``privileged`` and nothing is said. Each pod
template of a Deployment, LeaderWorkerSet or InferenceReplica (its runners) is checked as the
pods made from it would be, in each mode, once per level and version:

- ``enforce`` refuses the pods: a Warning event ``PodSecurityViolation``, ``<pods> are forbidden:
  violates PodSecurity "<level>:<version>": <what>``, the API server's answer to their create.
  ``render --fail-on-denied`` counts the InferenceService as denied.
- ``audit`` and ``warn`` let them in: a Warning event ``PodSecurityWarning``, ``<pods> would
  violate PodSecurity "<level>:<version>": <what>``, the API server's warning and audit text.

``<pods>`` is ``pods of Deployment <name>``, ``pods of LeaderWorkerSet <name> (leaderTemplate)``
or ``pods of InferenceReplica <name> (runner <runner>)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..core.pod_security import (
    MODES,
    PRIVILEGED,
    LevelVersion,
    namespace_policy,
    pod_violations,
    refusal,
    warning,
)

__all__ = ["POD_SECURITY_VIOLATION", "POD_SECURITY_WARNING", "pod_security_events", "refused"]

#: The reason of the event on pods that the namespace's ``enforce`` level refuses.
POD_SECURITY_VIOLATION = "PodSecurityViolation"
#: The reason of the event on pods that its ``audit`` or ``warn`` level flags.
POD_SECURITY_WARNING = "PodSecurityWarning"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _templates(obj: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each pod template of a workload, with what tells it from the others (or nothing)."""
    spec = _mapping(obj.get("spec"))
    if obj.get("kind") == "Deployment":
        yield "", _mapping(spec.get("template"))
    elif obj.get("kind") == "LeaderWorkerSet":
        group = _mapping(spec.get("leaderWorkerTemplate"))
        for key in ("leaderTemplate", "workerTemplate"):
            if isinstance(group.get(key), Mapping):
                yield key, group[key]
    elif obj.get("kind") == "InferenceReplica":
        runners = spec.get("runners")
        for runner in runners if isinstance(runners, list) else []:
            if isinstance(runner, Mapping):
                yield f"runner {runner.get('name')}", _mapping(runner.get("template"))


def _event(reason: str, message: str) -> dict[str, str]:
    return {"type": "Warning", "reason": reason, "message": message}


def _template_events(
    pods: str, template: Mapping[str, Any], levels: list[tuple[str, LevelVersion]]
) -> Iterator[dict[str, str]]:
    spec = _mapping(template.get("spec"))
    annotations = _mapping(_mapping(template.get("metadata")).get("annotations"))
    for mode, level_version in levels:
        violations = pod_violations(level_version, spec, annotations)
        if not violations:
            continue
        if mode == "enforce":
            message = f"{pods} are forbidden: {refusal(level_version, violations)}"
            yield _event(POD_SECURITY_VIOLATION, message)
        else:
            yield _event(POD_SECURITY_WARNING, f"{pods} {warning(level_version, violations)}")


def pod_security_events(
    labels: Mapping[str, str], objects: list[Mapping[str, Any]]
) -> list[dict[str, str]]:
    """The Pod Security events of ``objects`` (what render writes for one InferenceService) in
    a namespace with ``labels``: by object, then template, then mode (enforce, audit, warn)."""
    policy = namespace_policy(labels)
    levels: list[tuple[str, LevelVersion]] = []
    for mode in MODES:
        level_version = policy.of(mode)
        if level_version.level != PRIVILEGED and level_version not in [lv for _, lv in levels]:
            levels.append((mode, level_version))
    events = []
    for obj in objects:
        name = _mapping(obj.get("metadata")).get("name")
        for part, template in _templates(obj):
            pods = f"pods of {obj['kind']} {name}" + (f" ({part})" if part else "")
            events.extend(_template_events(pods, template, levels))
    return events


def refused(item: Mapping[str, Any]) -> bool:
    """Whether the namespace's ``enforce`` level refuses pods of the report item's workloads."""
    return any(event.get("reason") == POD_SECURITY_VIOLATION for event in item.get("events", ()))
