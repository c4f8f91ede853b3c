"""Pod creates the API server refused, per InferenceReplica: what it answered and when to try
again (docs/troubleshooting.md, ``PodsRefused``).

A refusal (Pod Security admission, a policy webhook, a quota: an answer the same request cannot
change) stands until an administrator or the InferenceService's author changes something. So
the create is tried again only after ``REFUSAL_BACKOFF`` (5 s, doubling, at most 5 minutes), or
at once when the InferenceReplica's spec changes (a new generation: the InferenceService or the
operator configuration changed). A create that succeeds ends the refusal. Only the event loop
touches a ``Refusals``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models.object_metadata import metadata_of
from .queue import Backoff

__all__ = ["REFUSAL_BACKOFF", "Refusal", "Refusals"]

logger = logging.getLogger("ome_operator.replicas")

#: Delay before a refused pod create is tried again, after the n-th refusal in a row.
REFUSAL_BACKOFF = Backoff(first=5.0, limit=300.0)


def _generation(replica: Mapping[str, Any]) -> int:
    return metadata_of(replica).get("generation") or 0


@dataclass(frozen=True)
class Refusal:
    """The last refused pod create: the server's answer, the spec generation it was refused
    for, refusals in a row, and when the next attempt is due (monotonic seconds)."""

    message: str
    generation: int
    failures: int
    retry_at: float


class Refusals:
    """The refusals of every InferenceReplica, by key."""

    def __init__(
        self,
        backoff: Backoff = REFUSAL_BACKOFF,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backoff = backoff
        self._clock = clock
        self._found: dict[tuple[str, str], Refusal] = {}

    def get(self, key: tuple[str, str]) -> Refusal | None:
        return self._found.get(key)

    def message(self, key: tuple[str, str]) -> str | None:
        """The API server's answer to the last refused create, until a create succeeds."""
        found = self._found.get(key)
        return found.message if found else None

    def wait(self, key: tuple[str, str], replica: Mapping[str, Any]) -> float | None:
        """Seconds until a create is due for ``key``; None when one may be tried now (no
        refusal, its delay over, or a new spec)."""
        found = self._found.get(key)
        if found is None or found.generation != _generation(replica):
            return None
        left = found.retry_at - self._clock()
        return left if left > 0 else None

    def refused(self, key: tuple[str, str], replica: Mapping[str, Any], message: str) -> float:
        """Record (and log) a refusal for the InferenceReplica ``key`` (namespace, name);
        returns the delay before the next attempt."""
        generation = _generation(replica)
        before = self._found.get(key)
        failures = before.failures + 1 if before and before.generation == generation else 1
        delay = self.backoff.delay(failures)
        self._found[key] = Refusal(message, generation, failures, self._clock() + delay)
        logger.warning(
            "Pod create refused by the API server; trying again later",
            extra={
                "namespace": key[0],
                "inferenceReplica": key[1],
                "error": message,
                "retryIn": delay,
            },
        )
        return delay

    def answered(
        self, key: tuple[str, str], replica: Mapping[str, Any], created: bool, refused: str | None
    ) -> float | None:
        """After a pass: a refusal recorded (the delay before the next attempt returned), or,
        when a create succeeded, the refusal ended (None)."""
        if refused is not None:
            return self.refused(key, replica, refused)
        if created:
            self.forget(key)
        return None

    def forget(self, key: tuple[str, str]) -> None:
        """A create succeeded, or the InferenceReplica is gone."""
        self._found.pop(key, None)
