"""OMENative (docs/reference/workloads.md, InferenceReplica): the InferenceReplica
``<isvc>-<component>``.

An Instance is one ``default`` pod, or a ``leader`` pod and ``worker.size`` worker pods; the
InferenceReplica carries one runner ``{name, size, template}`` per kind of pod.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .context import ComponentContext, has_leader_worker, worker_size
from .metadata import MANAGED_BY, object_metadata
from .naming import component_name
from .pod_specs import render_pod_template

__all__ = [
    "CONTROLLER_WRITE",
    "INFERENCE_REPLICA_API_VERSION",
    "PARENT_GENERATION",
    "render_inference_replica",
    "render_runners",
    "revision_hash",
]

INFERENCE_REPLICA_API_VERSION = "ome.io/v1beta1"

#: Marks the InferenceReplica as written by the ISVC controller, not edited by hand.
CONTROLLER_WRITE = "ome.io/controller-write"

#: The ISVC generation the InferenceReplica was rendered from.
PARENT_GENERATION = "ome.io/parent-generation"

#: The node label every pod of an Instance must share (``instances.gangs``), copied from the
#: InferenceService.
TOPOLOGY_ANNOTATION = "ome.io/gang-topology-key"


def render_inference_replica(ctx: ComponentContext) -> dict[str, Any]:
    """The InferenceReplica; ``replicas`` counts Instances, at least 1."""
    annotations = {
        CONTROLLER_WRITE: "true",
        PARENT_GENERATION: str(ctx.isvc.metadata.generation or 0),
    }
    topology = ctx.isvc.metadata.annotations.get(TOPOLOGY_ANNOTATION)
    if topology:  # what the Instances' PodGroups ask of the scheduler (instances.gangs)
        annotations[TOPOLOGY_ANNOTATION] = topology
    spec: dict[str, Any] = {
        "component": ctx.component,
        "parentRef": {
            "apiVersion": ctx.isvc.api_version,
            "kind": ctx.isvc.kind,
            "name": ctx.isvc.name,
        },
        "replicas": max(ctx.min_replicas, 1),
        "runners": render_runners(ctx),
    }
    if ctx.merged.lifecycle:
        spec["lifecycle"] = copy.deepcopy(ctx.merged.lifecycle)
    return {
        "apiVersion": INFERENCE_REPLICA_API_VERSION,
        "kind": "InferenceReplica",
        "metadata": object_metadata(
            ctx,
            component_name(ctx.isvc.name, ctx.component),
            labels=MANAGED_BY,
            annotations=annotations,
        ),
        "spec": spec,
    }


def render_runners(ctx: ComponentContext) -> list[dict[str, Any]]:
    """``default``, or ``leader`` (size 1) then ``worker`` (``worker.size``, default 1)."""
    if not has_leader_worker(ctx):
        return [{"name": "default", "size": 1, "template": render_pod_template(ctx, "default")}]
    return [
        {"name": "leader", "size": 1, "template": render_pod_template(ctx, "leader")},
        {
            "name": "worker",
            "size": worker_size(ctx),
            "template": render_pod_template(ctx, "worker"),
        },
    ]


def revision_hash(runners: Sequence[Mapping[str, Any]]) -> str:
    """First 8 hex digits of the sha256 of the canonical JSON (sorted keys, no spaces) of the
    runners' templates, in runner order."""
    templates = [runner.get("template", {}) for runner in runners]
    canonical = json.dumps(templates, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]
