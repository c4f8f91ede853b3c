"""The pods of one OMENative Instance (docs/reference/workloads.md, Instances and pods, Pod
environment), as the InferenceReplica controller makes
them from an InferenceReplica's runners.

Works on the InferenceReplica as a dict (rendered, or read back from the cluster), so the
controller that owns Instances needs nothing else. OME's labels and ``OME_*`` variables win over
the template's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...models.object_metadata import annotations_of, labels_of
from .inference_replicas import revision_hash
from .metadata import MANAGED_BY, OWNER_LABEL, UID_ANNOTATION, sorted_map
from .naming import headless_service_name, instance_pod_name, pod_group_name
from .pod_specs import set_env

__all__ = ["SERVING_GATE", "render_instance_pods"]

#: The readiness gate the controller sets once every pod of the Instance is ready.
SERVING_GATE = "ome.io/serving"


def render_instance_pods(
    inference_replica: Mapping[str, Any], index: int, *, incarnation: int = 1, gang: bool = False
) -> list[dict[str, Any]]:
    """The pods of Instance ``index``, in runner order (leader before workers), workers by
    ordinal. No owner references: the edge adds them. Each records the InferenceService uid
    the InferenceReplica records (``core.ownership``), and no other. With ``gang``, the pods of
    a multi-pod Instance join its PodGroup (``spec.schedulingGroup``: ``pod_group_name``)."""
    metadata = inference_replica["metadata"]
    spec = inference_replica["spec"]
    component = spec["component"]
    isvc = (spec.get("parentRef") or {}).get("name") or metadata["labels"][OWNER_LABEL]
    runners = spec.get("runners") or []
    instance = _Instance(
        isvc=isvc,
        uid=(metadata.get("annotations") or {}).get(UID_ANNOTATION),
        component=component,
        namespace=metadata.get("namespace"),
        index=index,
        incarnation=incarnation,
        replicas=spec.get("replicas") or 1,  # nil or 0 means one Instance
        revision=revision_hash(runners),
        multi_pod=any(runner["name"] != "default" for runner in runners),
        workers=sum(_size(runner) for runner in runners if runner["name"] == "worker"),
        gang=gang,
    )
    return [instance.pod(runner, ordinal) for runner in runners for ordinal in range(_size(runner))]


@dataclass(frozen=True)
class _Instance:
    """What every pod of one Instance shares."""

    isvc: str
    uid: str | None
    component: str
    namespace: str | None
    index: int
    incarnation: int
    replicas: int
    revision: str
    multi_pod: bool
    workers: int
    gang: bool

    @property
    def headless(self) -> str:
        return headless_service_name(self.isvc, self.component)

    def pod(self, runner: Mapping[str, Any], ordinal: int) -> dict[str, Any]:
        role = runner["name"]
        name = instance_pod_name(self.isvc, self.component, self.index, role, ordinal)
        template = copy.deepcopy(runner.get("template") or {})
        labels = {
            OWNER_LABEL: self.isvc,
            "component": self.component,
            **MANAGED_BY,
            "ome.io/instance-index": str(self.index),
            "ome.io/instance-incarnation": str(self.incarnation),
            "ome.io/runner": role,
            "ome.io/pod-ordinal": str(ordinal),
            "ome.io/revision-hash": self.revision,
        }
        metadata: dict[str, Any] = {"name": name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        metadata["labels"] = sorted_map(labels_of(template), labels)
        annotations = {k: v for k, v in annotations_of(template).items() if k != UID_ANNOTATION}
        if self.uid:
            annotations[UID_ANNOTATION] = self.uid
        if annotations:
            metadata["annotations"] = sorted_map(annotations)
        spec = template.get("spec") or {}
        env = self.env(role, _size(runner), ordinal)
        spec["containers"] = [_with_env(c, env) for c in spec.get("containers", [])]
        spec["hostname"] = name
        spec["subdomain"] = self.headless
        if self.gang and self.multi_pod:
            group = pod_group_name(self.isvc, self.component, self.index, self.incarnation)
            spec["schedulingGroup"] = {"podGroupName": group}
        gates = spec.get("readinessGates") or []
        if not any(gate.get("conditionType") == SERVING_GATE for gate in gates):
            spec["readinessGates"] = [*gates, {"conditionType": SERVING_GATE}]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": dict(sorted(spec.items())),
        }

    def env(self, role: str, size: int, ordinal: int) -> list[tuple[str, str]]:
        """The OME_* variables, in the order of docs/reference/workloads.md, Pod environment."""
        env = [
            ("OME_INFERENCESERVICE_NAME", self.isvc),
            ("OME_COMPONENT", self.component),
            ("OME_COMPONENT_REPLICAS", str(self.replicas)),
            ("OME_INSTANCE_INDEX", str(self.index)),
            ("OME_RUNNER", role),
            ("OME_RUNNER_SIZE", str(size if role == "worker" else 1)),
            ("OME_RUNNER_INDEX", str(ordinal if role == "worker" else 0)),
            ("OME_INSTANCE_SUBDOMAIN", f"{self.isvc}-{self.component}-{self.index}"),
        ]
        if self.multi_pod:
            leader = instance_pod_name(self.isvc, self.component, self.index, "leader", 0)
            env += [
                ("OME_LEADER_ADDRESS", f"{leader}.{self.headless}"),
                ("OME_INSTANCE_POD_RANK", str(ordinal + 1 if role == "worker" else 0)),
                ("OME_INSTANCE_POD_COUNT", str(1 + self.workers)),
            ]
        return env


def _size(runner: Mapping[str, Any]) -> int:
    """A runner's pod count; an absent size is one pod."""
    size = runner.get("size")
    return 1 if size is None else size


def _with_env(container: Mapping[str, Any], env: list[tuple[str, str]]) -> dict[str, Any]:
    """``container`` with the OME variables set, overwriting same-named ones (init containers
    are never passed here)."""
    variables = list(container.get("env") or [])
    for name, value in env:
        variables = set_env(variables, name, value)
    return {**container, "env": variables}
