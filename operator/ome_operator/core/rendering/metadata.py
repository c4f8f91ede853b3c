"""Labels and annotations of generated objects and pods (docs/reference/workloads.md, Labels and
annotations).

Every map is returned with its keys sorted, so the same inputs always give the same manifest.
What is copied from the InferenceService and its components goes through the operator's
``metadataPropagation`` settings (``core.metadata_propagation``, docs/configuration.md): keys
with an excluded prefix are left out, and an InferenceService over the bound has none copied
(the operator's own keys stay, selectors rely on them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...models import InferenceService
from ..metadata_propagation import LAST_APPLIED, MetadataPropagation, over_bound_message
from .context import ComponentContext

__all__ = [
    "LAST_APPLIED",
    "MANAGED_BY",
    "OWNER_LABEL",
    "POD_ONLY_PREFIXES",
    "UID_ANNOTATION",
    "common_labels",
    "copied",
    "object_annotations",
    "object_metadata",
    "pod_annotations",
    "service_annotations",
    "sorted_map",
    "without_prefixes",
]

#: The label naming the InferenceService on every object it owns.
OWNER_LABEL = "ome.io/inferenceservice"

#: Annotation prefixes that mean something only on pods; Services do not get them.
POD_ONLY_PREFIXES = (
    "prometheus.io/",
    "k8s.grafana.com/",
    "loki.grafana.com/",
    "networking.gke.io/",
    "rdma.ome.io/",
    "runtime.ome.io/",
)

#: The ``ome.io/managed-by`` label of OMENative pods, InferenceReplicas and their Services.
MANAGED_BY = {"ome.io/managed-by": "OMENative"}

#: The uid of the InferenceService an object was written for: what makes an object without a
#: controller the operator's own (``core.ownership``).
UID_ANNOTATION = "ome.io/inferenceservice-uid"


def sorted_map(*maps: Mapping[str, str]) -> dict[str, str]:
    """The union of ``maps`` (later ones win per key), keys sorted."""
    union: dict[str, str] = {}
    for mapping in maps:
        union.update(mapping)
    return dict(sorted(union.items()))


def without_prefixes(annotations: Mapping[str, str], prefixes: Iterable[str]) -> dict[str, str]:
    prefixes = tuple(prefixes)
    return {key: value for key, value in annotations.items() if not key.startswith(prefixes)}


def copied(
    isvc: InferenceService, propagation: MetadataPropagation, entries: Mapping[str, str]
) -> dict[str, str]:
    """What of ``entries`` (labels or annotations of ``isvc`` or of one of its components) is
    copied onto generated objects: nothing when ``isvc`` is over the bound, else the entries
    the filter keeps."""
    if over_bound_message(isvc, propagation):
        return {}
    return propagation.copied(entries)


def common_labels(ctx: ComponentContext) -> dict[str, str]:
    """Object and pod labels: ISVC labels ∪ component labels, then the forced keys."""
    forced = {
        OWNER_LABEL: ctx.isvc.name,
        "component": ctx.component,
        "serving-runtime": ctx.runtime.name,
        "fine-tuned-serving": "false",
    }
    if ctx.model is not None:
        forced |= {
            "base-model-name": ctx.model.name,
            "base-model-size": ctx.model.metadata.annotations.get(
                "models.ome.io/category", "SMALL"
            ),
            "base-model-type": "Serving",
        }
    isvc, propagation = ctx.isvc, ctx.metadata_propagation
    return sorted_map(
        copied(isvc, propagation, isvc.metadata.labels),
        copied(isvc, propagation, ctx.merged.labels),
        forced,
    )


def object_annotations(ctx: ComponentContext) -> dict[str, str]:
    """Workload annotations: ISVC annotations ∪ component annotations, as copied."""
    isvc, propagation = ctx.isvc, ctx.metadata_propagation
    return sorted_map(
        copied(isvc, propagation, isvc.metadata.annotations),
        copied(isvc, propagation, ctx.merged.annotations),
    )


def object_metadata(
    ctx: ComponentContext,
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A workload's metadata: the common labels and object annotations, plus the given keys."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": ctx.isvc.namespace,
        "labels": sorted_map(common_labels(ctx), labels or {}),
    }
    if merged := sorted_map(object_annotations(ctx), annotations or {}):
        metadata["annotations"] = merged
    return metadata


def service_annotations(ctx: ComponentContext) -> dict[str, str]:
    """Annotations of Services and PodDisruptionBudgets: the pod-only keys left out."""
    return without_prefixes(object_annotations(ctx), POD_ONLY_PREFIXES)


def pod_annotations(ctx: ComponentContext) -> dict[str, str]:
    """Pod template annotations: the object's, plus the runtime and model keys."""
    extra = {"ome.io/serving-runtime": ctx.runtime.name}
    if ctx.model is not None:
        model_format = ctx.model.spec.model_format
        extra["ome.io/base-model-name"] = ctx.model.name
        extra["ome.io/base-model-format"] = model_format.name
        if model_format.version is not None:
            extra["ome.io/base-model-format-version"] = model_format.version
    return sorted_map(object_annotations(ctx), extra)
