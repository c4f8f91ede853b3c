"""Watch events that feed the controller: InferenceServices and runtimes (S9).

The first handler call binds kopf's live indexes into the controller's caches. A runtime change
re-queues the InferenceServices it can affect. Models are not watched (S9). The objects the
operator writes are watched by the controller's own informers (``controller.owned``): they are
most of the watch traffic, and kopf's per-event handling costs more than they need.
"""

from __future__ import annotations

from typing import Any

import kopf

from ..controller.running import Controller
from .indexes import GROUP, VERSION, snapshot_of

__all__ = ["bind"]

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
    fresh = snapshot_of(body)
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
