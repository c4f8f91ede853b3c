"""Runtime selection: auto-selection and the named-runtime path (docs/reference/selection.md).

One pass over a ``RuntimeCatalog`` gives a verdict per runtime, the chosen runtime and the
failure, so the controller, the webhook and ``explain`` read the same decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...models import InferenceService, ModelSpec, ServingRuntime, SupportedModelFormat
from .catalog import RuntimeCatalog
from .errors import (
    Exclusion,
    InvalidModelSpecError,
    NoRuntimeFoundError,
    RuntimeDisabledError,
    RuntimeNotFoundError,
    ShardedModelError,
)
from .matching import Request, entry_matches, first_exclusion
from .scoring import rank_key, runtime_score

__all__ = [
    "Advisory",
    "NamedRuntime",
    "RuntimeVerdict",
    "Selection",
    "check_model",
    "find_named_runtime",
    "may_qualify",
    "resolve_named_runtime",
    "select_runtime",
]

_NO_AUTO_SELECT = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
    "selection skips it (pin it explicitly via spec.runtime.name instead)"
)
_MATCH_NOT_AUTO_SELECT = (
    "matching format {format} is not autoSelect-enabled (a different supportedModelFormats entry "
    "on this runtime has autoSelect=true, but not the one that matches this model)"
)
_ZERO_SCORE = "auto-select score is 0"


def check_model(model: ModelSpec, name: str) -> None:
    """The pre-checks run before any runtime is looked at."""
    if not model.model_format.name:
        raise InvalidModelSpecError()
    if model.distribution == "Sharded":
        raise ShardedModelError(name)


@dataclass(frozen=True)
class RuntimeVerdict:
    """One runtime's outcome: a failed check, a reason it is skipped, or a qualifying score."""

    runtime: ServingRuntime
    score: int = 0
    exclusion: Exclusion | None = None
    skip_reason: str | None = None
    first_match: SupportedModelFormat | None = None

    @property
    def qualifies(self) -> bool:
        return self.exclusion is None and self.skip_reason is None

    @property
    def reason(self) -> str | None:
        return self.exclusion.reason if self.exclusion else self.skip_reason


def _skip_reason(
    verdict_score: int, runtime: ServingRuntime, match: SupportedModelFormat, model: ModelSpec
) -> str | None:
    """Qualification, worded as explain's reasons (docs/reference/selection.md, Qualification)."""
    if not any(e.auto_select is True for e in runtime.spec.supported_model_formats):
        return _NO_AUTO_SELECT
    if verdict_score > 0:
        return None
    if match.auto_select is not True:
        return _MATCH_NOT_AUTO_SELECT.format(format=model.model_format.name)
    return _ZERO_SCORE


#: Checks that depend on the InferenceService, then those that depend only on the model.
_REQUEST_CHECKS = ("disabled", "accelerator_class", "deployment_mode")
_MODEL_CHECKS = ("model_format", "model_size")


@dataclass(frozen=True)
class _Fit:
    """What a runtime says about a model whatever the InferenceService: checks 4–5, the first
    fully matching entry, the score, the reason it does not qualify, and its rank."""

    exclusion: Exclusion | None
    match: SupportedModelFormat | None = None
    score: int = 0
    skip_reason: str | None = None
    rank: Any = None


#: The memos of a catalog hold each runtime's fit to a model (``RuntimeCatalog.fits``) and each
#: whole selection (``RuntimeCatalog.memo``), by object identity: runtimes and models come from
#: watch-fed caches whose objects are immutable and replaced on change, and a catalog is rebuilt
#: whenever one of its runtimes is, so every InferenceService of a reconcile wave shares the
#: work and an old catalog's selections go with it (its fits go with the last catalog that
#: shares them). Entries hold their objects, so an identity is never reused while cached; a
#: memo that outlives many model changes is cleared at the limit.
_MEMO_LIMIT = 4096


def _remember(memo: dict[Any, Any], key: Any, entry: Any) -> None:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = entry


def _fit(runtime: ServingRuntime, model: ModelSpec, memo: dict[Any, Any]) -> _Fit:
    key = (id(runtime), id(model))
    found = memo.get(key)
    if found is not None and found[0] is runtime and found[1] is model:
        return found[2]
    exclusion = first_exclusion(runtime, Request(model), checks=_MODEL_CHECKS)
    if exclusion is not None:
        fit = _Fit(exclusion)
    else:
        match = next(e for e in runtime.spec.supported_model_formats if entry_matches(e, model))
        score = runtime_score(runtime, model)
        skip = _skip_reason(score, runtime, match, model)
        fit = _Fit(None, match, score, skip, rank_key(runtime, score, model))
    _remember(memo, key, (runtime, model, fit))
    return fit


def _verdict(
    runtime: ServingRuntime, request: Request, memo: dict[Any, Any]
) -> tuple[RuntimeVerdict, Any]:
    """The runtime's verdict, and its rank when it qualifies (else None)."""
    exclusion = first_exclusion(runtime, request, checks=_REQUEST_CHECKS)
    if exclusion is not None:
        return RuntimeVerdict(runtime, exclusion=exclusion), None
    fit = _fit(runtime, request.model, memo)
    if fit.exclusion is not None:
        return RuntimeVerdict(runtime, exclusion=fit.exclusion), None
    verdict = RuntimeVerdict(runtime, fit.score, None, fit.skip_reason, fit.match)
    return verdict, fit.rank if fit.skip_reason is None else None


