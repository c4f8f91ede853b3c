"""PodDisruptionBudgets of RawDeployment and OMENative components
(docs/reference/workloads.md, PodDisruptionBudgets).

``resolve_pdb`` decides which budget applies (or none); ``render_pdb`` writes it. RawDeployment
copies the field as given; OMENative always writes an integer ``minAvailable`` counted in pods.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...models import ComponentSpec
from ..deployment_modes import DeploymentMode
from .context import BUDGET_FIELDS, Budget, ComponentContext, pods_per_replica
from .errors import PdbResolutionError
from .metadata import OWNER_LABEL, common_labels, service_annotations
from .naming import app_label, component_name

__all__ = [
    "BUDGET_RULE",
    "ome_native_min_available",
    "omenative_selector",
    "render_pdb",
    "resolve_pdb",
]

#: What a budget value must be, as the admission webhook words it.
BUDGET_RULE = "must be a non-negative integer or a percentage from 0% to 100%"

_PERCENT = re.compile(r"(\d+)%")


def resolve_pdb(ctx: ComponentContext) -> Budget | None:
    """The source rules: the ISVC component's field, else the runtime config's same field, else
    the mode's default; None = no PodDisruptionBudget (always for MultiNode)."""
    if ctx.mode not in (DeploymentMode.RAW_DEPLOYMENT, DeploymentMode.OME_NATIVE):
        return None
    component = ctx.component
    config = ctx.runtime.spec.config(component)
    ours = _set_fields(ctx.declared)
    theirs = _set_fields(config) if config is not None else []
    runtime = f"runtime {ctx.runtime.name} {component}Config"
    if len(ours) == 2:
        raise PdbResolutionError(
            component,
            f"spec.{component}.minAvailable and spec.{component}.maxUnavailable cannot both be set",
        )
    if len(theirs) == 2:
        raise PdbResolutionError(
            component,
            f"{runtime}.minAvailable and {component}Config.maxUnavailable cannot both be set",
        )
    for field, value in theirs:
        if not _valid(value):
            raise PdbResolutionError(
                component, f"{runtime}.{field} {BUDGET_RULE} (got {json.dumps(value)})"
            )
    for field, value in ours:
        if not _valid(value):
            raise PdbResolutionError(
                component, f"spec.{component}.{field} {BUDGET_RULE} (got {json.dumps(value)})"
            )
    if ours and theirs and ours[0][0] != theirs[0][0]:
        raise PdbResolutionError(
            component,
            f"{runtime}.{theirs[0][0]} and spec.{component}.{ours[0][0]} are both set; "
            "only one of minAvailable or maxUnavailable may be set",
        )
    if ours or theirs:
        return (ours or theirs)[0]
    return ctx.pdb_defaults.for_mode(ctx.mode)


def ome_native_min_available(budget: Budget, total: int) -> int:
    """An OMENative budget as an integer ``minAvailable`` over ``total`` pods; percentages round
    up, and ``maxUnavailable: p%`` is ``total - ceil(p% × total)``. Never negative."""
    field, value = budget
    if isinstance(value, str):
        percent = int(value.rstrip("%"))
        count = -(-percent * total // 100)  # ceil without floats
    else:
        count = value
    return count if field == "minAvailable" else max(total - count, 0)


def omenative_selector(ctx: ComponentContext) -> dict[str, str]:
    """The OMENative pod labels that select every pod of the component."""
    return {
        "component": ctx.component,
        OWNER_LABEL: ctx.isvc.name,
        "ome.io/managed-by": "OMENative",
    }


def render_pdb(ctx: ComponentContext) -> dict[str, Any] | None:
    """The component's policy/v1 PodDisruptionBudget, or None when it gets none."""
    budget = resolve_pdb(ctx)
    if budget is None:
        return None
    field, value = budget
    if ctx.mode is DeploymentMode.OME_NATIVE:
        instances = ctx.held_replicas or max(ctx.min_replicas, 1)
        total = instances * pods_per_replica(ctx)
        spec: dict[str, Any] = {"minAvailable": ome_native_min_available(budget, total)}
        selector = omenative_selector(ctx)
    else:
        spec = {field: value}
        selector = {"app": app_label(ctx.isvc.name, ctx.component)}
    spec["selector"] = {"matchLabels": selector}
    metadata: dict[str, Any] = {
        "name": component_name(ctx.isvc.name, ctx.component),
        "namespace": ctx.isvc.namespace,
        "labels": common_labels(ctx),
    }
    if annotations := service_annotations(ctx):
        metadata["annotations"] = annotations
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata,
        "spec": spec,
    }


def _set_fields(spec: ComponentSpec) -> list[Budget]:
    values = {"minAvailable": spec.min_available, "maxUnavailable": spec.max_unavailable}
    return [(field, values[field]) for field in BUDGET_FIELDS if values[field] is not None]


def _valid(value: int | str) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    match = _PERCENT.fullmatch(value)
    return match is not None and int(match[1]) <= 100
