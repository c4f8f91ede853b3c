"""Admission rules as pure functions (docs/reference/admission.md): denial and warnings, in order.

The webhook server and ``ome-operator render`` only wrap these. Denial texts are what kubectl
prints after ``denied the request: ``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..models import COMPONENTS, ComponentSpec, InferenceService, ServingRuntime
from .autoscaling import MAX_REPLICAS, annotation_problem, replica_range_problem
from .deployment_modes import (
    MODE_ANNOTATION,
    DeploymentMode,
    declared_mode,
    isvc_level_mode,
)
from .instances.gangs import topology_problem
from .metadata_propagation import MetadataPropagation, over_bound_message
from .model_catalog import ModelCatalog
from .operator_config import OperatorConfig
from .pod_policy import PodPolicy, pod_policy_denials
from .rendering.metadata import OWNER_LABEL
from .rendering.naming import MAX_NAME_LENGTH
from .selection import (
    ModelSpecError,
    RuntimeCatalog,
    SelectionError,
    ShardedModelError,
    resolve_named_runtime,
    select_runtime,
)
from .workload_leftovers import WorkloadLookup, leftover_workload_warnings

__all__ = [
    "MAX_REPLICAS",
    "AdmissionDenied",
    "AdmissionVerdict",
    "SelectionOutcome",
    "mode_typo_warnings",
    "replica_range_problem",
    "review_inference_service",
    "review_serving_runtime",
]

_PERCENT = re.compile(r"(0|[1-9][0-9]?|100)%")
#: An InferenceService name becomes the name of its entry Service (a DNS-1035 label) and the
#: value of the ``ome.io/inferenceservice`` label on every object it owns (at most 63 characters).
_DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_MODES = ", ".join(m.value for m in DeploymentMode)
#: ``warning`` labels of the webhook's warnings metric (docs/reference/metrics.md).
AUTO_SELECTED, DOES_NOT_DECLARE_SUPPORT = "auto_selected", "does_not_declare_support"
DEPLOYMENT_STRATEGY, MODEL_KIND = "deployment_strategy", "model_kind"
OTHER_MODE_WORKLOAD = "other_mode_workload"


@dataclass(frozen=True)
class SelectionOutcome:
    """What auto-selection decided during a review, for ``ome_runtime_selection_total``."""

    outcome: str  # selected | no_runtime | error
    scope: str  # namespaced | cluster | none
    exclusions: tuple[str, ...] = ()


class AdmissionDenied(ValueError):
    """The webhook refuses the object; the message is the whole denial text."""

    def __init__(self, message: str, selection: SelectionOutcome | None = None) -> None:
        super().__init__(message)
        self.selection = selection


@dataclass(frozen=True)
class AdmissionVerdict:
    allowed: bool
    message: str = ""
    warnings: tuple[str, ...] = ()
    #: Set when the review ran auto-selection (its runtime step); metrics only, not the answer.
    selection: SelectionOutcome | None = field(default=None, compare=False)
    #: The ``warning`` label of ``ome_webhook_warnings_total`` for each counted warning (typo
    #: warnings are not counted); metrics only.
    warning_kinds: tuple[str, ...] = field(default=(), compare=False)


def mode_typo_warnings(place: str, annotations: dict[str, str]) -> list[str]:
    """A mode typo warning for an ``ome.io/deploymentMode`` value that is not a mode."""
    value = annotations.get(MODE_ANNOTATION)
    if value is None or declared_mode(annotations) is not None:
        return []
    text = (
        f'{MODE_ANNOTATION} "{value}" on {place} is not a deployment mode and is ignored; '
        f"valid values are {_MODES}"
    )
    near = [m for m in DeploymentMode if m.value.lower() == value.lower()]
    return [text + (f"; did you mean {near[0].value}?" if near else "")]


def _components(isvc: InferenceService) -> Iterator[tuple[str, ComponentSpec]]:
    for name in COMPONENTS:
        spec = isvc.spec.component(name)
        if spec is not None:
            yield name, spec


def _check_name(isvc: InferenceService) -> None:
    name = isvc.name
    if len(name) > MAX_NAME_LENGTH:
        raise AdmissionDenied(
            f"metadata.name must be no more than {MAX_NAME_LENGTH} characters (got {len(name)}): "
            f"it is the value of the {OWNER_LABEL} label on every object the InferenceService owns"
        )
    if not _DNS_1035_LABEL.fullmatch(name):
        raise AdmissionDenied(
            f'metadata.name "{name}" must be a DNS-1035 label (lower case letters, digits and '
            "'-', starting with a letter and ending with a letter or digit): it names the "
            "InferenceService's Services"
        )


def _check_pdb_fields(isvc: InferenceService) -> None:
    for name, spec in _components(isvc):
        if spec.min_available is not None and spec.max_unavailable is not None:
            raise AdmissionDenied(
                f"spec.{name}.minAvailable and spec.{name}.maxUnavailable cannot both be set"
            )
        for budget, value in (
            ("minAvailable", spec.min_available),
            ("maxUnavailable", spec.max_unavailable),
        ):
            valid = (isinstance(value, int) and value >= 0) or (
                isinstance(value, str) and _PERCENT.fullmatch(value)
            )
            if value is not None and not valid:
                raise AdmissionDenied(
                    f"spec.{name}.{budget} must be a non-negative integer "
                    "or a percentage from 0% to 100%"
                )


def _check_copied_metadata(isvc: InferenceService, propagation: MetadataPropagation) -> None:
    """The labels and annotations it would have copied fit the bound (docs/configuration.md,
    "metadataPropagation")."""
    message = over_bound_message(isvc, propagation)
    if message:
        raise AdmissionDenied(message)


def _check_pod_policy(
    isvc: InferenceService, policy: PodPolicy, namespace_labels: Mapping[str, str]
) -> None:
    """Every pod field the pod policy refuses, in one denial (docs/configuration.md,
    "podPolicy")."""
    denials = pod_policy_denials(isvc, policy, namespace_labels)
    if denials:
        raise AdmissionDenied("; ".join(denials))


def _check_scaling_and_placement(isvc: InferenceService) -> None:
    annotations = isvc.metadata.annotations
    problems = [annotation_problem("metadata.annotations", annotations)]
    problems.append(topology_problem(annotations))
    problems += [replica_range_problem(f"spec.{name}", spec) for name, spec in _components(isvc)]
    if problem := next((p for p in problems if p), ""):
        raise AdmissionDenied(problem)


def _check_leader_worker_pairing(isvc: InferenceService) -> None:
    for name in ("engine", "decoder"):
        spec = isvc.spec.component(name)
        if spec is None or (spec.leader is None) == (spec.worker is None):
            continue
        has, lacks = ("leader", "worker") if spec.leader is not None else ("worker", "leader")
        raise AdmissionDenied(
            f"InvalidLeaderWorkerPairing: {name} declares {has} without {lacks}; "
            "declare both or neither"
        )


def _declared_only_mode(isvc: InferenceService, spec: ComponentSpec) -> str:
    mode = declared_mode(spec.annotations)
    return mode.value if mode else (isvc.spec.deployment_mode or "")


def _check_mode_combination(isvc: InferenceService) -> None:
    engine, decoder = isvc.spec.engine, isvc.spec.decoder
    if engine is None or decoder is None:
        return
    ours, theirs = _declared_only_mode(isvc, engine), _declared_only_mode(isvc, decoder)
    if ours != theirs and DeploymentMode.OME_NATIVE.value in (ours, theirs):
        raise AdmissionDenied(
            f'InvalidDeploymentModeCombination: engine deploymentMode="{ours}" does not match '
            f'decoder deploymentMode="{theirs}"; when either is OMENative, both must use the '
            "same value"
        )


def _check_model(isvc: InferenceService, models: ModelCatalog) -> None:
    ref, namespace = isvc.spec.model, isvc.namespace
    model = models.lookup(namespace, ref.name)
    if model is None:
        raise AdmissionDenied(
            f'referenced model "{ref.name}" not found in namespace "{namespace}": ensure a '
            "BaseModel exists in this namespace or a ClusterBaseModel exists cluster-wide with "
            "this name"
        )
    if model.spec.disabled:
        raise AdmissionDenied(f"model {ref.name} is disabled")
    if model.spec.distribution == "Sharded":
        raise AdmissionDenied(str(ShardedModelError(ref.name)))


def _model_kind_warnings(isvc: InferenceService, models: ModelCatalog) -> list[str]:
    """A model the webhook finds (a BaseModel, then a ClusterBaseModel, whatever the kind) that
    the controller will not (it needs the kind ``spec.model.kind`` names): said now, not only
    as ``ModelNotFound`` after admission."""
    ref, namespace = isvc.spec.model, isvc.namespace
    if ref is None or models.referenced(ref, namespace) is not None:
        return []
    found = models.lookup(namespace, ref.name)
    if found is None:
        return []
    return [
        f'spec.model.kind is {ref.kind}, but only a {found.kind} "{ref.name}" exists'
        f"{'' if found.is_cluster else f' in namespace {namespace}'}: the controller will "
        f"report ModelNotFound and write nothing; set spec.model.kind to {found.kind}"
    ]


def _has_complete_runner(engine: ComponentSpec) -> bool:
    def image(runner: dict | None) -> bool:
        return bool((runner or {}).get("image"))

    leader, worker = engine.leader, engine.worker
    return image(engine.runner) or (
        leader is not None and worker is not None and image(leader.runner) and image(worker.runner)
    )


#: The runtime step's warnings (with their metric kinds), selection, and the runtime it found.
_RuntimeStep = tuple[list[tuple[str, str]], SelectionOutcome | None, ServingRuntime | None]


def _runtime_warnings(
    isvc: InferenceService, models: ModelCatalog, runtimes: RuntimeCatalog
) -> _RuntimeStep:
    """The runtime step: deny, or return the runtime warning (with its metric kind)."""
    spec, namespace = isvc.spec, isvc.namespace
    model = models.lookup(namespace, spec.model.name) if spec.model else None
    if spec.runtime is not None:
        if spec.model is None:
            found = runtimes.find(spec.runtime.name, spec.runtime.kind)
            if found is None or not found.disabled:
                return [], None, found
        try:
            named = resolve_named_runtime(isvc, runtimes, model.spec if model else None)
        except SelectionError as exc:
            raise AdmissionDenied(str(exc)) from None
        advised = [(DOES_NOT_DECLARE_SUPPORT, named.advisory.warning())] if named.advisory else []
        return advised, None, named.runtime
    if spec.model is None or _has_complete_runner(spec.engine):
        return [], None, None
    try:
        selection = select_runtime(model.spec, model.name, isvc, runtimes, namespace)
    except ModelSpecError as exc:
        raise AdmissionDenied(
            _no_runtime(spec.model.name, exc), SelectionOutcome("error", "none")
        ) from None
    excluded = tuple(v.exclusion.check for v in selection.verdicts if v.exclusion)
    if selection.chosen is None:
        raise AdmissionDenied(
            _no_runtime(spec.model.name, selection.failure),
            SelectionOutcome("no_runtime", "none", excluded),
        )
    chosen = selection.chosen.runtime
    scope = "cluster" if chosen.is_cluster else "namespaced"
    warning = f"Runtime {chosen.name} will be auto-selected for model {spec.model.name}"
    return [(AUTO_SELECTED, warning)], SelectionOutcome("selected", scope, excluded), chosen


def _no_runtime(model: str, failure: Exception) -> str:
    return (
        f"no supporting runtime found for model {model} and engine does not have "
        f"complete runner configuration: {failure}"
    )


def _deployment_strategy_warnings(isvc: InferenceService) -> list[str]:
    """The ``deploymentStrategy`` warnings (modes set only in component annotations give none)."""
    mode = isvc.spec.deployment_mode or isvc_level_mode(isvc)
    if not mode or mode == DeploymentMode.RAW_DEPLOYMENT:
        return []
    return [
        f'{name}.deploymentStrategy is set but deploymentMode is "{mode}"; deploymentStrategy '
        f"applies only to RawDeployment and is ignored here — use "
        f"{name}.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
        for name, spec in _components(isvc)
        if spec.deployment_strategy is not None
    ]


def _isvc_typo_warnings(isvc: InferenceService) -> list[str]:
    found = mode_typo_warnings("metadata.annotations", isvc.metadata.annotations)
    for name, spec in _components(isvc):
        found += mode_typo_warnings(f"spec.{name}.annotations", spec.annotations)
    return found


def review_inference_service(
    isvc: InferenceService,
    models: ModelCatalog,
    runtimes: RuntimeCatalog,
    config: OperatorConfig | None = None,
    namespace_labels: Mapping[str, str] | None = None,
    workloads: WorkloadLookup | None = None,
) -> AdmissionVerdict:
    """The denials in order, then the warnings (docs/reference/admission.md).

    ``runtimes`` holds the ServingRuntimes of the InferenceService's namespace and every
    ClusterServingRuntime. ``config`` brings the pod policy and the bound of copied metadata
    (None: the defaults, the strictest); ``namespace_labels`` are those of the
    InferenceService's namespace, which the pod policy's exceptions select on; ``workloads``
    finds its existing workloads, for the warning of one of another mode (None: none known).
    """
    config = config or OperatorConfig()
    selection_warnings: list[tuple[str, str]] = []
    selection: SelectionOutcome | None = None
    runtime: ServingRuntime | None = None
    message = ""
    try:
        _check_name(isvc)
        if isvc.spec.model is None and isvc.spec.runtime is None:
            raise AdmissionDenied("at least one of spec.model or spec.runtime must be set")
        _check_copied_metadata(isvc, config.metadata_propagation)
        _check_pdb_fields(isvc)
        _check_scaling_and_placement(isvc)
        _check_leader_worker_pairing(isvc)
        _check_mode_combination(isvc)
        _check_pod_policy(isvc, config.pod_policy, namespace_labels or {})
        if isvc.spec.model is not None:
            _check_model(isvc, models)
        if isvc.spec.engine is not None:
            selection_warnings, selection, runtime = _runtime_warnings(isvc, models, runtimes)
    except AdmissionDenied as exc:
        message, selection = str(exc), exc.selection
    strategy = _deployment_strategy_warnings(isvc)
    model_kind = _model_kind_warnings(isvc, models) if not message else []
    leftovers = (
        leftover_workload_warnings(isvc, runtime, workloads) if workloads and not message else []
    )
    warnings = [*model_kind, *(text for _, text in selection_warnings), *strategy]
    warnings += [*_isvc_typo_warnings(isvc), *leftovers]
    kinds = (
        [MODEL_KIND] * len(model_kind)
        + [kind for kind, _ in selection_warnings]
        + [DEPLOYMENT_STRATEGY] * len(strategy)
        + [OTHER_MODE_WORKLOAD] * len(leftovers)
    )
    return AdmissionVerdict(not message, message, tuple(warnings), selection, tuple(kinds))


def review_serving_runtime(
    runtime: ServingRuntime, accelerator_classes: frozenset[str]
) -> AdmissionVerdict:
    """The runtime denials (none for a disabled runtime), then the mode typo warnings."""
    warnings: list[str] = []
    for name in COMPONENTS:
        config = runtime.spec.config(name)
        if config is not None:
            warnings += mode_typo_warnings(f"spec.{name}Config.annotations", config.annotations)
    message = "" if runtime.disabled else _runtime_denial(runtime, accelerator_classes)
    return AdmissionVerdict(not message, message, tuple(warnings))


def _runtime_denial(runtime: ServingRuntime, accelerator_classes: frozenset[str]) -> str:
    for name in COMPONENTS:
        config = runtime.spec.config(name)
        problem = replica_range_problem(f"spec.{name}Config", config) if config else ""
        if problem:
            return problem
    requirements = runtime.spec.accelerator_requirements
    listed = (requirements.accelerator_classes or []) if requirements else []
    missing = [name for name in listed if name not in accelerator_classes]
    if missing:
        return (
            "unknown accelerator classes referenced in AcceleratorRequirements: "
            f"[{' '.join(missing)}]"
        )
    priorities: dict[str, set[int]] = {}
    for entry in runtime.spec.supported_model_formats:
        if entry.auto_select is True:
            priority = 1 if entry.priority is None else entry.priority
            priorities.setdefault(entry.name or "", set()).add(priority)
    if any(len(found) > 1 for found in priorities.values()):
        return "different priorities assigned for the model format"
    return ""
