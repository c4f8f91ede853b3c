"""Watch-fed indexes of what reconciles and admission read (runtimes, models, accelerators).

kopf keeps them current and holds every other handler back until they are filled at start, so
no decision is made on a half-read cluster. Values are parsed models or copied bodies; a
malformed runtime or model is logged and left out (it cannot be selected).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import kopf

from ..models import InvalidResourceError, from_manifest

__all__ = [
    "accelerator_classes",
    "base_models",
    "cluster_base_models",
    "cluster_serving_runtimes",
    "serving_runtimes",
    "snapshot_of",
]

GROUP, VERSION = "ome.io", "v1beta1"


def _parsed(body: kopf.Body, logger: logging.Logger) -> Any:
    try:
        return from_manifest(copy.deepcopy(dict(body)))
    except InvalidResourceError as exc:
        logger.error(f"Ignoring a malformed object: {exc}")
        return None


@kopf.index(GROUP, VERSION, "servingruntimes")
async def serving_runtimes(body: kopf.Body, namespace: str, logger: logging.Logger, **_: Any):
    runtime = _parsed(body, logger)
    return {namespace: runtime} if runtime is not None else {}


@kopf.index(GROUP, VERSION, "clusterservingruntimes")
async def cluster_serving_runtimes(body: kopf.Body, logger: logging.Logger, **_: Any):
    runtime = _parsed(body, logger)
    return {None: runtime} if runtime is not None else {}


@kopf.index(GROUP, VERSION, "basemodels")
async def base_models(body: kopf.Body, namespace: str, name: str, logger: logging.Logger, **_: Any):
    model = _parsed(body, logger)
    return {(namespace, name): model} if model is not None else {}


@kopf.index(GROUP, VERSION, "clusterbasemodels")
async def cluster_base_models(body: kopf.Body, name: str, logger: logging.Logger, **_: Any):
    model = _parsed(body, logger)
    return {name: model} if model is not None else {}


@kopf.index(GROUP, VERSION, "acceleratorclasses")
async def accelerator_classes(name: str, **_: Any):
    return {None: name}


def snapshot_of(body: kopf.Body) -> dict[str, Any]:
    """The object as this watch event delivered it. Each event carries a freshly decoded body
    that nothing mutates afterwards, so a shallow copy is enough (and cheap for every event)."""
    return dict(body)
