"""Names and addresses of generated objects (docs/reference/workloads.md, Names, Entry Service
and URL).

Every object name goes through ``object_name`` so that a long InferenceService name still gives a
valid DNS label (at most 63 characters) that is stable and distinct per full name.
"""

from __future__ import annotations

import hashlib

from ...models import InferenceService

__all__ = [
    "ENTRY_PORT",
    "MAX_NAME_LENGTH",
    "app_label",
    "component_name",
    "component_url",
    "entry_url",
    "headless_service_name",
    "instance_pod_name",
    "leader_worker_set_name",
    "object_name",
    "pod_group_name",
]

#: A Service name, a label value and a pod hostname are DNS labels: at most 63 characters.
MAX_NAME_LENGTH = 63

#: A long name keeps this many characters, then ``-`` and 8 hex digits.
_KEPT = 54


def object_name(*parts: str) -> str:
    """``parts`` joined by ``-``; longer than 63 characters → the first 54, ``-`` and the first 8
    hex digits of the sha256 of the full name."""
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
    """``<isvc>-<component>-<index>-<runner>-<ordinal>``, shortened like any object name
    because the pod's hostname is its name and must be a DNS label."""
    return object_name(isvc, component, str(index), runner, str(ordinal))


def pod_group_name(isvc: str, component: str, index: int, incarnation: int) -> str:
    """The gang PodGroup of one incarnation of Instance ``index``:
    ``<isvc>-<component>-<index>-gang-<incarnation>``, shortened like any object name."""
    return object_name(isvc, component, str(index), "gang", str(incarnation))


def app_label(isvc: str, component: str) -> str:
    """The ``app`` label: ``<isvc>-<component>`` cut to 63 characters, without a trailing
    ``-``, ``_`` or ``.`` a label value may not end with."""
    return f"{isvc}-{component}"[:MAX_NAME_LENGTH].rstrip("-_.")


#: The port the entry Service listens on.
ENTRY_PORT = 8080


def entry_url(isvc: InferenceService, cluster_domain: str = "cluster.local") -> str:
    """``status.url``: the entry Service, on the port it listens on (``ENTRY_PORT``)."""
    return f"http://{object_name(isvc.name)}.{isvc.namespace}.svc.{cluster_domain}:{ENTRY_PORT}"


def component_url(
    isvc: InferenceService, component: str, port: int, cluster_domain: str = "cluster.local"
) -> str:
    """``status.components.<component>.url``: the component Service, on the ``port`` it
    listens on (its first)."""
    service = component_name(isvc.name, component)
    return f"http://{service}.{isvc.namespace}.svc.{cluster_domain}:{port}"
