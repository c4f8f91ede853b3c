"""MultiNode (deprecated; docs/reference/workloads.md): the LeaderWorkerSet
``lws-<isvc>-<component>``.

Without ``leader`` and ``worker`` the component itself is the leader and the group has one pod
The worker template is always written because the LeaderWorkerSet API requires it.
"""

from __future__ import annotations

from typing import Any

from .context import ComponentContext, scaled_by_others, worker_size
from .metadata import object_metadata
from .naming import app_label, leader_worker_set_name
from .pod_specs import render_pod_template

__all__ = ["LWS_API_VERSION", "WORKER_DROPPED_ANNOTATIONS", "render_leader_worker_set"]

LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"

#: Workers are not scraped: only the leader serves.
WORKER_DROPPED_ANNOTATIONS = ("prometheus.io/",)


def render_leader_worker_set(ctx: ComponentContext) -> dict[str, Any]:
    """The LeaderWorkerSet; ``replicas`` is the effective ``minReplicas`` (at least 1 when an
    autoscaler scales it, docs/autoscaling.md)."""
    app = {"app": app_label(ctx.isvc.name, ctx.component)}
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": "LeaderWorkerSet",
        "metadata": object_metadata(ctx, leader_worker_set_name(ctx.isvc.name, ctx.component)),
        "spec": {
            "replicas": max(ctx.min_replicas, 1) if scaled_by_others(ctx) else ctx.min_replicas,
            "leaderWorkerTemplate": {
                "size": 1 + worker_size(ctx),
                "leaderTemplate": render_pod_template(ctx, "leader", labels=app),
                "workerTemplate": render_pod_template(
                    ctx, "worker", drop_annotation_prefixes=WORKER_DROPPED_ANNOTATIONS
                ),
            },
        },
    }
