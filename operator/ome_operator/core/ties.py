"""Ambiguous runtimes (docs/reference/selection.md, Ties): runtimes that only their names rank
for a model.

Two runtimes that qualify for the same model with the same scope, score and size distance are
ranked by name, which nobody meant. The webhook warns (never denies) when a runtime as
proposed ties for first place: the tie then decides what is selected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..models import ModelSpec, ServingRuntime
from .impact import runtime_key
from .selection import ModelSpecError, RuntimeCatalog, may_qualify, select_runtime

__all__ = ["ModelView", "tie_warnings"]


@dataclass(frozen=True)
class ModelView:
    """A model as selection sees it from one place: its name in the warning, its spec, and
    the runtimes it is selected from (the proposed runtime among them)."""

    name: str
    spec: ModelSpec
    runtimes: RuntimeCatalog
    namespace: str = ""


def tie_warnings(runtime: ServingRuntime, views: Iterable[ModelView]) -> list[str]:
    """One warning per runtime ``runtime`` ties with for first place, per model, in order."""
    key = runtime_key(runtime)
    warnings: dict[str, None] = {}
    for view in views:
        if not may_qualify(runtime, view.spec, view.runtimes):
            continue
        try:
            selection = select_runtime(view.spec, view.name, None, view.runtimes, view.namespace)
        except ModelSpecError:
            continue
        lead = selection.ties[0] if selection.ties else ()
        if not lead or lead[0] is not selection.chosen:
            continue
        if key not in {runtime_key(v.runtime) for v in lead}:
            continue
        winner = lead[0].runtime.name
        for other in lead:
            if runtime_key(other.runtime) != key:
                text = (
                    f"runtime {runtime.name} ties with {other.runtime.name} for model "
                    f"{view.name} (score {other.score}): the name decides, {winner} is selected"
                )
                warnings[text] = None
    return list(warnings)
