"""Pod spec assembly, runner environment and model node selector (docs/reference/workloads.md:
Pod spec, Runner environment, Model node selector).

The model volume comes from the node (``hostPath``, as OME mounts it) unless the operator
configuration names another source for the model or the namespace (docs/configuration.md,
``modelVolumes``); it is always mounted read-only at the model's storage path.

A pod spec is built per *role*: ``default`` (the component alone), ``leader`` or ``worker`` (the
component's pod fields, then the leader's or worker's, then that role's runner). The result is a
plain dict; nothing here knows which workload will carry it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Literal

from ...models import ModelResource
from ..deployment_modes import DeploymentMode
from ..merging import merge_values
from ..model_volumes import HOST_PATH, PERSISTENT_VOLUME_CLAIM, ModelVolumeSource
from .context import ComponentContext, has_leader_worker, pods_per_replica
from .errors import PlaceholderError, ResourceQuantityError
from .metadata import common_labels, pod_annotations, sorted_map, without_prefixes
from .naming import object_name
from .placeholders import child_path, render_placeholders, render_template

__all__ = [
    "DEFAULT_RUNNER_NAME",
    "GPU_RESOURCE",
    "POD_SPEC_FIELDS",
    "Role",
    "front_role",
    "model_node_selector",
    "render_pod_spec",
    "render_pod_template",
    "runner_name",
    "serving_ports",
    "set_env",
]

Role = Literal["default", "leader", "worker"]

#: The runner container's name when neither the ISVC nor the runtime names it.
DEFAULT_RUNNER_NAME = "ome-container"

GPU_RESOURCE = "nvidia.com/gpu"

#: core/v1 PodSpec fields; a component's other fields (replicas, budgets, runner, …) never reach
#: a pod, and neither do unknown fields preserved on the component.
POD_SPEC_FIELDS = frozenset(
    {
        "activeDeadlineSeconds",
        "affinity",
        "automountServiceAccountToken",
        "containers",
        "dnsConfig",
        "dnsPolicy",
        "enableServiceLinks",
        "ephemeralContainers",
        "hostAliases",
        "hostIPC",
        "hostNetwork",
        "hostPID",
        "hostUsers",
        "hostname",
        "hostnameOverride",
        "imagePullSecrets",
        "initContainers",
        "nodeName",
        "nodeSelector",
        "os",
        "overhead",
        "preemptionPolicy",
        "priority",
        "priorityClassName",
        "readinessGates",
        "resourceClaims",
        "resources",
        "restartPolicy",
        "runtimeClassName",
        "schedulerName",
        "schedulingGates",
        "securityContext",
        "serviceAccount",
        "serviceAccountName",
        "setHostnameAsFQDN",
        "shareProcessNamespace",
        "subdomain",
        "terminationGracePeriodSeconds",
        "tolerations",
        "topologySpreadConstraints",
        "volumes",
    }
)


def front_role(ctx: ComponentContext) -> Role:
    """The role whose pods serve the component Service: the leader of a leader/worker shape (and
    of every LeaderWorkerSet), else the component's single pod."""
    if ctx.mode is DeploymentMode.MULTI_NODE:
        return "leader"
    if ctx.mode is DeploymentMode.OME_NATIVE and has_leader_worker(ctx):
        return "leader"
    return "default"


def runner_name(ctx: ComponentContext, role: Role) -> str:
    runner, _ = _role_runner(ctx, role)
    return (runner or {}).get("name") or DEFAULT_RUNNER_NAME


def serving_ports(ctx: ComponentContext) -> list[dict[str, Any]]:
    """The ``ports`` of the front role's runner container, as rendered."""
    role = front_role(ctx)
    name = runner_name(ctx, role)
    for container in render_pod_spec(ctx, role).get("containers", []):
        if container.get("name") == name:
            return list(container.get("ports", []))
    return []


def render_pod_template(
    ctx: ComponentContext,
    role: Role,
    *,
    labels: Mapping[str, str] | None = None,
    drop_annotation_prefixes: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A PodTemplateSpec: the common labels plus ``labels``, the pod annotations without
    ``drop_annotation_prefixes``, and the role's pod spec."""
    metadata: dict[str, Any] = {"labels": sorted_map(common_labels(ctx), labels or {})}
    annotations = without_prefixes(pod_annotations(ctx), drop_annotation_prefixes)
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": render_pod_spec(ctx, role)}


def render_pod_spec(ctx: ComponentContext, role: Role) -> dict[str, Any]:
    """The pod spec of one role, keys sorted."""
    spec = _pod_fields(ctx.merged.raw())
    part = getattr(ctx.merged, role, None) if role != "default" else None
    if part is not None:
        spec = merge_values(spec, _pod_fields(part.raw()))
    serves_model = ctx.component != "router"  # the model is for engine and decoder
    runner = _render_runner(ctx, role)
    if runner is not None:
        spec["containers"] = _merge_container(spec.get("containers", []), runner)
        volume = _model_volume(ctx.model, ctx.model_volume) if serves_model else None
        volumes = spec.get("volumes", [])
        if volume is not None and not any(v.get("name") == volume["name"] for v in volumes):
            spec["volumes"] = [*volumes, volume]
    node_selector = sorted_map(
        ctx.runtime.spec.node_selector if serves_model else {},
        spec.get("nodeSelector", {}),
        model_node_selector(ctx.model, ctx.isvc.namespace) if serves_model and ctx.model else {},
    )
    if node_selector:
        spec["nodeSelector"] = node_selector
    scheduler = spec.get("schedulerName") or ctx.runtime.spec.scheduler_name
    if scheduler:
        spec["schedulerName"] = scheduler
    return dict(sorted(spec.items()))


def model_node_selector(model: ModelResource, namespace: str) -> dict[str, str]:
    """The model node selector (the plain key): the node has the model, so the pod may run there."""
    if model.is_cluster:
        return {f"models.ome.io/clusterbasemodel.{model.name}": "Ready"}
    return {
        f"models.ome.io/{model.metadata.namespace or namespace}.basemodel.{model.name}": "Ready"
    }


def set_env(env: list[Any], name: str, value: str) -> list[Any]:
    """``env`` with ``name`` set to ``value``: in place of the first same-named variable (later
    duplicates dropped, so the value wins), else appended."""
    entry = {"name": name, "value": value}
    out: list[Any] = []
    placed = False
    for item in env:
        if isinstance(item, Mapping) and item.get("name") == name:
            if not placed:
                out.append(entry)
                placed = True
            continue
        out.append(item)
    return out if placed else [*out, entry]


def _pod_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(value) for key, value in raw.items() if key in POD_SPEC_FIELDS}


