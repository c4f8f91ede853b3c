"""What the CLI reads: resources, the reader seam, and the errors a read can end in.

A reader answers ``get`` and ``list`` the way the API server does, whether it talks to a
cluster (``reading.ClusterReader``) or holds parsed manifests (``manifests.ManifestReader``).
Both raise the same errors with the same text, so the CLI output does not depend on the source.

Errors::

    ReadError                 any failed read; str() is the API server's message
    ├── NotFoundError         the named object does not exist (the API server's NotFound text)
    ├── ReadTimeoutError      the API server did not answer within the request timeout
    └── TooManyObjectsError   a list holds more objects than the caller's limit
"""

from typing import Any, Protocol

from .resources import (
    ACCELERATOR_CLASS,
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    CLUSTER_SERVING_RUNTIME,
    INFERENCE_SERVICE,
    SERVING_RUNTIME,
    Resource,
)

__all__ = [
    "ACCELERATOR_CLASS",
    "BASE_MODEL",
    "CLUSTER_BASE_MODEL",
    "CLUSTER_SERVING_RUNTIME",
    "INFERENCE_SERVICE",
    "SERVING_RUNTIME",
    "NotFoundError",
    "ObjectList",
    "ObjectReader",
    "ReadError",
    "ReadTimeoutError",
    "Resource",
    "TooManyObjectsError",
    "require_namespace",
    "too_many_objects",
]

#: Objects as the API returns them: plain JSON-like dicts.
ObjectList = list[dict[str, Any]]


class ObjectReader(Protocol):
    """Reads objects the way the API server answers ``get`` and ``list``.

    ``namespace`` is required for namespaced resources in ``get``; in ``list`` ``None`` means
    all namespaces. Cluster-scoped resources ignore it. ``list`` returns objects in the API's
    order (by namespace, then name), fetching ``page_size`` objects per request, and raises
    ``TooManyObjectsError`` when more than ``limit`` objects exist.
    """

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]: ...

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        page_size: int = 500,
        limit: int | None = None,
    ) -> ObjectList: ...


class ReadError(Exception):
    """A read failed; the message is the API server's own when it sent one."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFoundError(ReadError):
    """The named object does not exist: ``<plural>.<group> "<name>" not found``."""

    def __init__(self, resource: Resource, name: str) -> None:
        super().__init__(f'{resource.qualified} "{name}" not found')
        self.resource = resource
        self.name = name


class ReadTimeoutError(ReadError):
    """The API server did not answer within the request timeout."""


class TooManyObjectsError(ReadError):
    """A list holds more than ``limit`` objects; the caller words the message."""

    def __init__(self, message: str, *, resource: Resource, limit: int) -> None:
        super().__init__(message)
        self.resource = resource
        self.limit = limit


def too_many_objects(resource: Resource, limit: int) -> TooManyObjectsError:
    """The error every reader raises when a list exceeds ``limit``, worded identically."""
    return TooManyObjectsError(
        f"more than {limit} {resource.qualified} objects", resource=resource, limit=limit
    )


def require_namespace(resource: Resource, namespace: str | None) -> str | None:
    """The namespace a ``get`` addresses: required when namespaced, dropped otherwise."""
    if not resource.namespaced:
        return None
    if not namespace:
        raise ValueError(f"a namespace is required to get {resource.qualified}")
    return namespace
