"""Names and addresses of generated objects (S5.1.1, OPEN-12, S5.2, S5.6).

Every object name goes through ``object_name`` so that a long InferenceService name still gives a
valid DNS label (at most 63 characters) that is stable and distinct per full name.
"""

from __future__ import annotations

import hashlib

from ...models import InferenceService

__all__ = [
    "MAX_NAME_LENGTH",
    "app_label",
    "component_name",
    "component_url",
    "entry_url",
    "headless_service_name",
    "instance_pod_name",
    "leader_worker_set_name",
    "object_name",
]

#: A Service name, a label value and a pod hostname are DNS labels: at most 63 characters.
MAX_NAME_LENGTH = 63

#: OPEN-12: a long name keeps this many characters, then ``-`` and 8 hex digits.
_KEPT = 54


def object_name(*parts: str) -> str:
    """``parts`` joined by ``-``; longer than 63 characters → the first 54, ``-`` and the first 8
    hex digits of the sha256 of the full name (OPEN-12)."""
    name = "-".join(parts)
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:_KEPT]}-{digest}"


def component_name(isvc: str, component: str) -> str:
    """Deployment, InferenceReplica, Service and PDB of a component: ``<isvc>-<component>``."""
    return object_name(isvc, component)


def leader_worker_set_name(isvc: str, component: str) -> str:
    return object_name("lws", isvc, component)


def headless_service_name(isvc: str, component: str) -> str:
    return object_name(isvc, component, "headless")


def instance_pod_name(isvc: str, component: str, index: int, runner: str, ordinal: int) -> str:
    """S5.4.3: ``<isvc>-<component>-<index>-<runner>-<ordinal>``, shortened like any object name
    because the pod's hostname is its name and must be a DNS label."""
    return object_name(isvc, component, str(index), runner, str(ordinal))


def app_label(isvc: str, component: str) -> str:
    """The ``app`` label (S1.9): ``<isvc>-<component>`` cut to 63 characters, without a trailing
    ``-``, ``_`` or ``.`` a label value may not end with."""
    return f"{isvc}-{component}"[:MAX_NAME_LENGTH].rstrip("-_.")


def entry_url(isvc: InferenceService, cluster_domain: str = "cluster.local") -> str:
    """``status.url`` (S5.6): the entry Service on port 8080."""
    return f"http://{object_name(isvc.name)}.{isvc.namespace}.svc.{cluster_domain}:8080"


def component_url(
    isvc: InferenceService, component: str, cluster_domain: str = "cluster.local"
) -> str:
    """``status.components.<component>.url`` (S5.2): the component Service."""
    service = component_name(isvc.name, component)
    return f"http://{service}.{isvc.namespace}.svc.{cluster_domain}"
