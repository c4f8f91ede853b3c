"""Builders for the InferenceReplica controller's tables: an InferenceReplica, its pods as a
kubelet would show them, and a pass summarised as the rule it pins."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ome_operator.core.instances import InstancePlan, plan_instances
from ome_operator.core.rendering import render_instance_pods

NOW = "2026-12-01T12:00:00Z"
EARLIER = "2026-12-01T11:00:00Z"


def template(image: str = "vllm:1") -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "ome-container", "image": image}]}}


def replica_of(
    *,
    replicas: int | None = 1,
    workers: int | None = None,
    image: str = "vllm:1",
    rows: list[dict[str, Any]] | None = None,
    max_unavailable: Any = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """InferenceReplica ``chat-engine``: one ``default`` runner, or a leader and ``workers``."""
    if workers is None:
        runners = [{"name": "default", "size": 1, "template": template(image)}]
    else:
        runners = [
            {"name": "leader", "size": 1, "template": template(image)},
            {"name": "worker", "size": workers, "template": template(image)},
        ]
    spec: dict[str, Any] = {
        "component": "engine",
        "parentRef": {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "name": "chat"},
        "runners": runners,
    }
    if replicas is not None:
        spec["replicas"] = replicas
    if max_unavailable is not None:
        spec["lifecycle"] = {
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": max_unavailable}}
        }
    body: dict[str, Any] = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {
            "name": "chat-engine",
            "namespace": "default",
            "generation": 3,
            "labels": {"ome.io/inferenceservice": "chat", "component": "engine"},
        },
        "spec": spec,
    }
    status: dict[str, Any] = {}
    if rows is not None:
        status["instanceStatuses"] = rows
    if conditions is not None:
        status["conditions"] = conditions
    if status:
        body["status"] = status
    return body


def row(index: int, phase: str, incarnation: int = 1) -> dict[str, Any]:
    return {"index": index, "phase": phase, "incarnation": incarnation}


def pods_of(
    replica: dict[str, Any],
    index: int = 0,
    *,
    incarnation: int = 1,
    ready: bool = False,
    serving: str | None = None,
    only: tuple[str, ...] | None = None,
    phase: str = "Running",
    terminating: bool = False,
    image: str | None = None,
    conditions: Sequence[Mapping[str, Any]] | None = None,
    node: str | None = None,
    gpus: int | None = None,
    gang: bool = False,
) -> list[dict[str, Any]]:
    """The pods of Instance ``index`` as made for ``replica`` (or another ``image``), with the
    state a kubelet gives them; ``only``: the runners/ordinals to keep (``"worker-1"``).
    ``conditions``: the kubelet's whole set instead of ``ContainersReady`` alone (``ready``);
    ``node``: the node the pods are bound to; ``gpus``: their ``nvidia.com/gpu`` limit;
    ``gang``: they joined their Instance's PodGroup."""
    made_for = replica if image is None else replica_of(workers=_workers(replica), image=image)
    pods = render_instance_pods(made_for, index, incarnation=incarnation, gang=gang)
    found = []
    for pod in pods:
        labels = pod["metadata"]["labels"]
        if (
            only is not None
            and f"{labels['ome.io/runner']}-{labels['ome.io/pod-ordinal']}" not in only
        ):
            continue
        pod = copy.deepcopy(pod)
        pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}-{incarnation}"
        if terminating:
            pod["metadata"]["deletionTimestamp"] = EARLIER
        found_conditions = (
            [{"type": "ContainersReady", "status": "True" if ready else "False"}]
            if conditions is None
            else [dict(c) for c in conditions]
        )
        if serving is not None:
            found_conditions.append({"type": "ome.io/serving", "status": serving})
        pod["status"] = {"phase": phase, "conditions": found_conditions}
        if node is not None:
            pod["spec"]["nodeName"] = node
        if gpus is not None:
            for container in pod["spec"]["containers"]:
                container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
        found.append(pod)
    return found


def _workers(replica: dict[str, Any]) -> int | None:
    runners = replica["spec"]["runners"]
    sizes = [r["size"] for r in runners if r["name"] == "worker"]
    return sizes[0] if sizes else None


def short(name: str) -> str:
    """``chat-engine-0-worker-1`` -> ``0-worker-1``."""
    return name.removeprefix("chat-engine-")


def summary(plan: InstancePlan) -> dict[str, Any]:
    """A pass as a rule reads: pods created (with incarnation), deleted, serving gates set,
    the rows and the Ready condition."""
    ready = plan.status["conditions"][0]
    return {
        "create": [
            (short(p["metadata"]["name"]), p["metadata"]["labels"]["ome.io/instance-incarnation"])
            for p in plan.create
        ],
        "delete": [short(ref.name) for ref in plan.delete],
        "serving": [(short(name), status) for name, status in plan.serving],
        "rows": [
            (r["index"], r["phase"], r["incarnation"]) for r in plan.status["instanceStatuses"]
        ],
        "ready": (ready["status"], ready["reason"], ready["message"]),
    }


def pass_of(replica: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any]:
    return summary(plan_instances(replica, pods, now=NOW))
