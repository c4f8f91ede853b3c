"""Compatibility rules of runtime selection: each returns a reason or None.

``first_exclusion`` runs the five checks (docs/reference/selection.md, Checks) in their fixed
order and stops at the first reason. The same rule functions feed auto-selection, the
named-runtime advisory and ``explain``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...models import (
    InferenceService,
    ModelFormat,
    ModelFormatRef,
    ModelSpec,
    ServingRuntime,
    SupportedModelFormat,
)
from ..deployment_modes import RequestedModes, mode_mismatch_reason, requested_modes
from .errors import Exclusion
from .sizes import format_range, size_in_range
from .versions import versions_match

__all__ = [
    "CHECKS",
    "Request",
    "accelerator_reason",
    "entry_differences",
    "entry_matches",
    "first_exclusion",
    "format_reason",
    "model_label",
    "names_and_versions_match",
    "required_accelerator_classes",
    "size_reason",
]

#: The check names, in order; also the ``reason`` label of the exclusion metric.
CHECKS = ("disabled", "accelerator_class", "deployment_mode", "model_format", "model_size")

_PIPELINE_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")
_ACCELERATOR_ANNOTATION = "ome.io/accelerator-class"


def model_label(model: ModelSpec) -> str:
    """The model label (docs/reference/selection.md, Model label): ``mt:`` and the model's set
    values, ``:``-joined (``""`` is set)."""
    framework = model.model_framework
    parts = (
        model.model_format.name,
        model.model_format.version,
        model.model_architecture,
        model.quantization,
        framework.name if framework else None,
        framework.version if framework else None,
    )
    return "mt:" + ":".join(p for p in parts if p is not None)


def _version_difference(what: str, model: str | None, entry: ModelFormat) -> str | None:
    if model is None and entry.version is None:
        return None
    if model is None:
        return f"model has no {what} version but runtime requires {entry.version}"
    if entry.version is None:
        return f"model has {what} version but runtime has no version requirement"
    if versions_match(entry.version, model, entry.operator):
        return None
    return f"{what} version mismatch (model={model}, runtime={entry.version})"


def _named_difference(what: str, model: ModelFormatRef | None, entry: ModelFormat) -> str | None:
    if model is None:
        return f"model has no {what} but runtime requires {entry.name}"
    if model.name != entry.name:
        return f"{what} name mismatch (model={model.name}, runtime={entry.name})"
    return _version_difference(what, model.version, entry)


def _one_sided(what: str, model: str | None, entry: str | None) -> str | None:
    if model == entry:
        return None
    if entry is None:
        return f"model has {what} {model} but runtime has no {what} requirement"
    if model is None:
        return f"model has no {what} but runtime requires {entry}"
    return f"{what} mismatch (model={model}, runtime={entry})"


def _part_difference(name: str, model: object, entry: object) -> str | None:
    model_part = model if isinstance(model, dict) else {}
    entry_part = entry if isinstance(entry, dict) else {}
    for key in ("library", "type"):
        if key in entry_part and model_part.get(key) != entry_part[key]:
            shown = model_part.get(key, "")
            return f"{name} {key} mismatch (model={shown}, runtime={entry_part[key]})"
    return None


def _pipeline_difference(model: dict | None, entry: dict | None) -> str | None:
    """The diffusion pipeline part of an entry match; only the first difference is reported."""
    if entry is None:
        return None
    if model is None:
        return "diffusion pipeline required by runtime but not specified in model"
    if "className" in entry and model.get("className") != entry["className"]:
        shown = model.get("className", "<nil>")
        return f"pipeline class mismatch (model={shown}, runtime={entry['className']})"
    for name in _PIPELINE_COMPONENTS:
        if name not in entry:
            continue
        if name not in model:
            return f"component {name} required by runtime but not specified in model"
        if found := _part_difference(name, model[name], entry[name]):
            return found
    wanted = entry.get("additionalComponents") or {}
    present = model.get("additionalComponents") or {}
    if wanted and not present:
        return "diffusion pipeline missing required additional components"
    for key, part in wanted.items():
        if key not in present:
            return f"diffusion component {key} missing in model"
        if found := _part_difference(key, present[key], part):
            return found
    return None


def _core_differences(entry: SupportedModelFormat, model: ModelSpec) -> list[str]:
    found = (
        _named_difference("format", model.model_format, entry.model_format),
        _named_difference("framework", model.model_framework, entry.model_framework),
    )
    return [d for d in found if d]


def entry_differences(entry: SupportedModelFormat, model: ModelSpec) -> list[str]:
    """Every difference of one entry, in the order of docs/reference/selection.md, "Entry
    reasons"."""
    found = (
        _pipeline_difference(model.diffusion_pipeline, entry.diffusion_pipeline),
        _one_sided("architecture", model.model_architecture, entry.model_architecture),
        _one_sided("quantization", model.quantization, entry.quantization),
    )
    return [d for d in found if d] + _core_differences(entry, model)


