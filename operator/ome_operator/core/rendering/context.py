"""What the renderers need to know about one component, decided before rendering starts.

The reconciler resolves the runtime, the model, the merge, the mode (docs/deployment-modes.md)
and the replica bounds; rendering only reads them. The budget defaults come from the operator
configuration (``operator_config.PdbDefaults``), and so does the model volume's source
(``model_volumes``), both in docs/configuration.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...models import COMPONENTS, ComponentSpec, InferenceService, ModelResource, ServingRuntime
from ..autoscaling import Autoscaling
from ..deployment_modes import DeploymentMode
from ..metadata_propagation import MetadataPropagation
from ..model_volumes import ModelVolumeSource
from ..operator_config import BUDGET_FIELDS, Budget, PdbDefaults

__all__ = [
    "BUDGET_FIELDS",
    "Budget",
    "ComponentContext",
    "has_leader_worker",
    "pods_per_replica",
    "scaled_by_others",
    "worker_size",
]


@dataclass(frozen=True)
class ComponentContext:
    """One declared component, resolved and ready to render."""

    isvc: InferenceService
    #: ``engine``, ``decoder`` or ``router``.
    component: str
    #: The component as the InferenceService declares it (the OMENative Service selector and the
    #: budget look at it alone).
    declared: ComponentSpec
    #: The component after the runtime's config was merged in (docs/reference/merging.md).
    merged: ComponentSpec
    mode: DeploymentMode
    runtime: ServingRuntime
    #: The BaseModel or ClusterBaseModel; set only when the InferenceService has ``spec.model``.
    model: ModelResource | None
    min_replicas: int
    max_replicas: int
    cluster_domain: str = "cluster.local"
    pdb_defaults: PdbDefaults = field(default_factory=PdbDefaults)
    #: Where the model volume comes from (the node's ``hostPath`` unless configured otherwise).
    model_volume: ModelVolumeSource = field(default_factory=ModelVolumeSource)
    #: Which labels and annotations are copied (``metadataPropagation``, docs/configuration.md).
    metadata_propagation: MetadataPropagation = field(default_factory=MetadataPropagation)
    #: Who scales the component (docs/autoscaling.md); None: nobody, the operator keeps
    #: ``replicas``.
    autoscaling: Autoscaling | None = None
    #: The replicas the workload holds while someone else scales it (None: not scaled, or not
    #: there yet): an OMENative budget counts the pods of every Instance there is.
    held_replicas: int | None = None

    def __post_init__(self) -> None:
        if self.component not in COMPONENTS:
            raise ValueError(f"component must be one of {COMPONENTS} (got {self.component!r})")


def scaled_by_others(ctx: ComponentContext) -> bool:
    """Whether an autoscaler (or someone else) sets the workload's ``replicas``: the operator
    then sets it only when it creates the workload (docs/autoscaling.md)."""
    return ctx.autoscaling is not None and ctx.autoscaling.owns_replicas


def has_leader_worker(ctx: ComponentContext) -> bool:
    """The component has the leader/worker shape: a ``leader`` or a ``worker`` (either is enough,
    as in rule 3 of the mode resolution); the router never has it."""
    merged = ctx.merged
    return ctx.component != "router" and (merged.leader is not None or merged.worker is not None)


def worker_size(ctx: ComponentContext) -> int:
    """Worker pods per replica: ``worker.size`` (ISVC, else runtime), 1 when the shape has no
    size, 0 without the leader/worker shape."""
    if not has_leader_worker(ctx):
        return 0
    worker = ctx.merged.worker
    return 1 if worker is None or worker.size is None else worker.size


def pods_per_replica(ctx: ComponentContext) -> int:
    """Pods in one replica: a Deployment replica is one pod whatever the shape."""
    if ctx.mode is DeploymentMode.RAW_DEPLOYMENT:
        return 1
    return 1 + worker_size(ctx)
