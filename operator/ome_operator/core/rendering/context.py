"""What the renderers need to know about one component, decided before rendering starts.

The reconciler resolves the runtime, the model, the merge (S4), the mode (S3) and the replica
bounds; rendering only reads them. ``PdbDefaults`` is the ``podDisruptionBudget`` entry of the
operator configuration (S1.10).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...models import COMPONENTS, ComponentSpec, InferenceService, ModelResource, ServingRuntime
from ..deployment_modes import DeploymentMode

__all__ = [
    "BUDGET_FIELDS",
    "Budget",
    "ComponentContext",
    "PdbDefaults",
    "has_leader_worker",
    "pods_per_replica",
    "worker_size",
]

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
class ComponentContext:
    """One declared component, resolved and ready to render."""

    isvc: InferenceService
    #: ``engine``, ``decoder`` or ``router``.
    component: str
    #: The component as the InferenceService declares it (S5.4.6 and S5.5 look at it alone).
    declared: ComponentSpec
    #: The component after the runtime's config was merged in (S4).
    merged: ComponentSpec
    mode: DeploymentMode
    runtime: ServingRuntime
    #: The BaseModel or ClusterBaseModel; set only when the InferenceService has ``spec.model``.
    model: ModelResource | None
    min_replicas: int
    max_replicas: int
    cluster_domain: str = "cluster.local"
    pdb_defaults: PdbDefaults = field(default_factory=PdbDefaults)

    def __post_init__(self) -> None:
        if self.component not in COMPONENTS:
            raise ValueError(f"component must be one of {COMPONENTS} (got {self.component!r})")


def has_leader_worker(ctx: ComponentContext) -> bool:
    """The component has the leader/worker shape: a ``leader`` or a ``worker`` (either is enough,
    as in S3.3 rule 3); the router never has it."""
    merged = ctx.merged
    return ctx.component != "router" and (merged.leader is not None or merged.worker is not None)


def worker_size(ctx: ComponentContext) -> int:
    """Worker pods per replica: ``worker.size`` (ISVC, else runtime), 1 when the shape has no
    size (S5.3, S5.4.2), 0 without the leader/worker shape."""
    if not has_leader_worker(ctx):
        return 0
    worker = ctx.merged.worker
    return 1 if worker is None or worker.size is None else worker.size


def pods_per_replica(ctx: ComponentContext) -> int:
    """Pods in one replica (S5.1.5): a Deployment replica is one pod whatever the shape."""
    if ctx.mode is DeploymentMode.RAW_DEPLOYMENT:
        return 1
    return 1 + worker_size(ctx)
