"""Watch events that feed the controller: InferenceServices, runtimes and owned objects (S9).

The first handler call binds kopf's live indexes into the controller's caches. A runtime change
re-queues the InferenceServices it can affect; a change to an owned object re-queues its owner.
Models are not watched (S9).
"""

from __future__ import annotations

import copy
from typing import Any

import kopf

from ..controller.running import Controller
from .indexes import GROUP, VERSION, snapshot_of

__all__ = ["bind"]

_OWNED = {"ome.io/inferenceservice": kopf.PRESENT}
_VOLATILE = ("status", "resourceVersion", "managedFields")


def bind(memo: kopf.Memo, indexes: dict[str, Any]) -> Controller:
    """The controller, with kopf's indexes bound into its caches on first use."""
    controller: Controller = memo.controller
    caches = controller.caches
    if not caches.ready and "serving_runtimes" in indexes:
        caches.serving_runtimes = indexes["serving_runtimes"]
        caches.cluster_serving_runtimes = indexes["cluster_serving_runtimes"]
        caches.base_models = indexes["base_models"]
        caches.cluster_base_models = indexes["cluster_base_models"]
        caches.accelerator_classes = indexes["accelerator_classes"]
        caches.disruption_budgets = indexes["disruption_budgets"]
        caches.owned = (
            indexes["owned_deployments"],
            indexes["owned_services"],
            indexes["owned_inference_replicas"],
        )
        controller.start()
    return controller


def _essence(body: dict[str, Any]) -> dict[str, Any]:
    """What a reconcile depends on: everything but status and bookkeeping metadata."""
    meta = {k: v for k, v in body.get("metadata", {}).items() if k not in _VOLATILE}
    return {**{k: v for k, v in body.items() if k != "status"}, "metadata": meta}


@kopf.on.event(GROUP, VERSION, "inferenceservices")
async def inference_service_changed(
    type: str | None, body: kopf.Body, namespace: str, name: str, memo: kopf.Memo, **kwargs: Any
) -> None:
    controller = bind(memo, kwargs)
    key = (namespace, name)
    if type == "DELETED":
        controller.observe(key, None)
        return
    fresh = copy.deepcopy(dict(body))
    known = controller.isvcs.get(key)
    if known is not None and _essence(known) == _essence(fresh):
        controller.isvcs[key] = fresh  # only its status moved: nothing to decide again
        return
    controller.observe(key, fresh)


@kopf.on.event(GROUP, VERSION, "servingruntimes")
async def serving_runtime_changed(
    type: str | None, namespace: str, memo: kopf.Memo, **kwargs: Any
) -> None:
    controller = bind(memo, kwargs)
    if type is not None:  # the initial listing changes nothing already queued
        controller.requeue(namespace)


@kopf.on.event(GROUP, VERSION, "clusterservingruntimes")
async def cluster_serving_runtime_changed(type: str | None, memo: kopf.Memo, **kwargs: Any) -> None:
    controller = bind(memo, kwargs)
    if type is not None:
        controller.requeue(None)


async def _owner_changed(
    type: str | None, namespace: str, labels: kopf.Labels, memo: kopf.Memo, kwargs: dict[str, Any]
) -> None:
    controller = bind(memo, kwargs)
    if type is None:
        return  # the initial listing: every InferenceService is queued anyway
    owner = labels.get("ome.io/inferenceservice")
    controller.owned_changed(namespace, owner, kwargs.get("body") or {}, deleted=type == "DELETED")


@kopf.on.event("apps", "v1", "deployments", labels=_OWNED)
async def deployment_changed(
    type: str | None, namespace: str, labels: kopf.Labels, memo: kopf.Memo, **kwargs: Any
) -> None:
    await _owner_changed(type, namespace, labels, memo, kwargs)


@kopf.on.event("v1", "services", labels=_OWNED)
async def service_changed(
    type: str | None, namespace: str, labels: kopf.Labels, memo: kopf.Memo, **kwargs: Any
) -> None:
    await _owner_changed(type, namespace, labels, memo, kwargs)


@kopf.on.event("policy", "v1", "poddisruptionbudgets", labels=_OWNED)
async def disruption_budget_changed(
    type: str | None, namespace: str, labels: kopf.Labels, memo: kopf.Memo, **kwargs: Any
) -> None:
    await _owner_changed(type, namespace, labels, memo, kwargs)


@kopf.on.event(GROUP, VERSION, "inferencereplicas", labels=_OWNED)
async def inference_replica_changed(
    type: str | None, namespace: str, labels: kopf.Labels, memo: kopf.Memo, **kwargs: Any
) -> None:
    await _owner_changed(type, namespace, labels, memo, kwargs)


@kopf.on.event("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", labels=_OWNED)
async def leader_worker_set_changed(
    type: str | None,
    body: kopf.Body,
    namespace: str,
    name: str,
    labels: kopf.Labels,
    memo: kopf.Memo,
    **kwargs: Any,
) -> None:
    """Not an index: the CRD may be missing, and an index on it would hold every handler."""
    controller = bind(memo, kwargs)
    owned = controller.caches.leader_worker_sets.setdefault(
        (namespace, labels["ome.io/inferenceservice"]), {}
    )
    if type == "DELETED":
        owned.pop(name, None)
    else:
        owned[name] = snapshot_of(body)
    await _owner_changed(type or "ADDED", namespace, labels, memo, kwargs)
