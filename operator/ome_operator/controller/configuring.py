"""The operator configuration as the controller and the webhook read it: ConfigMap
``inferenceservice-config`` in the operator namespace (docs/configuration.md), read once at
start (a configuration that cannot work stops the start) and then kept current by a watch, like
every other input: each change is parsed once, and a change of what it decides re-queues the
InferenceServices (every pass reads it). Reading it never waits for the API server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.errors import ApiError, NotFound
from ..cluster.resources import resource_named
from ..core.operator_config import (
    CONFIG_MAP_NAME,
    OperatorConfig,
    StartupConfigError,
    parse_operator_config,
)
from .watches import Collection, Key, Listeners, Watched, object_key

__all__ = ["ConfigSource"]

logger = logging.getLogger("ome_operator.config")


class ConfigSource(Collection):
    """Callable returning the current OperatorConfig; a feed of the ConfigMap's watch
    (``watched``). ``changed`` tells its listeners when a change of the ConfigMap changes the
    configuration."""

    def __init__(self, api_factory: Callable[[], KubeApi], namespace: str) -> None:
        super().__init__()
        self._api_factory = api_factory
        self.namespace = namespace
        self._config = OperatorConfig()
        #: The ConfigMap as last seen (its metadata at least), for relists.
        self._object: dict[Key, Mapping[str, Any]] = {}
        self.changed = Listeners()

    def load(self) -> OperatorConfig:
        """Read now (at start); StartupConfigError propagates (the manager must not start)."""
        reference = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP_NAME, "namespace": self.namespace},
        }
        try:
            data = self._api_factory().get(reference).get("data")
        except NotFound:
            data = None
        except ApiError as exc:
            logger.error(
                "Failed to read the operator configuration; its watch brings it",
                extra={"error": str(exc)},
            )
            return self._config
        self._take(parse_operator_config(data))
        return self._config

    def peek(self) -> OperatorConfig:
        """The configuration (never waits: the event loop may call it)."""
        return self._config

    def __call__(self) -> OperatorConfig:
        return self._config

    def watched(self) -> Watched:
        """What to watch: this one ConfigMap, in the operator namespace."""
        return Watched(
            resource_named("ConfigMap"),
            self,
            field_selector=f"metadata.name={CONFIG_MAP_NAME}",
            namespace=self.namespace,
        )

    def _held(self) -> Mapping[Key, Mapping[str, Any]]:
        return self._object

    def _change(self, obj: Mapping[str, Any], *, deleted: bool, report: bool) -> None:
        key = object_key(obj)
        if deleted:
            self._object.pop(key, None)
        else:
            self._object[key] = obj
        try:
            config = parse_operator_config(None if deleted else obj.get("data"))
        except StartupConfigError as exc:  # only fatal at start: the last one is kept
            logger.error(str(exc))
            return
        if self._take(config):
            self.changed()

    def _take(self, config: OperatorConfig) -> bool:
        """Make ``config`` the current one; True when it decides anything differently."""
        changed = _decisions(config) != _decisions(self._config)
        self._config = config
        if changed and config.problem is not None:
            logger.error(str(config.problem))
        return changed


def _decisions(config: OperatorConfig) -> tuple[OperatorConfig, str | None]:
    """What a configuration decides (its problem by its text: an exception equals only
    itself)."""
    problem = config.problem
    return replace(config, problem=None), None if problem is None else repr(problem)
