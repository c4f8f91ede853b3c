"""Every API resource the operator and the CLI address, in one table.

A ``Resource`` names its group, version, plural, kind and scope, and builds the paths and the
wording the API server uses for it. The informers, the writer, the CLI's readers and the
handlers all take their resources from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ACCELERATOR_CLASS",
    "BASE_MODEL",
    "CLUSTER_BASE_MODEL",
    "CLUSTER_SERVING_RUNTIME",
    "INFERENCE_SERVICE",
    "RESOURCES",
    "SERVING_RUNTIME",
    "Resource",
    "resource_named",
    "resource_of",
]


@dataclasses.dataclass(frozen=True)
class Resource:
    """One API resource, addressed the way URLs and error messages address it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def qualified(self) -> str:
        """``<plural>.<group>``, as the API server names the resource in its messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def collection(self, namespace: str | None) -> str:
        """The collection's path: of one namespace, or of all of them (``None``)."""
        root = f"/apis/{self.api_version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace is not None:
            return f"{root}/namespaces/{namespace}/{self.plural}"
        return f"{root}/{self.plural}"


INFERENCE_SERVICE = Resource("ome.io", "v1beta1", "inferenceservices", "InferenceService")
SERVING_RUNTIME = Resource("ome.io", "v1beta1", "servingruntimes", "ServingRuntime")
CLUSTER_SERVING_RUNTIME = Resource(
    "ome.io", "v1beta1", "clusterservingruntimes", "ClusterServingRuntime", False
)
BASE_MODEL = Resource("ome.io", "v1beta1", "basemodels", "BaseModel")
CLUSTER_BASE_MODEL = Resource("ome.io", "v1beta1", "clusterbasemodels", "ClusterBaseModel", False)
ACCELERATOR_CLASS = Resource("ome.io", "v1beta1", "acceleratorclasses", "AcceleratorClass", False)

#: Every resource, ome.io's first.
RESOURCES: tuple[Resource, ...] = (
    INFERENCE_SERVICE,
    SERVING_RUNTIME,
    CLUSTER_SERVING_RUNTIME,
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    ACCELERATOR_CLASS,
    Resource("ome.io", "v1beta1", "inferencereplicas", "InferenceReplica"),
    Resource("apps", "v1", "deployments", "Deployment"),
    Resource("apps", "v1", "controllerrevisions", "ControllerRevision"),
    Resource("", "v1", "services", "Service"),
    Resource("", "v1", "pods", "Pod"),
    Resource("", "v1", "events", "Event"),
    Resource("", "v1", "configmaps", "ConfigMap"),
    Resource("", "v1", "secrets", "Secret"),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
    Resource("coordination.k8s.io", "v1", "leases", "Lease"),
    Resource("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet"),
    Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"),
    Resource("keda.sh", "v1alpha1", "scaledobjects", "ScaledObject"),
    Resource("scheduling.k8s.io", "v1alpha2", "podgroups", "PodGroup"),
    Resource(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
    ),
)

_BY_API_KIND = {(r.api_version, r.kind): r for r in RESOURCES}
_BY_KIND = {r.kind: r for r in RESOURCES}


def resource_named(kind: str) -> Resource:
    """The resource of a kind (every kind in the table is unique)."""
    return _BY_KIND[kind]


def resource_of(obj: Mapping[str, Any]) -> Resource:
    """The resource of an object, by its ``apiVersion`` and ``kind`` (KeyError if unknown)."""
    return _BY_API_KIND[(obj["apiVersion"], obj["kind"])]
