"""The operator configuration (docs/configuration.md): ConfigMap ``inferenceservice-config``,
parsed and checked.

Each problem is an error with the exact text OME logs; ``OperatorConfig`` holds the defaults the
reconciler uses (replica bounds, budgets, the cluster domain): the one home of every default a
decision reads, carried by each pass's ``Snapshot``. Parsing is pure: the caller reads the
ConfigMap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .autoscaling import KedaConfigError, KedaDefaults, parse_keda_defaults
from .deployment_modes import DeploymentMode
from .metadata_propagation import (
    MetadataPropagation,
    MetadataPropagationConfigError,
    parse_metadata_propagation,
)
from .model_volumes import ModelVolumes, ModelVolumesConfigError, parse_model_volumes
from .pod_policy import PodPolicy, PodPolicyConfigError, parse_pod_policy

__all__ = [
    "BUDGET_FIELDS",
    "CONFIG_MAP_NAME",
    "Budget",
    "ConfigError",
    "DeployConfigError",
    "OperatorConfig",
    "PdbConfigError",
    "PdbDefaults",
    "ReplicaDefaults",
    "StartupConfigError",
    "parse_operator_config",
]

CONFIG_MAP_NAME = "inferenceservice-config"

#: ConfigMap key of each mode's budget, and the PdbDefaults field it fills.
_PDB_MODES = {"rawDeployment": "raw_deployment", "omeNative": "ome_native"}

_PARSE_PDB = "unable to parse podDisruptionBudget config json"


class ConfigError(ValueError):
    """The configuration cannot be used."""


class StartupConfigError(ConfigError):
    """The manager cannot start (defaultDeploymentMode other than RawDeployment)."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"Failed to initialize deployment configuration: {detail}")


class DeployConfigError(ConfigError):
    """``deploy`` is unusable: every InferenceService reconcile stalls (no event)."""


