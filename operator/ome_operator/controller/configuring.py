"""The operator configuration as the controller reads it: ConfigMap ``inferenceservice-config``
in the operator namespace, re-read at most every ``ttl`` seconds (S1.10, ``--config-cache-ttl``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..cluster.api import KubeApi
from ..cluster.errors import ApiError, NotFound
from ..core.operator_config import (
    CONFIG_MAP_NAME,
    OperatorConfig,
    StartupConfigError,
    parse_operator_config,
)

__all__ = ["ConfigSource"]

logger = logging.getLogger("ome_operator.config")


class ConfigSource:
    """Callable returning the current OperatorConfig; call it off the event loop."""

    def __init__(
        self,
        api_factory: Callable[[], KubeApi],
        namespace: str,
        *,
        ttl: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api_factory = api_factory
        self._namespace = namespace
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._config = OperatorConfig()
        self._read_at: float | None = None

    def load(self) -> OperatorConfig:
        """Read now; StartupConfigError propagates (the manager must not start)."""
        reference = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP_NAME, "namespace": self._namespace},
        }
        try:
            data = self._api_factory().get(reference).get("data")
        except NotFound:
            data = None
        except ApiError as exc:
            logger.error(
                "Failed to read the operator configuration; keeping the last one",
                extra={"error": str(exc)},
            )
            return self._config
        self._config = parse_operator_config(data)
        self._read_at = self._clock()
        if self._config.problem is not None:
            logger.error(str(self._config.problem))
        return self._config

    def peek(self) -> OperatorConfig | None:
        """The configuration when it needs no read now (None: call the source, in a thread);
        never waits, so the event loop may call it."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            fresh = self._read_at is not None and self._clock() - self._read_at < self._ttl
            return self._config if fresh else None
        finally:
            self._lock.release()

    def __call__(self) -> OperatorConfig:
        with self._lock:
            if self._read_at is None or self._clock() - self._read_at >= self._ttl:
                try:
                    self.load()
                except StartupConfigError as exc:  # only fatal at start; keep the last one
                    logger.error(str(exc))
                    self._read_at = self._clock()
            return self._config
