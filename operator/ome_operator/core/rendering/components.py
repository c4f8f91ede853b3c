"""``render_component``: every object of one component, in its mode's fixed order
(docs/reference/workloads.md, Objects per mode).

======================  ===================================================================
mode                    objects
======================  ===================================================================
RawDeployment           Deployment, Service, PodDisruptionBudget (if any)
MultiNode               LeaderWorkerSet, Service
OMENative               InferenceReplica, Service, headless Service, PodDisruptionBudget (if any)
======================  ===================================================================

and last, in every mode, the autoscaler if any (HorizontalPodAutoscaler or ScaledObject,
docs/autoscaling.md).

Objects carry their namespace but no owner references; the edge adds those.
"""

from __future__ import annotations

from typing import Any

from ..deployment_modes import DeploymentMode, InvalidComponentModeError
from .autoscalers import render_autoscaler
from .context import ComponentContext
from .deployments import render_deployment
from .disruption_budgets import render_pdb
from .inference_replicas import render_inference_replica
from .leader_worker_sets import render_leader_worker_set
from .services import render_component_service, render_headless_service

__all__ = ["render_component"]


def render_component(ctx: ComponentContext) -> list[dict[str, Any]]:
    """The component's objects; raises ``InvalidComponentModeError`` for a mode it cannot run
    and a ``ComponentRenderError`` when rendering fails (docs/reference/status-and-events.md,
    Component failures)."""
    mode = ctx.mode
    if mode is DeploymentMode.RAW_DEPLOYMENT:
        objects = [render_deployment(ctx), render_component_service(ctx), render_pdb(ctx)]
    elif mode is DeploymentMode.MULTI_NODE and ctx.component != "router":
        objects = [render_leader_worker_set(ctx), render_component_service(ctx)]
    elif mode is DeploymentMode.OME_NATIVE:
        objects = [
            render_inference_replica(ctx),
            render_component_service(ctx),
            render_headless_service(ctx),
            render_pdb(ctx),
        ]
    else:
        raise InvalidComponentModeError(ctx.component, mode)
    objects.append(render_autoscaler(ctx))
    return [obj for obj in objects if obj is not None]
