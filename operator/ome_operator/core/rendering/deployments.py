"""RawDeployment (docs/reference/workloads.md): the apps/v1 Deployment ``<isvc>-<component>``."""

from __future__ import annotations

import copy
from typing import Any

from .context import ComponentContext
from .metadata import object_metadata
from .naming import app_label, component_name
from .pod_specs import render_pod_template

__all__ = ["DEFAULT_STRATEGY", "render_deployment"]

#: Without ``deploymentStrategy``: bring a new pod up before an old one goes.
DEFAULT_STRATEGY = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}


def render_deployment(ctx: ComponentContext) -> dict[str, Any]:
    """The Deployment; ``replicas`` is ``max(minReplicas, 1)`` (no autoscaler)."""
    app = {"app": app_label(ctx.isvc.name, ctx.component)}
    strategy = ctx.merged.deployment_strategy or DEFAULT_STRATEGY
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": object_metadata(ctx, component_name(ctx.isvc.name, ctx.component)),
        "spec": {
            "replicas": max(ctx.min_replicas, 1),
            "selector": {"matchLabels": app},
            "strategy": copy.deepcopy(strategy),
            "template": render_pod_template(ctx, "default", labels=app),
        },
    }
