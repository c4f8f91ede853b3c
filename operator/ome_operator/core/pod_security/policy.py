"""The Pod Security policy of a namespace, from its labels, as the API server reads them
(https://kubernetes.io/docs/concepts/security/pod-security-admission/).

``pod-security.kubernetes.io/<mode>`` names a level and ``<mode>-version`` a policy version for
each mode: ``enforce`` refuses a pod, ``warn`` returns a warning to the client, ``audit`` writes
to the audit log. A mode without a label is ``privileged:latest`` (the API server's defaults,
which an AdmissionConfiguration may change); ``warn`` without labels follows a stricter
``enforce``. A value the API server would not accept falls back as it does: an enforce level to
``restricted``, a warn or audit level to ``privileged``, a version to ``latest``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "BASELINE",
    "LABEL_PREFIX",
    "LEVELS",
    "MODES",
    "PRIVILEGED",
    "RESTRICTED",
    "LevelVersion",
    "NamespacePolicy",
    "namespace_policy",
]

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
#: The levels, least strict first.
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)
#: The modes, in the order the API server evaluates them.
MODES = ("enforce", "audit", "warn")
LABEL_PREFIX = "pod-security.kubernetes.io/"
_VERSION = re.compile(r"v1\.(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class LevelVersion:
    """A level at a policy version: ``baseline:latest``, ``restricted:v1.30``."""

    level: str = PRIVILEGED
    #: ``N`` of the version ``v1.N``; None for ``latest``.
    minor: int | None = None

    def __str__(self) -> str:
        return f"{self.level}:{'latest' if self.minor is None else f'v1.{self.minor}'}"


@dataclass(frozen=True)
class NamespacePolicy:
    """What each mode checks pods against; ``privileged`` checks nothing."""

    enforce: LevelVersion = LevelVersion()
    audit: LevelVersion = LevelVersion()
    warn: LevelVersion = LevelVersion()

    def of(self, mode: str) -> LevelVersion:
        return {"enforce": self.enforce, "audit": self.audit, "warn": self.warn}[mode]


def _level(value: str | None, fallback: str) -> str | None:
    if value is None:
        return None
    return value if value in LEVELS else fallback


def _minor(value: str | None) -> int | None:
    match = _VERSION.fullmatch(value) if isinstance(value, str) else None
    return int(match[1]) if match else None


def namespace_policy(labels: Mapping[str, str]) -> NamespacePolicy:
    """The policy a namespace with ``labels`` has (labels of other keys are ignored)."""
    found = {}
    for mode in MODES:
        level = _level(
            labels.get(LABEL_PREFIX + mode), RESTRICTED if mode == "enforce" else PRIVILEGED
        )
        found[mode] = LevelVersion(
            level or PRIVILEGED, _minor(labels.get(f"{LABEL_PREFIX}{mode}-version"))
        )
    enforce_set = labels.get(LABEL_PREFIX + "enforce") in LEVELS
    stricter = LEVELS.index(found["enforce"].level) > LEVELS.index(found["warn"].level)
    if LABEL_PREFIX + "warn" not in labels and enforce_set and stricter:
        minor = found["enforce"].minor
        if LABEL_PREFIX + "warn-version" in labels:
            minor = found["warn"].minor
        found["warn"] = LevelVersion(found["enforce"].level, minor)
    return NamespacePolicy(**found)
