"""Scores and rank order of auto-selection (docs/reference/selection.md, Scoring and Ranking)
and the explain WEIGHT (docs/reference/cli.md, Columns)."""

from __future__ import annotations

from fractions import Fraction

from ...models import ModelSpec, ServingRuntime, SupportedModelFormat
from .matching import names_and_versions_match
from .sizes import size_distance

__all__ = ["explain_priority", "explain_weight", "rank_key", "runtime_score"]

#: An explicit weight of 0 counts as these; negative weights count as written.
_ZERO_FORMAT_WEIGHT = 10
_ZERO_FRAMEWORK_WEIGHT = 5


def _priority(entry: SupportedModelFormat) -> int:
    return 1 if entry.priority is None else entry.priority


def _entry_score(entry: SupportedModelFormat) -> int:
    fmt = entry.model_format.weight or _ZERO_FORMAT_WEIGHT
    framework = entry.model_framework.weight or _ZERO_FRAMEWORK_WEIGHT
    return (fmt + framework) * _priority(entry)


def runtime_score(runtime: ServingRuntime, model: ModelSpec) -> int:
    """The best entry score among entries not set ``autoSelect: false`` that match the model's
    format and framework names and versions; 0 when there is none."""
    return max(
        (
            _entry_score(entry)
            for entry in runtime.spec.supported_model_formats
            if entry.auto_select is not False and names_and_versions_match(entry, model)
        ),
        default=0,
    )


def explain_priority(entry: SupportedModelFormat) -> int:
    """PRIORITY column: the first fully matching entry's priority, 1 when unset."""
    return _priority(entry)


def explain_weight(entry: SupportedModelFormat) -> int:
    """WEIGHT column: ``weight × priority`` summed over the entry's positive weights."""
    weights = (entry.model_format.weight, entry.model_framework.weight)
    return sum(w * _priority(entry) for w in weights if w > 0)


def rank_key(runtime: ServingRuntime, score: int, model: ModelSpec) -> tuple:
    """Namespaced first, higher score, smaller size distance (sized models), name."""
    distance = Fraction(0)
    bounds = runtime.spec.model_size_range
    if model.model_parameter_size is not None and bounds is not None:
        distance = size_distance(model.model_parameter_size, bounds.min, bounds.max)
    return (runtime.is_cluster, -score, distance, runtime.name)