@dataclass(frozen=True)
class Selection:
    """The outcome of auto-selection: verdicts in explain order, counts, winner or failure."""

    model: ModelSpec
    namespace: str
    verdicts: tuple[RuntimeVerdict, ...]
    namespaced: int
    cluster: int

    @property
    def chosen(self) -> RuntimeVerdict | None:
        first = self.verdicts[0] if self.verdicts else None
        return first if first is not None and first.qualifies else None

    @property
    def failure(self) -> NoRuntimeFoundError | None:
        if self.chosen is not None:
            return None
        excluded = tuple(v.exclusion for v in self.verdicts if v.exclusion is not None)
        return NoRuntimeFoundError(
            self.model.model_format.name, self.namespace, self.namespaced, self.cluster, excluded
        )

    def runtime(self) -> ServingRuntime:
        """The selected runtime, or raise the no-runtime failure."""
        if self.chosen is None:
            raise self.failure
        return self.chosen.runtime

    @cached_property
    def ties(self) -> tuple[tuple[RuntimeVerdict, ...], ...]:
        """Ties (docs/reference/selection.md): the qualifying runtimes that only their names
        rank (same scope, score and size distance), in groups of two or more, in rank order
        (the first group's first runtime is the chosen one when that group leads)."""
        groups: dict[tuple, list[RuntimeVerdict]] = {}
        for verdict in self.verdicts:
            if verdict.qualifies:
                rank = rank_key(verdict.runtime, verdict.score, self.model)
                groups.setdefault(rank[:-1], []).append(verdict)
        return tuple(tuple(group) for group in groups.values() if len(group) > 1)

    @cached_property
    def exclusion_checks(self) -> tuple[str, ...]:
        """The failed check of each excluded runtime, in verdict order (the metric's reasons)."""
        return tuple(v.exclusion.check for v in self.verdicts if v.exclusion is not None)


def may_qualify(runtime: ServingRuntime, model: ModelSpec, catalog: RuntimeCatalog) -> bool:
    """Whether ``runtime`` of ``catalog`` qualifies for ``model`` for some InferenceService:
    qualification without checks 2 and 3, which only ever exclude more. A runtime that does not
    is the selection of no InferenceService of that model, before a change or after it."""
    if runtime.disabled:
        return False
    fit = _fit(runtime, model, catalog.fits)
    return fit.exclusion is None and fit.skip_reason is None


def select_runtime(
    model: ModelSpec,
    model_name: str,
    isvc: InferenceService | None,
    catalog: RuntimeCatalog,
    namespace: str,
) -> Selection:
    """Auto-selection over a snapshot; raises ModelSpecError when a pre-check fails.

    The outcome depends on the InferenceService only through what the request checks read
    (its required accelerator classes and requested modes), so it is memoized on those.
    """
    check_model(model, model_name)
    request = Request(model, isvc)
    key = (id(model), request.required_classes, request.modes, namespace)
    found = catalog.memo.get(key)
    if found is not None and found[0] is model:
        return found[1]
    ranked = [_verdict(runtime, request, catalog.fits) for runtime in catalog]
    qualifying = sorted(
        ((rank, v) for v, rank in ranked if rank is not None), key=lambda pair: pair[0]
    )
    rest = [v for v, rank in ranked if rank is None]  # catalog order: SRs, then CSRs, by name
    selection = Selection(
        model,
        namespace,
        tuple(v for _, v in qualifying) + tuple(rest),
        len(catalog.namespaced),
        len(catalog.cluster),
    )
    _remember(catalog.memo, key, (model, selection))
    return selection


@dataclass(frozen=True)
class Advisory:
    """A named runtime that does not declare support for the model
    (docs/reference/selection.md, Compatibility advisory)."""

    runtime: str
    model: str
    inner: str

    def warning(self) -> str:
        return (
            f'runtime "{self.runtime}" does not declare support for model "{self.model}" '
            f"({self.inner}); proceeding because the runtime was named explicitly"
        )

    def event(self) -> str:
        return (
            f"Runtime {self.runtime} does not declare support for model {self.model} "
            f"({self.inner}); proceeding because the runtime was named explicitly"
        )


@dataclass(frozen=True)
class NamedRuntime:
    runtime: ServingRuntime
    advisory: Advisory | None = None


def find_named_runtime(isvc: InferenceService, catalog: RuntimeCatalog) -> ServingRuntime:
    """The named-runtime lookup; RuntimeNotFoundError when it is missing."""
    ref = isvc.spec.runtime
    runtime = catalog.find(ref.name, ref.kind)
    if runtime is None:
        raise RuntimeNotFoundError(ref.name, isvc.namespace, ref.kind)
    return runtime


def _advisory(runtime: ServingRuntime, isvc: InferenceService, model: ModelSpec) -> Advisory | None:
    checks = ("accelerator_class", "deployment_mode", "model_format", "model_size")
    exclusion = first_exclusion(runtime, Request(model, isvc), checks=checks)
    if exclusion is None:
        return None
    shown = model.model_format.name if exclusion.check in ("model_format", "model_size") else ""
    inner = f"runtime {runtime.name} does not support model {shown}: {exclusion.reason}"
    return Advisory(runtime.name, isvc.spec.model.name, inner)


def resolve_named_runtime(
    isvc: InferenceService, catalog: RuntimeCatalog, model: ModelSpec | None
) -> NamedRuntime:
    """Find the named runtime, refuse a disabled one, and check it against the model."""
    runtime = find_named_runtime(isvc, catalog)
    if runtime.disabled:
        raise RuntimeDisabledError(runtime.name, runtime.is_cluster)
    if model is None or isvc.spec.model is None:
        return NamedRuntime(runtime)
    check_model(model, isvc.spec.model.name)
    return NamedRuntime(runtime, _advisory(runtime, isvc, model))
