"""The labels of a namespace, as the pod policy's exceptions read them (docs/configuration.md,
"podPolicy"): an admission review does not carry them, so they are read with a GET and kept for
``ttl`` seconds, at most ``MAX_NAMESPACES`` of them (the oldest read is forgotten first).

A namespace that cannot be read (gone, or the API server failing) has the labels last read for
it, else none: no exception applies, so the policy is at its strictest.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from urllib.parse import quote

from ..cluster.api import KubeApi
from ..cluster.errors import ApiError, NotFound
from ..models.object_metadata import labels_of

__all__ = ["MAX_NAMESPACES", "NamespaceLabels"]

logger = logging.getLogger("ome_operator.admission")

#: Namespaces whose labels are kept: a few hundred bytes each.
MAX_NAMESPACES = 4096


class NamespaceLabels:
    """Callable: a namespace's labels; call it off the event loop."""

    def __init__(
        self,
        api_factory: Callable[[], KubeApi],
        *,
        ttl: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        max_namespaces: int = MAX_NAMESPACES,
    ) -> None:
        self._api_factory = api_factory
        self._ttl = ttl
        self._clock = clock
        self._max = max_namespaces
        self._lock = threading.Lock()
        #: namespace -> (when read, its labels), oldest read first.
        self._read: dict[str, tuple[float, Mapping[str, str]]] = {}

    def peek(self, namespace: str) -> Mapping[str, str] | None:
        """The labels when they need no read now (None: call this, in a thread); never waits,
        so the event loop may call it."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            found = self._read.get(namespace)
            return found[1] if found and self._clock() - found[0] < self._ttl else None
        finally:
            self._lock.release()

    def __call__(self, namespace: str) -> Mapping[str, str]:
        with self._lock:
            found = self._read.get(namespace)
            if found is not None and self._clock() - found[0] < self._ttl:
                return found[1]
            labels = self._get(namespace, found[1] if found is not None else {})
            self._read.pop(namespace, None)
            self._read[namespace] = (self._clock(), labels)
            while len(self._read) > self._max:
                del self._read[next(iter(self._read))]
            return labels

    def _get(self, namespace: str, last: Mapping[str, str]) -> Mapping[str, str]:
        try:
            found = self._api_factory().request("GET", f"/api/v1/namespaces/{quote(namespace)}")
        except NotFound:
            return {}
        except ApiError as exc:
            logger.warning(
                "Failed to read a namespace's labels; the pod policy uses the last ones read",
                extra={"namespace": namespace, "error": str(exc)},
            )
            return last
        labels = labels_of(found)
        return {str(k): str(v) for k, v in labels.items()}