def entry_matches(entry: SupportedModelFormat, model: ModelSpec) -> bool:
    """The entry fully matches the model (docs/reference/selection.md, Model format)."""
    return not entry_differences(entry, model)


def names_and_versions_match(entry: SupportedModelFormat, model: ModelSpec) -> bool:
    """The part of a match scoring looks at: format and framework names and versions."""
    return not _core_differences(entry, model)


def format_reason(runtime: ServingRuntime, model: ModelSpec) -> str | None:
    """Check 4, the model format."""
    entries = runtime.spec.supported_model_formats
    if any(entry_matches(entry, model) for entry in entries):
        return None
    parts = "; ".join(", ".join(entry_differences(e, model)) for e in entries)
    detail = parts or "no supported formats defined"
    return f"model format '{model_label(model)}' not in supported formats: {detail}"


def size_reason(runtime: ServingRuntime, model: ModelSpec) -> str | None:
    """Check 5, the model size (docs/reference/selection.md, Model size)."""
    bounds = runtime.spec.model_size_range
    size = model.model_parameter_size
    if size is None or bounds is None or size_in_range(size, bounds.min, bounds.max):
        return None
    return f"model size {size} is outside supported range {format_range(bounds.min, bounds.max)}"


def required_accelerator_classes(isvc: InferenceService) -> frozenset[str]:
    """The classes the InferenceService requires, pooled from four places
    (docs/reference/selection.md, Accelerator classes)."""
    spec = isvc.spec
    found = set()
    if _ACCELERATOR_ANNOTATION in isvc.metadata.annotations:
        found.add(isvc.metadata.annotations[_ACCELERATOR_ANNOTATION])
    selectors = (
        spec.accelerator_selector,
        spec.engine.accelerator_override if spec.engine else None,
        spec.decoder.accelerator_override if spec.decoder else None,
    )
    found.update(s.accelerator_class for s in selectors if s and s.accelerator_class is not None)
    return frozenset(found)


def accelerator_reason(runtime: ServingRuntime, required: frozenset[str]) -> str | None:
    """Check 2, the accelerator classes."""
    if not required:
        return None
    requirements = runtime.spec.accelerator_requirements
    offered = set(requirements.accelerator_classes or ()) if requirements else set()
    if "" not in required and required <= offered:
        return None  # an empty class value is a class no runtime lists
    return "runtime does not support the required accelerator class"


@dataclass(frozen=True)
class Request:
    """What runtimes are checked against: the model, and the InferenceService when there is one.

    Checks 2 and 3 need an InferenceService and pass without one (``explain --model``).
    """

    model: ModelSpec
    isvc: InferenceService | None = None
    required_classes: frozenset[str] = field(init=False)
    modes: RequestedModes = field(init=False)

    def __post_init__(self) -> None:
        required = required_accelerator_classes(self.isvc) if self.isvc else frozenset()
        object.__setattr__(self, "required_classes", required)
        modes = requested_modes(self.isvc) if self.isvc else (None, None)
        object.__setattr__(self, "modes", modes)


def _check(check: str, runtime: ServingRuntime, request: Request) -> str | None:
    if check == "disabled":
        return "runtime is disabled" if runtime.disabled else None
    if check == "accelerator_class":
        return accelerator_reason(runtime, request.required_classes)
    if check == "deployment_mode":
        return mode_mismatch_reason(request.modes, runtime)
    if check == "model_format":
        return format_reason(runtime, request.model)
    return size_reason(runtime, request.model)


def first_exclusion(
    runtime: ServingRuntime, request: Request, *, checks: tuple[str, ...] = CHECKS
) -> Exclusion | None:
    """The first failing check among ``checks``, in order; None when all pass."""
    for check in checks:
        if reason := _check(check, runtime, request):
            return Exclusion(runtime.name, runtime.is_cluster, check, reason)
    return None
