"""Another controller of ome.io InferenceServices in the cluster: OME's own manager and webhook
configurations, which act on the same objects as ome-operator (docs/migrating-from-ome.md).

What counts as OME is decided here from what start-up read (``handlers.startup``): OME's manager
Deployment, and which of OME's webhook configurations exist. Two
controllers of one InferenceService fight over its workloads and status, so the operator refuses
to start beside them unless ``--allow-other-controller`` is set; the texts of both outcomes are
built here, with the objects sorted, so the same cluster always gives the same sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models.object_metadata import labels_of, metadata_of

__all__ = [
    "MANAGER",
    "MANAGER_LABEL",
    "WEBHOOK_CONFIGURATIONS",
    "FoundObject",
    "allowed_warning",
    "found_objects",
    "refusal_message",
    "running_manager",
]

#: (namespace, name) of OME's manager Deployment, as OME's chart (charts/ome-resources) and
#: kustomize install (config/manager) make it: the chart's ConfigMap and certificate annotation
#: name the namespace ``ome``, so the chart is installed there.
MANAGER = ("ome", "ome-controller-manager")
#: The label both put on it (and select its pods with).
MANAGER_LABEL = ("control-plane", "ome-controller-manager")
#: OME's webhook configurations over the kinds ome-operator serves, as OME's chart names them.
#: Each calls OME's manager; with the manager gone, those whose failurePolicy is Fail refuse
#: every write they receive (the pod mutator: every pod labelled ome.io/inferenceservice).
WEBHOOK_CONFIGURATIONS = (
    ("MutatingWebhookConfiguration", "inferenceservice.ome.io"),
    ("ValidatingWebhookConfiguration", "basemodel.ome.io"),
    ("ValidatingWebhookConfiguration", "clusterbasemodel.ome.io"),
    ("ValidatingWebhookConfiguration", "clusterservingruntime.ome.io"),
    ("ValidatingWebhookConfiguration", "inferencereplica.ome.io"),
    ("ValidatingWebhookConfiguration", "inferenceservice.ome.io"),
    ("ValidatingWebhookConfiguration", "servingruntime.ome.io"),
)
#: The flag and its environment variable that start the operator anyway.
_ALLOW = "--allow-other-controller (OME_ALLOW_OTHER_CONTROLLER=true)"


@dataclass(frozen=True, order=True)
class FoundObject:
    """One object of the other controller: its kind, name and namespace (None: cluster-scoped)."""

    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


def _replicas(part: Any) -> int | None:
    found = part.get("replicas") if isinstance(part, Mapping) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def running_manager(deployment: Mapping[str, Any]) -> bool:
    """Whether a Deployment is OME's manager and may run: labelled as it, and neither scaled to
    zero nor still holding pods (``spec.replicas`` unset means 1)."""
    if labels_of(deployment).get(MANAGER_LABEL[0]) != MANAGER_LABEL[1]:
        return False
    desired = _replicas(deployment.get("spec"))
    return desired != 0 or bool(_replicas(deployment.get("status")))


def found_objects(
    deployments: Iterable[Mapping[str, Any]],
    webhook_configurations: Iterable[tuple[str, str]],
    own_configuration: str,
) -> tuple[FoundObject, ...]:
    """The objects of OME that act on ome.io objects, sorted by kind, namespace and name: its
    running managers, and those of ``WEBHOOK_CONFIGURATIONS`` found (``(kind, name)``), less the
    operator's own (``--webhook-configuration``)."""
    found = {
        FoundObject("Deployment", metadata_of(d).get("namespace"), metadata_of(d).get("name", ""))
        for d in deployments
        if running_manager(d)
    }
    found |= {
        FoundObject(kind, None, name)
        for kind, name in webhook_configurations
        if (kind, name) in WEBHOOK_CONFIGURATIONS
        and (kind, name) != ("ValidatingWebhookConfiguration", own_configuration)
    }
    return tuple(sorted(found, key=lambda o: (o.kind, o.namespace or "", o.name)))


def _named(found: Iterable[FoundObject]) -> str:
    return ", ".join(str(o) for o in found)


def refusal_message(found: Iterable[FoundObject]) -> str:
    """Why the operator does not start: every object found, and the two ways on."""
    return (
        f"Another controller of ome.io InferenceServices is in this cluster: {_named(found)}; "
        "stop it and delete its webhook configurations first (docs/migrating-from-ome.md), "
        f"or start with {_ALLOW}"
    )


def allowed_warning(found: Iterable[FoundObject]) -> str:
    """What the operator logs when it starts beside them all the same."""
    return (
        f"Another controller of ome.io InferenceServices is in this cluster: {_named(found)}; "
        "starting anyway (--allow-other-controller): both act on the same InferenceServices "
        "until it is stopped (docs/migrating-from-ome.md)"
    )
