"""The InferenceReplica controller's writes to pods other than creates and deletes: the
``ome.io/serving`` condition, and the adoption of an orphan. Both are applies (field manager
``ome-operator``) of the few fields they set: pod conditions and owner references are lists
keyed by type and by uid, so what the kubelet and other owners set stays theirs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.applying import FIELD_MANAGER
from ..core.rendering.instance_pods import SERVING_GATE
from ..models.object_metadata import metadata_of, owner_reference, reference_to
from .writing import now

__all__ = ["adopt", "pod_reference", "set_serving"]


def pod_reference(namespace: str | None, name: str) -> dict[str, Any]:
    """A pod by namespace and name, as the API calls take it."""
    return reference_to("v1", "Pod", namespace, name)


def set_serving(api: KubeApi, pod: Mapping[str, Any], serving: bool) -> dict[str, Any]:
    """Set the ``ome.io/serving`` condition of ``pod`` (its status)."""
    gate = {"type": SERVING_GATE, "status": "True" if serving else "False"}
    applied = {**pod, "status": {"conditions": [{**gate, "lastTransitionTime": now()}]}}
    return api.apply(applied, manager=FIELD_MANAGER, force=True, subresource="status")


def adopt(api: KubeApi, pod: Mapping[str, Any], replica: Mapping[str, Any]) -> dict[str, Any]:
    """Set ``replica`` as the controller of the orphan ``pod`` (only while it is this very pod:
    its uid is in the apply, and another pod of its name refuses it)."""
    meta = metadata_of(pod)
    adoption = pod_reference(meta.get("namespace"), meta.get("name"))
    adoption["metadata"] |= {"uid": meta.get("uid"), "ownerReferences": [owner_reference(replica)]}
    return api.apply(adoption, manager=FIELD_MANAGER, force=True)
