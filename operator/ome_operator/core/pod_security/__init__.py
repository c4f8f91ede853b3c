"""Pod Security Standards, checked as the API server's PodSecurity admission checks them
(Kubernetes 1.36; docs/security.md, "Pod Security before apply").

Pure functions over pod specs as JSON trees: ``namespace_policy`` reads a namespace's
``pod-security.kubernetes.io/*`` labels, ``pod_violations`` lists what a level refuses in one
pod, in the API server's order, and ``refusal`` and ``warning`` word it as the API server does
(``violates PodSecurity "baseline:latest": hostPath volumes (volume "model")``).
"""

from .evaluating import (
    CHECKS,
    NEWEST_MINOR,
    Check,
    forbidden_detail,
    pod_violations,
    refusal,
    warning,
)
from .policy import (
    BASELINE,
    LABEL_PREFIX,
    LEVELS,
    MODES,
    PRIVILEGED,
    RESTRICTED,
    LevelVersion,
    NamespacePolicy,
    namespace_policy,
)
from .violations import Violation

__all__ = [
    "BASELINE",
    "CHECKS",
    "LABEL_PREFIX",
    "LEVELS",
    "MODES",
    "NEWEST_MINOR",
    "PRIVILEGED",
    "RESTRICTED",
    "Check",
    "LevelVersion",
    "NamespacePolicy",
    "Violation",
    "forbidden_detail",
    "namespace_policy",
    "pod_violations",
    "refusal",
    "warning",
]
