"""What the CLI reads for one decision, through any ``ObjectReader`` (a cluster or ``-f``
manifests alike), parsed: a model as lookups find it, and the runtime candidates (S12.4)."""

from __future__ import annotations

from ..models import ModelResource, ServingRuntime, from_manifest
from .objects import NotFoundError, ObjectReader, TooManyObjectsError
from .resources import BASE_MODEL, CLUSTER_BASE_MODEL, CLUSTER_SERVING_RUNTIME, SERVING_RUNTIME

__all__ = ["CLI_COLLECTION_LIMIT", "read_model", "read_runtimes"]

#: The CLI reads runtimes in pages of 500 and refuses snapshots above this many (S12.4).
CLI_COLLECTION_LIMIT = 1000
_PAGE_SIZE = 500
_TOO_MANY = "runtime candidate snapshot exceeds the CLI collection limit"


def read_model(reader: ObjectReader, namespace: str, name: str) -> ModelResource:
    """S12.4: a BaseModel in the namespace, else the ClusterBaseModel (its NotFound text)."""
    try:
        return from_manifest(reader.get(BASE_MODEL, namespace, name))
    except NotFoundError:
        return from_manifest(reader.get(CLUSTER_BASE_MODEL, None, name))


def read_runtimes(reader: ObjectReader, namespace: str) -> list[ServingRuntime]:
    """The namespace's ServingRuntimes and every ClusterServingRuntime, at most 1,000."""
    try:
        found = reader.list(
            SERVING_RUNTIME, namespace, page_size=_PAGE_SIZE, limit=CLI_COLLECTION_LIMIT
        )
        left = CLI_COLLECTION_LIMIT - len(found)
        found += reader.list(CLUSTER_SERVING_RUNTIME, None, page_size=_PAGE_SIZE, limit=left)
    except TooManyObjectsError as exc:
        raise TooManyObjectsError(
            _TOO_MANY, resource=exc.resource, limit=CLI_COLLECTION_LIMIT
        ) from None
    runtimes = [from_manifest(obj) for obj in found]
    return [r for r in runtimes if isinstance(r, ServingRuntime)]
