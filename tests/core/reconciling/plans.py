"""Builders for the reconcile-pass tests (SPEC S3.5–S3.7, S2.2, S2.11–S2.14, S5.5, S6, S8, S16.4,
S10): objects as the API returns them, the conditions and log records a pass writes, and
``plan_of``, one pass of ``reconcile`` over a snapshot of runtimes, models and existing objects.

Objects are named by ``(kind, name)`` (``objects_of``, ``names_of``); their content is pinned by
tests/core/rendering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.core.reconciling import LogRecord, ReconcilePlan, Snapshot, reconcile
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import InferenceService, ModelResource, ServingRuntime, from_manifest
from tests.builders import isvc_manifest, make_model, make_runtime

NOW = "2024-06-01T12:00:00Z"
EARLIER = "2024-01-01T00:00:00Z"
MODE = "ome.io/deploymentMode"
LLAMA = make_model("llama")
RT = make_runtime("rt")
CONFIG = OperatorConfig()

AVAILABLE = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
UNAVAILABLE = (
    "False",
    "MinimumReplicasUnavailable",
    "Deployment does not have minimum availability.",
)
RAW_SELECTOR = {"matchLabels": {"app": "svc-engine"}}

_API_VERSIONS = {
    "Deployment": "apps/v1",
    "Service": "v1",
    "PodDisruptionBudget": "policy/v1",
    "InferenceReplica": "ome.io/v1beta1",
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "ScaledObject": "keda.sh/v1alpha1",
}


def isvc_of(
    *,
    status: dict[str, Any] | None = None,
    generation: int | None = None,
    model_kind: str | None = None,
    **kwargs: Any,
) -> InferenceService:
    """``make_isvc`` with a status, a generation and a ``spec.model.kind``."""
    manifest = isvc_manifest(**kwargs)
    if model_kind is not None:
        manifest["spec"]["model"]["kind"] = model_kind
    if generation is not None:
        manifest["metadata"]["generation"] = generation
    if status is not None:
        manifest["status"] = status
    return from_manifest(manifest)


def annotated_isvc(mode: str, **fields: Any) -> dict[str, Any]:
    """A component spec (ISVC or runtime config) annotated with ``mode``."""
    return {"annotations": {MODE: mode}, **fields}


def owned_object(
    kind: str,
    name: str,
    component: str = "engine",
    *,
    owner: str | None = "svc",
    isvc: str = "svc",
    **body: Any,
) -> dict[str, Any]:
    """An object as the API returns it: labelled for ``isvc``, controlled by ``owner``."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "labels": {"component": component, "ome.io/inferenceservice": isvc},
    }
    if owner is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return {"apiVersion": _API_VERSIONS[kind], "kind": kind, "metadata": metadata, **body}


def _available(available: tuple[str, str, str] | None) -> list[dict[str, Any]]:
    if available is None:
        return [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}]
    status, reason, message = available
    return [{"type": "Available", "status": status, "reason": reason, "message": message}]


def deployment_of(
    component: str = "engine",
    available: tuple[str, str, str] | None = AVAILABLE,
    *,
    observed_generation: int | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": _available(available)}
    if observed_generation is not None:
        status["observedGeneration"] = observed_generation
    return owned_object("Deployment", f"svc-{component}", component, status=status)


def lws_of(
    component: str = "engine", available: tuple[str, str, str] | None = AVAILABLE, **counts: int
) -> dict[str, Any]:
    """A LeaderWorkerSet with its ``Available`` and group ``counts`` (``readyReplicas``...)."""
    return owned_object(
        "LeaderWorkerSet",
        f"lws-svc-{component}",
        component,
        status={"conditions": _available(available), **counts},
    )


def replica_of(component: str = "engine", **status: Any) -> dict[str, Any]:
    return owned_object("InferenceReplica", f"svc-{component}", component, status=status)


def pdb_of(selector: dict[str, Any], component: str = "engine", **kwargs: Any) -> dict[str, Any]:
    spec = {"maxUnavailable": 1, "selector": selector}
    return owned_object("PodDisruptionBudget", f"svc-{component}", component, spec=spec, **kwargs)


def ref_to(kind: str, name: str) -> dict[str, Any]:
    """How a plan names an object to delete."""
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": _API_VERSIONS[kind], "kind": kind, "metadata": meta}


def condition_of(
    kind: str, status: str, reason: str = "", message: str = "", *, at: str = NOW, **extra: str
) -> dict[str, Any]:
    found = {"type": kind, "status": status, "reason": reason, "message": message, **extra}
    return {**{k: v for k, v in found.items() if v}, "lastTransitionTime": at}


def objects_of(
    component: str, mode: str = "RawDeployment", *, pdb: bool = True, hpa: bool = True
) -> list[tuple[str, str]]:
    """The (kind, name) of a component's objects, in render order; ``hpa``: the default
    autoscaler (bounds 1 to the configured maximum) last."""
    name = f"svc-{component}"
    found = {
        "RawDeployment": [("Deployment", name), ("Service", name)],
        "MultiNode": [("LeaderWorkerSet", f"lws-{name}"), ("Service", name)],
        "OMENative": [
            ("InferenceReplica", name),
            ("Service", name),
            ("Service", f"{name}-headless"),
        ],
    }[mode]
    budget = [("PodDisruptionBudget", name)] if pdb else []
    return found + budget + ([("HorizontalPodAutoscaler", name)] if hpa else [])


ENTRY = [("Service", "svc")]
#: ``status.components.<c>.autoscaler`` of an engine with the configuration's bounds (1 to 3),
#: before the workload's ``spec.replicas`` and ``status.replicas`` are added.
DEFAULT_AUTOSCALER = {
    "class": "hpa",
    "reason": "the default autoscaler class",
    "minReplicas": 1,
    "maxReplicas": 3,
    "minReplicasSource": "configuration",
    "maxReplicasSource": "configuration",
    "metric": "cpu",
    "target": 80,
}
INGRESS = condition_of("IngressReady", "True", "IngressDisabled")


def selected_record(runtime: str = "rt", score: int = 2, *, cluster: bool = True) -> LogRecord:
    fields = (
        ("namespace", "default"),
        ("inferenceService", "svc"),
        ("runtime", runtime),
        ("score", score),
        ("isCluster", cluster),
    )
    return LogRecord("info", "Selected runtime", fields)


def plan_of(
    isvc: InferenceService,
    runtimes: Sequence[ServingRuntime] = (RT,),
    models: Sequence[ModelResource] = (LLAMA,),
    existing: Sequence[dict[str, Any]] = (),
    *,
    pods: Mapping[str, tuple[dict[str, Any], ...]] | None = None,
    lws: bool = True,
    keda: bool = True,
    config: OperatorConfig = CONFIG,
) -> ReconcilePlan:
    """One pass; ``pods``: component -> the pods of its Deployment or LeaderWorkerSet."""
    snapshot = Snapshot(
        runtimes=RuntimeCatalog.of(runtimes),
        models=ModelCatalog.of(models),
        existing={(o["kind"], o["metadata"]["name"]): o for o in existing},
        pods=pods or {},
        leader_worker_set_installed=lws,
        keda_installed=keda,
        now=NOW,
        config=config,
    )
    return reconcile(isvc, snapshot)


def names_of(objects: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects]


NATIVE_ENGINE = isvc_of(deploymentMode="OMENative")