def _role_runner(ctx: ComponentContext, role: Role) -> tuple[dict[str, Any] | None, str]:
    """The role's runner (a leader or worker without one falls back to the component's runner)
    and its field path for errors."""
    base = f"spec.{ctx.component}"
    part = getattr(ctx.merged, role, None) if role != "default" else None
    if part is not None and part.runner is not None:
        return copy.deepcopy(part.runner), f"{base}.{role}.runner"
    runner = ctx.merged.runner
    return (copy.deepcopy(runner) if runner is not None else None), f"{base}.runner"


def _render_runner(ctx: ComponentContext, role: Role) -> dict[str, Any] | None:
    """The role's runner with placeholders rendered, a name, and its environment: router config
    entries for the router, the runner environment for an engine or decoder."""
    runner, path = _role_runner(ctx, role)
    if runner is None:
        return None
    try:
        runner = render_placeholders(runner, ctx.isvc, path)
    except PlaceholderError as exc:
        raise exc.in_container(str(runner.get("name") or DEFAULT_RUNNER_NAME)) from None
    runner["name"] = runner.get("name") or DEFAULT_RUNNER_NAME
    if ctx.component != "router":
        return _with_runner_env(ctx, runner, path)
    # Config entries become runner env, so placeholders apply to them too.
    config_path = f"spec.{ctx.component}.config"
    for key, value in sorted(ctx.merged.config.items()):
        rendered = render_template(value, ctx.isvc, child_path(config_path, key))
        runner["env"] = set_env(runner.get("env", []), key, rendered)
    return runner


def _with_runner_env(ctx: ComponentContext, runner: dict[str, Any], path: str) -> dict[str, Any]:
    """The runner environment of an engine or decoder runner: MODEL_PATH and the model mount,
    PARALLELISM_SIZE."""
    model_path = ctx.model.spec.storage.path if ctx.model is not None else None
    if ctx.model is not None and model_path:
        env = runner.get("env", [])
        if not any(isinstance(e, Mapping) and e.get("name") == "MODEL_PATH" for e in env):
            runner["env"] = [*env, {"name": "MODEL_PATH", "value": model_path}]
        mounts = runner.get("volumeMounts", [])
        if not any(m.get("mountPath") == model_path for m in mounts):
            mount = {"name": _model_volume_name(ctx.model), "mountPath": model_path}
            if ctx.model_volume.sub_path is not None:
                mount["subPath"] = ctx.model_volume.sub_path
            runner["volumeMounts"] = [*mounts, {**mount, "readOnly": True}]
    gpus = _gpu_count(runner, path)
    if gpus:
        size = str(gpus * pods_per_replica(ctx))
        runner["env"] = set_env(runner.get("env", []), "PARALLELISM_SIZE", size)
    return runner


def _gpu_count(runner: Mapping[str, Any], path: str) -> int:
    """``nvidia.com/gpu`` requested (an integer or a string); the limit when only a limit is set,
    as the API server defaults an extended resource's request to its limit."""
    resources = runner.get("resources") or {}
    for section in ("requests", "limits"):
        value = (resources.get(section) or {}).get(GPU_RESOURCE)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        where = child_path(child_path(child_path(path, "resources"), section), GPU_RESOURCE)
        raise ResourceQuantityError(where, value)
    return 0


def _merge_container(containers: list[Any], runner: dict[str, Any]) -> list[Any]:
    """The runner merged into the same-named container (runner fields win), else appended."""
    for index, container in enumerate(containers):
        if isinstance(container, Mapping) and container.get("name") == runner["name"]:
            return [
                *containers[:index],
                merge_values(dict(container), runner),
                *containers[index + 1 :],
            ]
    return [*containers, runner]


def _model_volume_name(model: ModelResource) -> str:
    """The model's name as a volume name (a DNS label: no dots, at most 63 characters)."""
    return object_name(re.sub(r"[^a-z0-9-]+", "-", model.name.lower()).strip("-") or "model")


def _model_volume(model: ModelResource | None, source: ModelVolumeSource) -> dict[str, Any] | None:
    """The volume the model is read from, when the model has a storage path: the node directory
    it lives in (docs/workloads.md, "Pods"), or the configured source (a claim is always
    attached read-only)."""
    if model is None or not model.spec.storage.path:
        return None
    volume: dict[str, Any] = {"name": _model_volume_name(model)}
    if source.kind == HOST_PATH:
        volume[HOST_PATH] = {"path": model.spec.storage.path}
    elif source.kind == PERSISTENT_VOLUME_CLAIM:
        volume[PERSISTENT_VOLUME_CLAIM] = {**source.fields, "readOnly": True}
    else:
        volume[source.kind] = copy.deepcopy(dict(source.fields))
    return volume
