"""Which labels and annotations of an InferenceService are copied onto what it owns, and how much.

Key ``metadataPropagation`` of the operator configuration (docs/configuration.md,
"metadataPropagation"). The labels and annotations of the InferenceService and of its components
(``spec.<component>.labels`` and ``.annotations``) are copied onto its workloads, their pods,
Services and PodDisruptionBudgets, so one large object would be multiplied many times in etcd.
A key that starts with one of ``excludePrefixes`` is never copied (nor is ``kubectl apply``'s
bookkeeping); what is left is bounded by ``maxBytes``, counted as the API server counts
annotation sizes: the bytes of each key plus those of its value (UTF-8).

An InferenceService over the bound is denied at admission; one that is stored anyway (admitted
before the bound, or past the webhook) gets none of them copied, and the reconciler says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..models import COMPONENTS, InferenceService

__all__ = [
    "DEFAULT_MAX_BYTES",
    "LAST_APPLIED",
    "MetadataPropagation",
    "MetadataPropagationConfigError",
    "copied_size",
    "over_bound_message",
    "parse_metadata_propagation",
]

#: 64 KiB: a quarter of what the API server lets one object's annotations take (256 KiB).
DEFAULT_MAX_BYTES = 64 * 1024
#: ``kubectl apply`` bookkeeping of the InferenceService; never copied, never counted.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_PARSE = "unable to parse metadataPropagation config json"
_FIELDS = ("maxBytes", "excludePrefixes")


class MetadataPropagationConfigError(ValueError):
    """``metadataPropagation`` cannot be used; the message is the whole log text."""


@dataclass(frozen=True)
class MetadataPropagation:
    #: The most bytes (keys plus values) an InferenceService may have copied, in all.
    max_bytes: int = DEFAULT_MAX_BYTES
    #: Keys starting with one of these are not copied (and not counted).
    exclude_prefixes: tuple[str, ...] = ()

    def copied(self, entries: Mapping[str, str]) -> dict[str, str]:
        """The entries of ``entries`` that are copied, in their order."""
        skipped = (LAST_APPLIED, *self.exclude_prefixes)
        return {k: v for k, v in entries.items() if not k.startswith(skipped)}


def _invalid(path: str, expected: str, got: object) -> MetadataPropagationConfigError:
    return MetadataPropagationConfigError(
        f"invalid metadataPropagation config, {path} must be {expected}, got {json.dumps(got)}"
    )


def parse_metadata_propagation(text: str | None) -> MetadataPropagation:
    """The settings of ``metadataPropagation``'s JSON (None: the defaults)."""
    if text is None:
        return MetadataPropagation()
    try:
        given = json.loads(text)
    except ValueError:
        raise MetadataPropagationConfigError(_PARSE) from None
    if not isinstance(given, dict):
        raise MetadataPropagationConfigError(_PARSE)
    for key in given:
        if key not in _FIELDS:
            raise MetadataPropagationConfigError(
                f"invalid metadataPropagation config, unknown field {key} "
                f"(known: {', '.join(_FIELDS)})"
            )
    limit = given.get("maxBytes", DEFAULT_MAX_BYTES)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise _invalid("maxBytes", "a non-negative integer", limit)
    prefixes = given.get("excludePrefixes", [])
    if not isinstance(prefixes, list) or not all(isinstance(p, str) and p for p in prefixes):
        raise _invalid("excludePrefixes", "a list of non-empty strings", prefixes)
    return MetadataPropagation(limit, tuple(prefixes))


def _maps(isvc: InferenceService) -> Iterator[Mapping[str, str]]:
    yield isvc.metadata.labels
    yield isvc.metadata.annotations
    for name in COMPONENTS:
        spec = isvc.spec.component(name)
        if spec is not None:
            yield spec.labels
            yield spec.annotations


def copied_size(isvc: InferenceService, propagation: MetadataPropagation) -> int:
    """Bytes of every key and value the InferenceService has copied (its metadata's and its
    components' labels and annotations, after the filter)."""
    return sum(
        len(key.encode()) + len(value.encode())
        for entries in _maps(isvc)
        for key, value in propagation.copied(entries).items()
    )


def over_bound_message(isvc: InferenceService, propagation: MetadataPropagation) -> str:
    """Why the InferenceService's labels and annotations are not copied ("" when they are)."""
    size = copied_size(isvc, propagation)
    if size <= propagation.max_bytes:
        return ""
    return (
        "metadata.labels, metadata.annotations and the components' labels and annotations "
        f"copied onto workloads and pods total {size} bytes, over the bound of "
        f"{propagation.max_bytes} bytes (metadataPropagation.maxBytes)"
    )