class PdbConfigError(ConfigError):
    """``podDisruptionBudget`` is unusable: no workload of any InferenceService is written."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"fails to create InferenceServicesConfig: {detail}")


#: The two PodDisruptionBudget fields, in the order they are looked at.
BUDGET_FIELDS = ("minAvailable", "maxUnavailable")

#: One budget: the field that is set and its value (integer or percentage string).
Budget = tuple[str, int | str]


@dataclass(frozen=True)
class PdbDefaults:
    """Per mode, the budget used when neither the component nor its runtime sets one."""

    #: ``podDisruptionBudget.rawDeployment``; None = no default for RawDeployment.
    raw_deployment: Budget | None = ("maxUnavailable", 1)
    #: ``podDisruptionBudget.omeNative``; None = no default for OMENative.
    ome_native: Budget | None = ("maxUnavailable", 1)

    def __post_init__(self) -> None:
        for budget in (self.raw_deployment, self.ome_native):
            if budget is not None and budget[0] not in BUDGET_FIELDS:
                raise ValueError(f"a default budget field must be one of {BUDGET_FIELDS}")

    def for_mode(self, mode: DeploymentMode) -> Budget | None:
        if mode is DeploymentMode.RAW_DEPLOYMENT:
            return self.raw_deployment
        if mode is DeploymentMode.OME_NATIVE:
            return self.ome_native
        return None


@dataclass(frozen=True)
class ReplicaDefaults:
    """``deploy.replicas`` of the operator configuration."""

    min_replicas: int = 1
    max_replicas: Mapping[str, int] = field(
        default_factory=lambda: {"engine": 3, "decoder": 3, "router": 2}
    )


@dataclass(frozen=True)
class OperatorConfig:
    replicas: ReplicaDefaults = field(default_factory=ReplicaDefaults)
    pdb: PdbDefaults = field(default_factory=PdbDefaults)
    cluster_domain: str = "cluster.local"
    #: A problem that stalls reconciles until the ConfigMap is fixed.
    problem: ConfigError | None = None
    #: ``modelVolumes``: where each model's volume comes from (docs/configuration.md).
    model_volumes: ModelVolumes = field(default_factory=ModelVolumes)
    #: ``podPolicy``: what an InferenceService's pod fields may not hold (docs/configuration.md).
    pod_policy: PodPolicy = field(default_factory=PodPolicy)
    #: ``metadataPropagation``: which labels and annotations are copied, and how many bytes.
    metadata_propagation: MetadataPropagation = field(default_factory=MetadataPropagation)
    #: ``kedaConfig``: what a KEDA trigger asks when the InferenceService does not say.
    keda: KedaDefaults = field(default_factory=KedaDefaults)


def _positive(key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise DeployConfigError("unable to parse deploy config json")
    if value <= 0:
        raise DeployConfigError(f"invalid deploy config, replicas.{key} must be > 0, got {value}")
    return value


def _replicas(deploy: Mapping[str, Any]) -> ReplicaDefaults:
    replicas = deploy.get("replicas") or {}
    if not isinstance(replicas, dict):
        raise DeployConfigError("unable to parse deploy config json")
    defaults = ReplicaDefaults()
    minimum = defaults.min_replicas
    if "defaultMinReplicas" in replicas:
        minimum = _positive("defaultMinReplicas", replicas["defaultMinReplicas"])
    maximum = dict(defaults.max_replicas)
    given = replicas.get("defaultMaxReplicas") or {}
    if not isinstance(given, dict):
        raise DeployConfigError("unable to parse deploy config json")
    for component, value in given.items():
        maximum[component] = _positive(f"defaultMaxReplicas.{component}", value)
    return ReplicaDefaults(minimum, maximum)


def _deploy(text: str | None) -> ReplicaDefaults:
    if text is None:
        return ReplicaDefaults()
    try:
        deploy = json.loads(text)
    except ValueError:
        raise DeployConfigError("unable to parse deploy config json") from None
    if not isinstance(deploy, dict):
        raise DeployConfigError("unable to parse deploy config json")
    mode = deploy.get("defaultDeploymentMode", "RawDeployment")
    if mode != "RawDeployment":
        raise StartupConfigError(f'defaultDeploymentMode "{mode}" is not RawDeployment')
    return _replicas(deploy)


def _pdb(text: str | None) -> PdbDefaults:
    if text is None:
        return PdbDefaults()
    try:
        given = json.loads(text)
    except ValueError:
        raise PdbConfigError(_PARSE_PDB) from None
    if given is not None and not isinstance(given, dict):
        raise PdbConfigError(_PARSE_PDB)
    budgets: dict[str, tuple[str, int | str] | None] = {}
    for key, attribute in _PDB_MODES.items():
        entry = (given or {}).get(key)
        if entry is None:
            budgets[attribute] = None
            continue
        if not isinstance(entry, dict):
            raise PdbConfigError(_PARSE_PDB)
        fields = [f for f in ("minAvailable", "maxUnavailable") if entry.get(f) is not None]
        if len(fields) != 1:
            raise PdbConfigError(
                f"exactly one of podDisruptionBudget.{key}.minAvailable or "
                f"podDisruptionBudget.{key}.maxUnavailable must be set"
            )
        value = entry[fields[0]]
        if not _budget_value(value):
            raise PdbConfigError(
                f"podDisruptionBudget.{key}.{fields[0]} must be a non-negative integer or a "
                f"percentage, got {json.dumps(value)}"
            )
        budgets[attribute] = (fields[0], value)
    return PdbDefaults(**budgets)


_PERCENT = re.compile(r"(\d+)%")


def _budget_value(value: Any) -> bool:
    """An integer from 0, or a percentage from 0% to 100%, as a budget field takes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value >= 0
    match = _PERCENT.fullmatch(value) if isinstance(value, str) else None
    return match is not None and int(match[1]) <= 100


def _model_volumes(text: str | None) -> ModelVolumes:
    try:
        return parse_model_volumes(text)
    except ModelVolumesConfigError as exc:
        raise ConfigError(str(exc)) from None


def _pod_policy(text: str | None) -> PodPolicy:
    try:
        return parse_pod_policy(text)
    except PodPolicyConfigError as exc:
        raise ConfigError(str(exc)) from None


def _metadata_propagation(text: str | None) -> MetadataPropagation:
    try:
        return parse_metadata_propagation(text)
    except MetadataPropagationConfigError as exc:
        raise ConfigError(str(exc)) from None


def _keda(text: str | None) -> KedaDefaults:
    try:
        return parse_keda_defaults(text)
    except KedaConfigError as exc:
        raise ConfigError(str(exc)) from None


def parse_operator_config(data: Mapping[str, str] | None) -> OperatorConfig:
    """The configuration from the ConfigMap's ``data``; StartupConfigError is raised, other
    problems are kept in ``problem`` so reconciles can stall with the exact log text."""
    data = data or {}
    domain = data.get("clusterDomain") or "cluster.local"
    try:
        replicas = _deploy(data.get("deploy"))
        pdb = _pdb(data.get("podDisruptionBudget"))
        model_volumes = _model_volumes(data.get("modelVolumes"))
        pod_policy = _pod_policy(data.get("podPolicy"))
        propagation = _metadata_propagation(data.get("metadataPropagation"))
        keda = _keda(data.get("kedaConfig"))
    except StartupConfigError:
        raise
    except ConfigError as problem:
        return OperatorConfig(cluster_domain=domain, problem=problem)
    return OperatorConfig(
        replicas,
        pdb,
        domain,
        model_volumes=model_volumes,
        pod_policy=pod_policy,
        metadata_propagation=propagation,
        keda=keda,
    )
