"""Rules of one reconcile pass (SPEC S3.5–S3.7, S2.2, S2.11–S2.14, S5.5, S6, S8, S16.4, S10):
what the controller applies and deletes, the status it writes, the events and logs it records,
whether it retries, and the decisions the metrics count.

The content of each rendered object is pinned by tests/core/rendering; here objects are named by
``(kind, name)`` and the rows pin which ones a pass writes, in which order.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from ome_operator.core import reconciling
from ome_operator.core.conditions import find_condition
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.core.reconciling import (
    Decisions,
    Event,
    LogRecord,
    Outcome,
    ReconcilePlan,
    Snapshot,
    reconcile,
)
from ome_operator.core.rendering import PdbDefaults
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import InferenceService, ModelResource, ServingRuntime, from_manifest
from tests.builders import entry, isvc_manifest, make_model, make_runtime

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"

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
NATIVE_SELECTOR = {
    "matchLabels": {
        "component": "engine",
        "ome.io/inferenceservice": "svc",
        "ome.io/managed-by": "OMENative",
    }
}

NO_RUNTIME = "no runtime found to support model safetensors with format safetensors in namespace "
MODEL_FORMAT_REQUIRED = (
    "Failed to find runtime for model llama: invalid model specification: modelFormat.name: "
    "model format name is required"
)
SHARDED = (
    "Failed to find runtime for model llama: model llama uses distribution Sharded: no model "
    "cache provider is configured for sharded model loading"
)
SEED_EVENT = (
    "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model "
    "llama-3-3-70b-instruct (runtime srt-llama-3-3-70b-instruct-multinode does not support model "
    ": runtime engine deployment mode MultiNode does not match requested engine deployment mode "
    "OMENative); proceeding because the runtime was named explicitly"
)

_API_VERSIONS = {
    "Deployment": "apps/v1",
    "Service": "v1",
    "PodDisruptionBudget": "policy/v1",
    "InferenceReplica": "ome.io/v1beta1",
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
}


# --- builders -------------------------------------------------------------------------------


def _isvc(
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


def _annotated(mode: str, **fields: Any) -> dict[str, Any]:
    """A component spec (ISVC or runtime config) annotated with ``mode``."""
    return {"annotations": {MODE: mode}, **fields}


def _object(
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


def _deployment(
    component: str = "engine",
    available: tuple[str, str, str] | None = AVAILABLE,
    *,
    observed_generation: int | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": _available(available)}
    if observed_generation is not None:
        status["observedGeneration"] = observed_generation
    return _object("Deployment", f"svc-{component}", component, status=status)


def _lws(
    component: str = "engine", available: tuple[str, str, str] | None = AVAILABLE
) -> dict[str, Any]:
    return _object(
        "LeaderWorkerSet",
        f"lws-svc-{component}",
        component,
        status={"conditions": _available(available)},
    )


def _replica(component: str = "engine", **status: Any) -> dict[str, Any]:
    return _object("InferenceReplica", f"svc-{component}", component, status=status)


def _pdb(selector: dict[str, Any], component: str = "engine", **kwargs: Any) -> dict[str, Any]:
    spec = {"maxUnavailable": 1, "selector": selector}
    return _object("PodDisruptionBudget", f"svc-{component}", component, spec=spec, **kwargs)


def _ref(kind: str, name: str) -> dict[str, Any]:
    """How a plan names an object to delete."""
    meta = {"name": name, "namespace": "default"}
    return {"apiVersion": _API_VERSIONS[kind], "kind": kind, "metadata": meta}


def _cond(
    kind: str, status: str, reason: str = "", message: str = "", *, at: str = NOW, **extra: str
) -> dict[str, Any]:
    found = {"type": kind, "status": status, "reason": reason, "message": message, **extra}
    return {**{k: v for k, v in found.items() if v}, "lastTransitionTime": at}


def _objects(
    component: str, mode: str = "RawDeployment", *, pdb: bool = True
) -> list[tuple[str, str]]:
    """The (kind, name) of a component's objects, in render order (S5)."""
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
    return found + ([("PodDisruptionBudget", name)] if pdb else [])


ENTRY = [("Service", "svc")]
INGRESS = _cond("IngressReady", "True", "IngressDisabled")
ENGINE_INITIALIZING = _cond("EngineReady", "False", "Initializing", "engine component initializing")
READY_INITIALIZING = _cond("Ready", "False", "Initializing", "engine component initializing")


def _selected(runtime: str = "rt", score: int = 2, *, cluster: bool = True) -> LogRecord:
    fields = (
        ("namespace", "default"),
        ("inferenceService", "svc"),
        ("runtime", runtime),
        ("score", score),
        ("isCluster", cluster),
    )
    return LogRecord("info", "Selected runtime", fields)


def _failed(component: str, error: str) -> LogRecord:
    fields = (
        ("component", component),
        ("namespace", "default"),
        ("inferenceService", "svc"),
        ("error", error),
    )
    return LogRecord("error", "Failed to reconcile component", fields)


def _plan(
    isvc: InferenceService,
    runtimes: Sequence[ServingRuntime] = (RT,),
    models: Sequence[ModelResource] = (LLAMA,),
    existing: Sequence[dict[str, Any]] = (),
    *,
    lws: bool = True,
    config: OperatorConfig = CONFIG,
) -> ReconcilePlan:
    snapshot = Snapshot(
        runtimes=RuntimeCatalog.of(runtimes),
        models=ModelCatalog.of(models),
        existing={(o["kind"], o["metadata"]["name"]): o for o in existing},
        leader_worker_set_installed=lws,
        now=NOW,
    )
    return reconcile(isvc, snapshot, config)


def _names(objects: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects]


def _sample(name: str, **changes: Any) -> Any:
    raw = yaml.safe_load((SAMPLES / name).read_text())
    raw["spec"].update(changes)
    return from_manifest(raw)


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(reconciling.__all__) == [
        "Decisions",
        "Event",
        "LogRecord",
        "Outcome",
        "ReconcilePlan",
        "Snapshot",
        "reconcile",
    ]


def test_the_outcomes_are_spelled_as_the_metric_labels() -> None:
    assert [o.value for o in Outcome] == ["success", "error", "parked"]


# --- a whole successful pass ----------------------------------------------------------------


def test_a_successful_pass_applies_the_workload_and_writes_the_whole_status() -> None:
    plan = _plan(_isvc(generation=3), existing=[_deployment(observed_generation=3)])
    url = "http://svc.default.svc.cluster.local:8080"
    engine_ready = _cond("EngineReady", *AVAILABLE)
    assert (
        plan.outcome,
        _names(plan.apply),
        plan.delete,
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions,
    ) == (
        Outcome.SUCCESS,
        _objects("engine") + ENTRY,
        (),
        {
            "conditions": [engine_ready, INGRESS, _cond("Ready", "True")],
            "url": url,
            "address": {"url": url},
            "components": {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": "http://svc-engine.default.svc.cluster.local",
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "svc-engine",
                    },
                }
            },
            "runtime": {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
            "observedGeneration": 3,
        },
        (),
        (_selected(),),
        Decisions(selection=("selected", "cluster"), modes=(("engine", "RawDeployment"),)),
    )


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(
            _isvc(decoder={}, router={}),
            _objects("engine") + _objects("decoder") + _objects("router") + ENTRY,
            id="components are applied engine, decoder, router, then the entry Service",
        ),
        pytest.param(
            _isvc(router={}, deploymentMode="OMENative"),
            _objects("engine", "OMENative") + _objects("router", "OMENative") + ENTRY,
            id="each component's objects follow its mode",
        ),
        pytest.param(
            _isvc(engine=_annotated("MultiNode")),
            _objects("engine", "MultiNode", pdb=False) + ENTRY,
            id="a MultiNode component gets no PodDisruptionBudget",
        ),
        pytest.param(
            _isvc(engine={"minAvailable": 0}),
            _objects("engine") + ENTRY,
            id="minAvailable 0 still creates a PodDisruptionBudget",
        ),
    ],
)
def test_the_objects_of_a_pass_in_order(
    isvc: InferenceService, expected: list[tuple[str, str]]
) -> None:
    assert _names(_plan(isvc).apply) == expected


@pytest.mark.parametrize(
    ("isvc", "config", "expected"),
    [
        pytest.param(
            _isvc(),
            OperatorConfig(pdb=PdbDefaults(raw_deployment=None)),
            _objects("engine", pdb=False) + ENTRY,
            id="without a default or a field, a RawDeployment component gets no budget",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            OperatorConfig(pdb=PdbDefaults(ome_native=None)),
            _objects("engine", "OMENative", pdb=False) + ENTRY,
            id="without a default or a field, an OMENative component gets no budget",
        ),
        pytest.param(
            _isvc(engine={"maxUnavailable": 1}),
            OperatorConfig(pdb=PdbDefaults(raw_deployment=None)),
            _objects("engine") + ENTRY,
            id="a component field gives a budget without a default",
        ),
    ],
)
def test_the_budget_follows_the_configuration(
    isvc: InferenceService, config: OperatorConfig, expected: list[tuple[str, str]]
) -> None:
    assert _names(_plan(isvc, config=config).apply) == expected


@pytest.mark.parametrize(
    ("isvc", "front"),
    [
        pytest.param(_isvc(), {"app": "svc-engine"}, id="the entry Service fronts the engine"),
        pytest.param(
            _isvc(decoder={}),
            {"app": "svc-engine"},
            id="a decoder does not take the entry Service from the engine",
        ),
        pytest.param(
            _isvc(decoder={}, router={}),
            {"app": "svc-router"},
            id="the entry Service fronts the router when one is declared",
        ),
    ],
)
def test_the_entry_service_fronts_the_router_else_the_engine(
    isvc: InferenceService, front: dict[str, str]
) -> None:
    entry_service = _plan(isvc).apply[-1]
    assert (_names([entry_service]), entry_service["spec"]["selector"]) == (ENTRY, front)


# --- deletion: the garbage collector's turn ----------------------------------------------------


def _deleting(**kwargs: Any) -> InferenceService:
    manifest = isvc_manifest(**kwargs)
    manifest["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return from_manifest(manifest)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing"),
    [
        pytest.param(_deleting(), (RT,), [], id="its workloads already collected: none re-created"),
        pytest.param(
            _deleting(),
            (RT,),
            [_deployment(observed_generation=1)],
            id="its workloads still there: nothing patched, no status",
        ),
        pytest.param(_deleting(), (), [], id="no runtime: no RuntimeNotFound event"),
        pytest.param(
            _deleting(annotations={MODE: "VirtualDeployment"}),
            (RT,),
            [],
            id="VirtualDeployment: no status either",
        ),
    ],
)
def test_an_inference_service_being_deleted_is_never_reconciled(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], existing: list[dict[str, Any]]
) -> None:
    assert _plan(isvc, runtimes, existing=existing) == ReconcilePlan(Outcome.PARKED)


# --- S3.5 / OPEN-10: VirtualDeployment --------------------------------------------------------

VIRTUAL = {MODE: "VirtualDeployment"}
VIRTUAL_READY = _cond(
    "Ready", "True", "VirtualDeployment", "InferenceService is in VirtualDeployment mode"
)
VIRTUAL_URL = "http://svc.default.svc.cluster.local"


@pytest.mark.parametrize(
    ("isvc", "config", "existing", "expected"),
    [
        pytest.param(
            _isvc(annotations=VIRTUAL),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="the URL is the cluster-local host and Ready is True, nothing else is written",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL),
            OperatorConfig(cluster_domain="example.org"),
            [],
            ReconcilePlan(
                Outcome.SUCCESS,
                status={"url": "http://svc.default.svc.example.org", "conditions": [VIRTUAL_READY]},
            ),
            id="the URL uses the configured cluster domain",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL, model="missing", runtime={"name": "missing"}),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="no model or runtime is looked up",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL, engine=None),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="no engine is required",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL),
            parse_operator_config({"deploy": "{"}),
            [],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="a configuration problem does not stall it",
        ),
        pytest.param(
            _isvc(annotations=VIRTUAL),
            CONFIG,
            [_deployment(), _deployment("decoder")],
            ReconcilePlan(
                Outcome.SUCCESS, status={"url": VIRTUAL_URL, "conditions": [VIRTUAL_READY]}
            ),
            id="existing workloads are left alone, undeclared components included",
        ),
        pytest.param(
            _isvc(
                annotations=VIRTUAL,
                status={
                    "conditions": [
                        _cond("EngineReady", "True", at=EARLIER),
                        _cond("Ready", "True", at=EARLIER),
                    ],
                    "url": "http://old",
                },
            ),
            CONFIG,
            [],
            ReconcilePlan(
                Outcome.SUCCESS,
                status={
                    "url": VIRTUAL_URL,
                    "conditions": [
                        _cond("EngineReady", "True", at=EARLIER),
                        _cond(
                            "Ready",
                            "True",
                            "VirtualDeployment",
                            "InferenceService is in VirtualDeployment mode",
                            at=EARLIER,
                        ),
                    ],
                },
            ),
            id="other conditions are kept and Ready keeps its transition time while True",
        ),
    ],
)
def test_virtual_deployment(
    isvc: InferenceService,
    config: OperatorConfig,
    existing: list[dict[str, Any]],
    expected: ReconcilePlan,
) -> None:
    assert _plan(isvc, existing=existing, config=config) == expected


def test_virtual_deployment_only_counts_as_the_exact_value() -> None:
    plan = _plan(_isvc(annotations={MODE: "virtualdeployment"}))
    assert (plan.outcome, _names(plan.apply)) == (Outcome.SUCCESS, _objects("engine") + ENTRY)


# --- passes that stop before any workload -----------------------------------------------------


def _log(message: str, *fields: tuple[str, Any]) -> LogRecord:
    return LogRecord(
        "error", message, (("namespace", "default"), ("inferenceService", "svc"), *fields)
    )


@pytest.mark.parametrize(
    ("isvc", "models", "config", "expected"),
    [
        # S3.7 / OPEN-11
        pytest.param(
            _isvc(engine=None, decoder={}, router={}),
            (LLAMA,),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                events=(Event("Warning", "DeploymentModeError", "engine component is required"),),
            ),
            id="no engine: a DeploymentModeError event and no workload at all",
        ),
        # S2.14
        pytest.param(
            _isvc(),
            (),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                logs=(
                    _log(
                        "Failed to get referenced ClusterBaseModel",
                        ("model", "llama"),
                        ("error", 'ClusterBaseModel "llama" not found'),
                    ),
                ),
            ),
            id="a missing ClusterBaseModel is only logged: no event, no status, no workload",
        ),
        pytest.param(
            _isvc(),
            (make_model("llama", cluster=False),),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                logs=(
                    _log(
                        "Failed to get referenced ClusterBaseModel",
                        ("model", "llama"),
                        ("error", 'ClusterBaseModel "llama" not found'),
                    ),
                ),
            ),
            id="a BaseModel does not stand in for a missing ClusterBaseModel",
        ),
        pytest.param(
            _isvc(model_kind="BaseModel"),
            (LLAMA,),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                logs=(
                    _log(
                        "Failed to get referenced BaseModel",
                        ("model", "llama"),
                        ("error", 'BaseModel "llama" not found'),
                    ),
                ),
            ),
            id="a missing BaseModel is only logged, even when a ClusterBaseModel has its name",
        ),
        pytest.param(
            _isvc(model_kind="BaseModel"),
            (make_model("llama", cluster=False, namespace="other"),),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                logs=(
                    _log(
                        "Failed to get referenced BaseModel",
                        ("model", "llama"),
                        ("error", 'BaseModel "llama" not found'),
                    ),
                ),
            ),
            id="a BaseModel in another namespace is not found",
        ),
        pytest.param(
            _isvc(),
            (make_model("llama", disabled=True),),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                events=(
                    Event(
                        "Warning", "ModelReconcileError", "specified base model llama is disabled"
                    ),
                ),
            ),
            id="a disabled ClusterBaseModel: a ModelReconcileError event and no workload",
        ),
        pytest.param(
            _isvc(model_kind="BaseModel"),
            (make_model("llama", cluster=False, disabled=True),),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                events=(
                    Event(
                        "Warning", "ModelReconcileError", "specified base model llama is disabled"
                    ),
                ),
            ),
            id="a disabled BaseModel: a ModelReconcileError event and no workload",
        ),
        # S1.10
        pytest.param(
            _isvc(),
            (LLAMA,),
            parse_operator_config({"deploy": '{"replicas": {"defaultMinReplicas": 0}}'}),
            ReconcilePlan(
                Outcome.ERROR,
                logs=(
                    _log("invalid deploy config, replicas.defaultMinReplicas must be > 0, got 0"),
                ),
            ),
            id="a replicas value below 1 stalls the reconcile with the exact log, no event",
        ),
        pytest.param(
            _isvc(),
            (LLAMA,),
            parse_operator_config({"deploy": '{"replicas": {"defaultMinReplicas": "1"}}'}),
            ReconcilePlan(Outcome.ERROR, logs=(_log("unable to parse deploy config json"),)),
            id="an unparsable deploy entry stalls the reconcile with the exact log, no event",
        ),
        pytest.param(
            _isvc(),
            (LLAMA,),
            parse_operator_config({"podDisruptionBudget": '{"rawDeployment": {}}'}),
            ReconcilePlan(
                Outcome.ERROR,
                logs=(
                    _log(
                        "fails to create InferenceServicesConfig: exactly one of "
                        "podDisruptionBudget.rawDeployment.minAvailable or "
                        "podDisruptionBudget.rawDeployment.maxUnavailable must be set"
                    ),
                ),
            ),
            id="a budget problem stops every workload write with the exact log, no event",
        ),
        # S7.2.1
        pytest.param(
            _isvc(model=None),
            (LLAMA,),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                logs=(_log("at least one of spec.model or spec.runtime must be set"),),
            ),
            id="neither model nor runtime (past the webhook) is logged with the webhook's text",
        ),
        # S2.2 / OPEN-33
        pytest.param(
            _isvc(),
            (make_model("llama", fmt=""),),
            CONFIG,
            ReconcilePlan(
                Outcome.ERROR,
                events=(Event("Warning", "RuntimeSelectionError", MODEL_FORMAT_REQUIRED),),
                decisions=Decisions(selection=("error", "none")),
            ),
            id="a model without a format name: RuntimeSelectionError, retried, no status",
        ),
        pytest.param(
            _isvc(),
            (make_model("llama", distribution="Sharded"),),
            CONFIG,
            ReconcilePlan(
                Outcome.ERROR,
                events=(Event("Warning", "RuntimeSelectionError", SHARDED),),
                decisions=Decisions(selection=("error", "none")),
            ),
            id="a Sharded model: RuntimeSelectionError, retried, no status",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            (make_model("llama", distribution="Sharded"),),
            CONFIG,
            ReconcilePlan(
                Outcome.ERROR,
                events=(Event("Warning", "RuntimeSelectionError", SHARDED),),
            ),
            id="a Sharded model fails a named runtime too",
        ),
        pytest.param(
            _isvc(
                status={
                    "conditions": [
                        _cond("RuntimeReady", "False", "RuntimeNotFound", "x", severity="Info")
                    ]
                }
            ),
            (make_model("llama", fmt=""),),
            CONFIG,
            ReconcilePlan(
                Outcome.ERROR,
                events=(Event("Warning", "RuntimeSelectionError", MODEL_FORMAT_REQUIRED),),
                decisions=Decisions(selection=("error", "none")),
            ),
            id="a model pre-check failure does not touch RuntimeReady",
        ),
    ],
)
def test_a_pass_that_stops_before_any_workload(
    isvc: InferenceService,
    models: tuple[ModelResource, ...],
    config: OperatorConfig,
    expected: ReconcilePlan,
) -> None:
    assert _plan(isvc, models=models, config=config) == expected


# --- S8.2 / S8.3 / OPEN-32: RuntimeReady when no runtime resolves -----------------------------

NOT_FOUND = "runtime nope not found in namespace default or at cluster scope"
NO_RUNTIME_DISABLED = (
    NO_RUNTIME + "default. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). "
    "Excluded runtimes: rt (runtime is disabled)"
)
SERVING = {
    "conditions": [
        _cond("EngineReady", "True", at=EARLIER),
        _cond("IngressReady", "True", "IngressDisabled", at=EARLIER),
        _cond("Ready", "True", at=EARLIER),
    ],
    "url": "http://svc.default.svc.cluster.local:8080",
    "observedGeneration": 2,
}


def _runtime_ready(message: str, *, at: str = NOW, status: str = "False") -> dict[str, Any]:
    reason = "RuntimeNotFound" if status == "False" else "RuntimeResolved"
    return _cond("RuntimeReady", status, reason, message, at=at, severity="Info")


def _not_found_event(message: str) -> tuple[Event, ...]:
    return (Event("Warning", "RuntimeNotFound", message),)


NAMED_NOT_FOUND = Decisions(named="not_found", runtime_unresolved=True)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "expected"),
    [
        pytest.param(
            _isvc(),
            (make_runtime("rt", disabled=True),),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NO_RUNTIME_DISABLED)]},
                events=_not_found_event(NO_RUNTIME_DISABLED),
                decisions=Decisions(
                    selection=("no_runtime", "none"),
                    exclusions=("disabled",),
                    runtime_unresolved=True,
                ),
            ),
            id="auto-selection finding nothing: RuntimeReady False with the S2.12 text, an event",
        ),
        pytest.param(
            _isvc(),
            (),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NO_RUNTIME + "default")]},
                events=_not_found_event(NO_RUNTIME + "default"),
                decisions=Decisions(selection=("no_runtime", "none"), runtime_unresolved=True),
            ),
            id="with no runtime at all the S2.12 text ends after the namespace",
        ),
        pytest.param(
            _isvc(runtime={"name": "nope"}),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a missing named runtime: RuntimeReady False with the S2.13.2 text and an event",
        ),
        pytest.param(
            _isvc(model=None, runtime={"name": "nope"}),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a missing named runtime is RuntimeNotFound without spec.model too",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt", "kind": "ServingRuntime"}),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={
                    "conditions": [
                        _runtime_ready("ServingRuntime rt not found in namespace default")
                    ]
                },
                events=_not_found_event("ServingRuntime rt not found in namespace default"),
                decisions=NAMED_NOT_FOUND,
            ),
            id="kind ServingRuntime looks only in the namespace and says so",
        ),
        pytest.param(
            _isvc(runtime={"name": "nope"}, status=SERVING),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={
                    **SERVING,
                    "conditions": [*SERVING["conditions"], _runtime_ready(NOT_FOUND)],
                },
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="only RuntimeReady is written: Ready and the rest of the status keep their values",
        ),
        pytest.param(
            _isvc(
                runtime={"name": "nope"},
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
            ),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
                decisions=NAMED_NOT_FOUND,
            ),
            id="no event again while RuntimeReady is already False with the same message",
        ),
        pytest.param(
            _isvc(
                runtime={"name": "nope"},
                status={"conditions": [_runtime_ready("an older text", at=EARLIER)]},
            ),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a new message is an event again but not a transition",
        ),
        pytest.param(
            _isvc(
                runtime={"name": "nope"},
                status={"conditions": [_runtime_ready("", status="True", at=EARLIER)]},
            ),
            (RT,),
            ReconcilePlan(
                Outcome.PARKED,
                status={"conditions": [_runtime_ready(NOT_FOUND)]},
                events=_not_found_event(NOT_FOUND),
                decisions=NAMED_NOT_FOUND,
            ),
            id="a transition from True is an event and a new transition time",
        ),
    ],
)
def test_runtime_not_found(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], expected: ReconcilePlan
) -> None:
    assert _plan(isvc, runtimes) == expected


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(
            _isvc(status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]}),
            _runtime_ready("", status="True"),
            id="a resolved runtime turns RuntimeReady True, RuntimeResolved, with no message",
        ),
        pytest.param(
            _isvc(
                runtime={"name": "rt"},
                status={"conditions": [_runtime_ready(NOT_FOUND, at=EARLIER)]},
            ),
            _runtime_ready("", status="True"),
            id="a named runtime that now exists resolves RuntimeReady too",
        ),
        pytest.param(
            _isvc(status={"conditions": [_runtime_ready("", status="True", at=EARLIER)]}),
            _runtime_ready("", status="True", at=EARLIER),
            id="a RuntimeReady already True keeps its transition time",
        ),
        pytest.param(
            _isvc(status=SERVING),
            None,
            id="RuntimeReady is not added when it never existed",
        ),
    ],
)
def test_runtime_resolved(isvc: InferenceService, expected: dict[str, Any] | None) -> None:
    plan = _plan(isvc)
    assert find_condition(plan.status["conditions"], "RuntimeReady") == expected


# --- S2.13.3 / S2.13.4 / S2.13.5: the named runtime ------------------------------------------


@pytest.mark.parametrize(
    ("isvc", "runtimes", "message"),
    [
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            (make_runtime("rt", disabled=True),),
            "cluster-scoped runtime rt is disabled",
            id="a disabled named ClusterServingRuntime: RuntimeValidationError",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt", "kind": "ServingRuntime"}),
            (make_runtime("rt", cluster=False, disabled=True),),
            "namespace-scoped runtime rt is disabled",
            id="a disabled named ServingRuntime: RuntimeValidationError",
        ),
        pytest.param(
            _isvc(model=None, runtime={"name": "rt"}),
            (make_runtime("rt", disabled=True),),
            "cluster-scoped runtime rt is disabled",
            id="a disabled named runtime is refused without spec.model too",
        ),
    ],
)
def test_a_disabled_named_runtime(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], message: str
) -> None:
    assert _plan(isvc, runtimes, existing=[_deployment()]) == ReconcilePlan(
        Outcome.PARKED,
        events=(Event("Warning", "RuntimeValidationError", message),),
        decisions=Decisions(named="disabled"),
    )


SEED_RUNTIME = _sample("clusterservingruntime-multinode.yaml")
SEED_MODEL = _sample("clusterbasemodel-llama-3-3-70b-instruct.yaml")
SEED_MANIFEST = yaml.safe_load((SAMPLES / "inferenceservice-llama-3-70b.yaml").read_text())


def _seed_isvc(**runtime: Any) -> InferenceService:
    manifest = {**SEED_MANIFEST, "spec": {**SEED_MANIFEST["spec"], "runtime": runtime}}
    return from_manifest(manifest)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "models", "events", "named"),
    [
        pytest.param(
            _seed_isvc(name="srt-llama-3-3-70b-instruct-multinode"),
            (SEED_RUNTIME,),
            (SEED_MODEL,),
            (Event("Warning", "RuntimeCompatibilityAdvisory", SEED_EVENT),),
            "advisory",
            id="the seed's named runtime is used with a RuntimeCompatibilityAdvisory event",
        ),
        pytest.param(
            _seed_isvc(name="srt-llama-3-3-70b-instruct-multinode", autoSync=False),
            (SEED_RUNTIME,),
            (SEED_MODEL,),
            (),
            "advisory",
            id="no advisory event when autoSync is false",
        ),
        pytest.param(
            _seed_isvc(name="srt-llama-3-3-70b-instruct-multinode", autoSync=True),
            (SEED_RUNTIME,),
            (SEED_MODEL,),
            (Event("Warning", "RuntimeCompatibilityAdvisory", SEED_EVENT),),
            "advisory",
            id="an explicit autoSync true keeps the advisory event",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            (RT,),
            (LLAMA,),
            (),
            "resolved",
            id="a named runtime that supports the model gives no event",
        ),
        pytest.param(
            _isvc(model=None, runtime={"name": "other"}),
            (make_runtime("other", formats=[entry("gguf", "llama.cpp")]),),
            (),
            (),
            "resolved",
            id="without spec.model a named runtime is not checked against any model",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            (make_runtime("rt", formats=[entry(autoSelect=False)]),),
            (LLAMA,),
            (),
            "resolved",
            id="autoSelect does not matter for a named runtime",
        ),
    ],
)
def test_a_named_runtime_is_used(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    models: tuple[ModelResource, ...],
    events: tuple[Event, ...],
    named: str,
) -> None:
    plan = _plan(isvc, runtimes, models)
    assert (plan.outcome, plan.events, plan.logs, plan.decisions.named) == (
        Outcome.SUCCESS,
        events,
        (),
        named,
    )
    assert plan.status["runtime"] == {
        "kind": runtimes[0].kind,
        "name": runtimes[0].name,
        "selection": "Explicit",
    }


# --- S2.11 / S2.14: the auto-selected runtime -------------------------------------------------


@pytest.mark.parametrize(
    ("runtimes", "models", "log"),
    [
        pytest.param(
            (RT,),
            (LLAMA,),
            _selected("rt", 2, cluster=True),
            id="the log names the runtime, its score and isCluster true for a CSR",
        ),
        pytest.param(
            (RT, make_runtime("local", cluster=False)),
            (LLAMA,),
            _selected("local", 2, cluster=False),
            id="a ServingRuntime in the namespace is logged with isCluster false",
        ),
        pytest.param(
            (make_runtime("rt", formats=[entry(autoSelect=True, priority=3)]),),
            (LLAMA,),
            _selected("rt", 6, cluster=True),
            id="the logged score is the ranking score",
        ),
        pytest.param(
            (RT, make_runtime("gguf", formats=[entry("gguf", autoSelect=True)])),
            (LLAMA, make_model("llama", cluster=False, fmt="gguf")),
            _selected("gguf", 2, cluster=True),
            id="a BaseModel of the same name supplies the data for kind ClusterBaseModel",
        ),
    ],
)
def test_the_selected_runtime_is_logged(
    runtimes: tuple[ServingRuntime, ...], models: tuple[ModelResource, ...], log: LogRecord
) -> None:
    plan = _plan(_isvc(), runtimes, models)
    assert (plan.outcome, plan.events, plan.logs) == (Outcome.SUCCESS, (), (log,))


# --- S6: component reconcile failures ---------------------------------------------------------

ROUTER_MULTINODE = make_runtime("rt", routerConfig=_annotated("MultiNode"))


@pytest.mark.parametrize(
    ("isvc", "runtimes", "lws", "applied", "log", "errors"),
    [
        pytest.param(
            _isvc(decoder={}, router={}),
            (ROUTER_MULTINODE,),
            True,
            _objects("engine") + _objects("decoder"),
            _failed("router", "invalid deployment mode for router"),
            (("router", "invalid_deployment_mode"),),
            id="a runtime's MultiNode router fails the router; engine and decoder are applied",
        ),
        pytest.param(
            _isvc(router=_annotated("VirtualDeployment")),
            (RT,),
            True,
            _objects("engine"),
            _failed("router", "invalid deployment mode for router"),
            (("router", "invalid_deployment_mode"),),
            id="a router annotated VirtualDeployment fails with the router text",
        ),
        pytest.param(
            _isvc(engine=_annotated("VirtualDeployment"), decoder={}),
            (RT,),
            True,
            [],
            _failed("engine", "invalid deployment mode for engine"),
            (("engine", "invalid_deployment_mode"),),
            id="an engine annotated VirtualDeployment fails and nothing is applied",
        ),
        pytest.param(
            _isvc(decoder=_annotated("VirtualDeployment"), router={}),
            (RT,),
            True,
            _objects("engine"),
            _failed("decoder", "invalid deployment mode for decoder"),
            (("decoder", "invalid_deployment_mode"),),
            id="a decoder failure keeps the router from being applied too",
        ),
        pytest.param(
            _isvc(engine=_annotated("MultiNode")),
            (RT,),
            False,
            [],
            _failed(
                "engine", "the LeaderWorkerSet CRD (leaderworkerset.x-k8s.io/v1) is not installed"
            ),
            (("engine", "other"),),
            id="MultiNode without the LeaderWorkerSet CRD fails the component",
        ),
        pytest.param(
            _isvc(decoder=_annotated("MultiNode")),
            (RT,),
            False,
            _objects("engine"),
            _failed(
                "decoder", "the LeaderWorkerSet CRD (leaderworkerset.x-k8s.io/v1) is not installed"
            ),
            (("decoder", "other"),),
            id="a missing LeaderWorkerSet CRD fails only the MultiNode component and later ones",
        ),
    ],
)
def test_a_component_failure(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    lws: bool,
    applied: list[tuple[str, str]],
    log: LogRecord,
    errors: tuple[tuple[str, str], ...],
) -> None:
    plan = _plan(isvc, runtimes, lws=lws)
    assert (
        plan.outcome,
        _names(plan.apply),
        plan.delete,
        plan.status,
        plan.events,
        plan.logs,
        plan.decisions,
    ) == (
        Outcome.ERROR,
        applied,
        (),
        None,
        (),
        (_selected(), log),
        Decisions(selection=("selected", "cluster"), component_errors=errors),
    )


def test_a_component_failure_records_no_event_not_even_the_advisory() -> None:
    runtime = make_runtime("rt", engineConfig=_annotated("OMENative"))
    isvc = _isvc(
        runtime={"name": "rt"}, deploymentMode="RawDeployment", router=_annotated("MultiNode")
    )
    plan = _plan(isvc, (runtime,))
    assert (plan.outcome, _names(plan.apply), plan.events, plan.status, plan.decisions) == (
        Outcome.ERROR,
        _objects("engine", "OMENative"),
        (),
        None,
        Decisions(named="advisory", component_errors=(("router", "invalid_deployment_mode"),)),
    )


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing", "applied", "component", "prefix", "reason"),
    [
        pytest.param(
            _isvc(),
            (RT,),
            [_pdb(RAW_SELECTOR, owner=None)],
            [],
            "engine",
            "failed to preflight engine PodDisruptionBudget",
            "pdb",
            id="a PodDisruptionBudget under the engine's name not created by OME fails the engine",
        ),
        pytest.param(
            _isvc(),
            (RT,),
            [_pdb(RAW_SELECTOR, owner="another")],
            [],
            "engine",
            "failed to preflight engine PodDisruptionBudget",
            "pdb",
            id="a PodDisruptionBudget controlled by another InferenceService is not OME's",
        ),
        pytest.param(
            _isvc(decoder={}),
            (RT,),
            [_pdb({"matchLabels": {"app": "svc-decoder"}}, "decoder", owner=None)],
            _objects("engine"),
            "decoder",
            "failed to preflight decoder PodDisruptionBudget",
            "pdb",
            id="a foreign PodDisruptionBudget under the decoder's name fails the decoder",
        ),
        pytest.param(
            _isvc(engine={"maxUnavailable": 1}),
            (make_runtime("rt", engineConfig={"minAvailable": 1}),),
            [],
            [],
            "engine",
            "failed to resolve engine PodDisruptionBudget",
            "pdb",
            id="a runtime budget field and the other ISVC field fail the component",
        ),
        pytest.param(
            _isvc(engine={"runner": {"image": "vllm:{{.Name"}}),
            (RT,),
            [],
            [],
            "engine",
            "failed to render placeholders in spec.engine.runner.image",
            "other",
            id="a malformed placeholder fails the component",
        ),
    ],
)
def test_a_component_failure_with_an_error_prefix(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    existing: list[dict[str, Any]],
    applied: list[tuple[str, str]],
    component: str,
    prefix: str,
    reason: str,
) -> None:
    plan = _plan(isvc, runtimes, existing=existing)
    *logs, failure = plan.logs
    *fields, (error_key, error) = failure.fields
    assert (
        plan.outcome,
        _names(plan.apply),
        plan.status,
        plan.events,
        logs,
        failure.message,
        fields,
        error_key,
        error.startswith(prefix + ":"),
        plan.decisions.component_errors,
    ) == (
        Outcome.ERROR,
        applied,
        None,
        (),
        [_selected()],
        "Failed to reconcile component",
        [("component", component), ("namespace", "default"), ("inferenceService", "svc")],
        "error",
        True,
        ((component, reason),),
    ), error


# --- S3.6: the PodDisruptionBudget across a mode change ---------------------------------------

NATIVE_ENGINE = _isvc(deploymentMode="OMENative")
MULTINODE_ENGINE = _isvc(engine=_annotated("MultiNode"))
NATIVE_OBJECTS = _objects("engine", "OMENative", pdb=False)


@pytest.mark.parametrize(
    ("isvc", "existing", "applied", "deleted"),
    [
        pytest.param(
            NATIVE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR)],
            NATIVE_OBJECTS + ENTRY,
            (),
            id="the old budget keeps protecting the old pods while the new workload is not ready",
        ),
        pytest.param(
            NATIVE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR), _replica(readyReplicas=1, servingReplicas=1)],
            _objects("engine", "OMENative") + ENTRY,
            (),
            id="the budget moves to the new pods once the new workload is ready",
        ),
        pytest.param(
            _isvc(),
            [_replica(readyReplicas=1), _pdb(NATIVE_SELECTOR), _deployment(available=UNAVAILABLE)],
            _objects("engine", pdb=False) + ENTRY,
            (),
            id="back to RawDeployment: the budget waits for the Deployment to be available",
        ),
        pytest.param(
            MULTINODE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR), _lws(available=None)],
            _objects("engine", "MultiNode", pdb=False) + ENTRY,
            (),
            id="to MultiNode: the old budget stays while the LeaderWorkerSet is not available",
        ),
        pytest.param(
            MULTINODE_ENGINE,
            [_deployment(), _pdb(RAW_SELECTOR), _lws()],
            _objects("engine", "MultiNode", pdb=False) + ENTRY,
            (_ref("PodDisruptionBudget", "svc-engine"),),
            id="to MultiNode: the budget is deleted once the LeaderWorkerSet is available",
        ),
        pytest.param(
            _isvc(),
            [_deployment(available=UNAVAILABLE), _pdb(RAW_SELECTOR)],
            _objects("engine") + ENTRY,
            (),
            id="without a mode change the budget is updated whatever the readiness",
        ),
        pytest.param(
            _isvc(),
            [_deployment(available=UNAVAILABLE), _pdb({"matchLabels": {"edited": "by-hand"}})],
            _objects("engine") + ENTRY,
            (),
            id="without a mode change a hand-edited selector is reset at once",
        ),
        pytest.param(
            _isvc(decoder={}, router=_annotated("MultiNode"), deploymentMode="OMENative"),
            [_deployment(), _pdb(RAW_SELECTOR)],
            NATIVE_OBJECTS + _objects("decoder", "OMENative"),
            (),
            id="the old budget is kept in a pass that fails on a later component",
        ),
    ],
)
def test_the_budget_across_a_mode_change(
    isvc: InferenceService,
    existing: list[dict[str, Any]],
    applied: list[tuple[str, str]],
    deleted: tuple[dict[str, Any], ...],
) -> None:
    plan = _plan(isvc, existing=existing)
    assert (_names(plan.apply), plan.delete) == (applied, deleted)


@pytest.mark.parametrize(
    "available",
    [
        pytest.param(AVAILABLE, id="a budget the mode no longer gets is deleted"),
        pytest.param(
            UNAVAILABLE,
            id="without a mode change a budget the mode no longer gets is deleted at once",
        ),
    ],
)
def test_a_budget_the_mode_no_longer_gets_is_deleted(available: tuple[str, str, str]) -> None:
    config = OperatorConfig(pdb=PdbDefaults(raw_deployment=None))
    existing = [_deployment(available=available), _pdb(RAW_SELECTOR)]
    plan = _plan(_isvc(), existing=existing, config=config)
    assert (_names(plan.apply), plan.delete) == (
        _objects("engine", pdb=False) + ENTRY,
        (_ref("PodDisruptionBudget", "svc-engine"),),
    )


def test_a_budget_moved_to_the_new_pods_carries_the_new_selector() -> None:
    existing = [_pdb(RAW_SELECTOR), _replica(readyReplicas=1, servingReplicas=1)]
    budget = next(
        o
        for o in _plan(NATIVE_ENGINE, existing=existing).apply
        if o["kind"] == "PodDisruptionBudget"
    )
    assert budget["spec"]["selector"] == NATIVE_SELECTOR


def _without_component_label(obj: dict[str, Any]) -> dict[str, Any]:
    del obj["metadata"]["labels"]["component"]
    return obj


# --- S3.7: orphans ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("isvc", "existing", "deleted"),
    [
        pytest.param(
            _isvc(),
            [
                _deployment("decoder"),
                _object("Service", "svc-decoder", "decoder"),
                _object("Service", "svc-router", "router"),
                _replica("router"),
            ],
            (
                _ref("Deployment", "svc-decoder"),
                _ref("InferenceReplica", "svc-router"),
                _ref("Service", "svc-decoder"),
                _ref("Service", "svc-router"),
            ),
            id="owned objects of components no longer declared are deleted",
        ),
        pytest.param(
            NATIVE_ENGINE,
            [_deployment(), _object("Service", "svc-engine")],
            (),
            id="the old workload of a still-declared component is not an orphan",
        ),
        pytest.param(
            _isvc(),
            [_object("Service", "svc-decoder", "decoder", owner=None)],
            (),
            id="an object not owned by the InferenceService is never deleted",
        ),
        pytest.param(
            _isvc(),
            [_object("Service", "svc-decoder", "decoder", isvc="other")],
            (),
            id="an object labelled for another InferenceService is not deleted",
        ),
        pytest.param(
            _isvc(),
            [_without_component_label(_object("Service", "svc-extra"))],
            (),
            id="an owned object without a component label is not an orphan",
        ),
    ],
)
def test_orphans(
    isvc: InferenceService, existing: list[dict[str, Any]], deleted: tuple[dict[str, Any], ...]
) -> None:
    assert _plan(isvc, existing=existing).delete == deleted


# --- S8.1 / OPEN-16 / OPEN-31: conditions -----------------------------------------------------


@pytest.mark.parametrize(
    ("isvc", "existing", "expected"),
    [
        pytest.param(
            _isvc(),
            [],
            [ENGINE_INITIALIZING, INGRESS, READY_INITIALIZING],
            id="before the Deployment exists the engine is Initializing and Ready copies it",
        ),
        pytest.param(
            _isvc(),
            [_deployment(available=None)],
            [ENGINE_INITIALIZING, INGRESS, READY_INITIALIZING],
            id="before the Deployment reports Available the engine is Initializing",
        ),
        pytest.param(
            _isvc(),
            [_deployment()],
            [_cond("EngineReady", *AVAILABLE), INGRESS, _cond("Ready", "True")],
            id="EngineReady mirrors an Available Deployment and Ready is True",
        ),
        pytest.param(
            _isvc(),
            [_deployment(available=UNAVAILABLE)],
            [
                _cond("EngineReady", *UNAVAILABLE),
                INGRESS,
                _cond("Ready", "False", *UNAVAILABLE[1:]),
            ],
            id="EngineReady mirrors an unavailable Deployment and Ready copies its reason",
        ),
        pytest.param(
            _isvc(decoder={}, router={}),
            [_deployment()],
            [
                _cond("DecoderReady", "False", "Initializing", "decoder component initializing"),
                _cond("EngineReady", *AVAILABLE),
                INGRESS,
                _cond("Ready", "True"),
                _cond("RouterReady", "False", "Initializing", "router component initializing"),
            ],
            id="Ready does not wait for the decoder or the router",
        ),
        pytest.param(
            _isvc(engine=_annotated("MultiNode")),
            [_lws(available=UNAVAILABLE)],
            [
                _cond("EngineReady", *UNAVAILABLE),
                INGRESS,
                _cond("Ready", "False", *UNAVAILABLE[1:]),
            ],
            id="a MultiNode engine mirrors the LeaderWorkerSet's Available",
        ),
        pytest.param(
            _isvc(engine=_annotated("MultiNode")),
            [_deployment()],
            [ENGINE_INITIALIZING, INGRESS, READY_INITIALIZING],
            id="after a mode change the old workload does not count",
        ),
        pytest.param(
            _isvc(
                status={
                    "conditions": [
                        _cond("DecoderReady", "True", at=EARLIER),
                        _cond("EngineReady", "False", "Initializing", "x", at=EARLIER),
                        _cond("IngressReady", "True", "IngressDisabled", at=EARLIER),
                        _cond("Ready", "False", "Initializing", "x", at=EARLIER),
                    ]
                }
            ),
            [_deployment()],
            [
                _cond("EngineReady", *AVAILABLE),
                _cond("IngressReady", "True", "IngressDisabled", at=EARLIER),
                _cond("Ready", "True"),
            ],
            id="transition times move only for changed statuses; an undeclared decoder's is gone",
        ),
        pytest.param(
            _isvc(
                status={
                    "conditions": [
                        _cond("EngineReady", "False", "Initializing", "x", at=EARLIER),
                        _cond("Ready", "False", "Initializing", "x", at=EARLIER),
                    ]
                }
            ),
            [_deployment(available=UNAVAILABLE)],
            [
                _cond("EngineReady", *UNAVAILABLE, at=EARLIER),
                INGRESS,
                _cond("Ready", "False", *UNAVAILABLE[1:], at=EARLIER),
            ],
            id="a new reason with the same status keeps the transition time",
        ),
    ],
)
def test_the_conditions_of_a_pass(
    isvc: InferenceService, existing: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> None:
    assert _plan(isvc, existing=existing).status["conditions"] == expected


def _native(**engine: Any) -> InferenceService:
    return _isvc(deploymentMode="OMENative", engine=engine)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "replica", "expected"),
    [
        pytest.param(
            _native(minReplicas=2),
            (RT,),
            _replica(replicas=2, readyReplicas=2, servingReplicas=2),
            ("True", "Ready", "All Instances are Ready"),
            id="Ready when every desired Instance is ready",
        ),
        pytest.param(
            _native(
                minReplicas=2,
                lifecycle={"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}},
            ),
            (RT,),
            _replica(replicas=2, readyReplicas=1, servingReplicas=1),
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="MinimumAvailable counts the ISVC lifecycle's maxUnavailable",
        ),
        pytest.param(
            _native(minReplicas=2),
            (
                make_runtime(
                    "rt",
                    engineConfig={
                        "lifecycle": {
                            "updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%"}}
                        }
                    },
                ),
            ),
            _replica(replicas=2, readyReplicas=1, servingReplicas=1),
            ("True", "MinimumAvailable", "1/2 Instances serving (min 1)"),
            id="a runtime's lifecycle reaches the component through the merge",
        ),
        pytest.param(
            _native(minReplicas=2),
            (RT,),
            _replica(replicas=2, readyReplicas=1, servingReplicas=1),
            ("False", "InsufficientAvailable", "1/2 Instances serving, need 2"),
            id="InsufficientAvailable below the minimum",
        ),
        pytest.param(
            _native(minReplicas=0),
            (RT,),
            _replica(replicas=1, readyReplicas=1, servingReplicas=1),
            ("True", "Ready", "All Instances are Ready"),
            id="minReplicas 0 still desires one Instance",
        ),
    ],
)
def test_an_omenative_engine_condition(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    replica: dict[str, Any],
    expected: tuple[str, str, str],
) -> None:
    conditions = _plan(isvc, runtimes, existing=[replica]).status["conditions"]
    assert find_condition(conditions, "EngineReady") == _cond("EngineReady", *expected)


# --- S16.4 / S5.2 / S5.4.10 / OPEN-41: the rest of the status ---------------------------------

RAW_TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "svc-engine"}
NATIVE_TARGET = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "name": "svc-engine"}
ENGINE_URL = "http://svc-engine.default.svc.cluster.local"
REPLICA_STATUS = {
    "observedGeneration": 7,
    "replicas": 1,
    "readyReplicas": 1,
    "servingReplicas": 1,
    "availableReplicas": 1,
    "updatedReplicas": 1,
    "updatedReadyReplicas": 1,
    "currentRevision": "abcd1234",
    "updateRevision": "abcd1234",
    "conditions": [{"type": "Ready", "status": "True", "reason": "AllInstancesReady"}],
}


@pytest.mark.parametrize(
    ("isvc", "runtimes", "existing", "expected"),
    [
        pytest.param(
            _isvc(),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "scaleTargetRef": RAW_TARGET,
                }
            },
            id="a RawDeployment component has its Deployment as scale target and no URL yet",
        ),
        pytest.param(
            _isvc(),
            (RT,),
            [_deployment()],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "Default",
                    "url": ENGINE_URL,
                    "scaleTargetRef": RAW_TARGET,
                }
            },
            id="the component URL appears once the component is ready",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ServiceSpec",
                    "lifecycle": {},
                    "scaleTargetRef": NATIVE_TARGET,
                }
            },
            id="an OMENative component targets its InferenceReplica and has an empty lifecycle",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative"),
            (RT,),
            [_replica(**REPLICA_STATUS)],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ServiceSpec",
                    "url": ENGINE_URL,
                    "lifecycle": {
                        "replicas": 1,
                        "readyReplicas": 1,
                        "servingReplicas": 1,
                        "availableReplicas": 1,
                        "updatedReplicas": 1,
                        "updatedReadyReplicas": 1,
                        "currentRevision": "abcd1234",
                        "updateRevision": "abcd1234",
                        "conditions": REPLICA_STATUS["conditions"],
                    },
                    "scaleTargetRef": NATIVE_TARGET,
                }
            },
            id="an OMENative lifecycle mirrors the InferenceReplica's counts and conditions",
        ),
        pytest.param(
            _isvc(engine={"worker": {"size": 2}}),
            (RT,),
            [_replica(**REPLICA_STATUS)],
            {
                "engine": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "LeaderWorkerShape",
                    "url": ENGINE_URL,
                    "lifecycle": {
                        "replicas": 1,
                        "readyReplicas": 1,
                        "servingReplicas": 1,
                        "availableReplicas": 1,
                        "updatedReplicas": 1,
                        "updatedReadyReplicas": 1,
                        "currentRevision": "abcd1234",
                        "updateRevision": "abcd1234",
                        "conditions": REPLICA_STATUS["conditions"],
                    },
                    "scaleTargetRef": NATIVE_TARGET,
                }
            },
            id="a leader/worker shape is recorded as the mode source",
        ),
        pytest.param(
            _isvc(),
            (make_runtime("rt", engineConfig=_annotated("MultiNode")),),
            [_lws()],
            {
                "engine": {
                    "deploymentMode": "MultiNode",
                    "deploymentModeSource": "ComponentAnnotation",
                    "url": ENGINE_URL,
                }
            },
            id="a MultiNode component has no scale target; the runtime annotation is its source",
        ),
        pytest.param(
            _isvc(decoder={}, router=_annotated("OMENative"), deploymentMode="RawDeployment"),
            (RT,),
            [],
            {
                "engine": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ServiceSpec",
                    "scaleTargetRef": RAW_TARGET,
                },
                "decoder": {
                    "deploymentMode": "RawDeployment",
                    "deploymentModeSource": "ServiceSpec",
                    "scaleTargetRef": {**RAW_TARGET, "name": "svc-decoder"},
                },
                "router": {
                    "deploymentMode": "OMENative",
                    "deploymentModeSource": "ComponentAnnotation",
                    "lifecycle": {},
                    "scaleTargetRef": {**NATIVE_TARGET, "name": "svc-router"},
                },
            },
            id="every declared component is reported with its own mode and source",
        ),
    ],
)
def test_the_component_status(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    existing: list[dict[str, Any]],
    expected: dict[str, Any],
) -> None:
    assert _plan(isvc, runtimes, existing=existing).status["components"] == expected


@pytest.mark.parametrize(
    ("isvc", "runtimes", "expected"),
    [
        pytest.param(
            _isvc(),
            (RT,),
            {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Selected"},
            id="an auto-selected ClusterServingRuntime is recorded as Selected",
        ),
        pytest.param(
            _isvc(),
            (make_runtime("local", cluster=False),),
            {"kind": "ServingRuntime", "name": "local", "selection": "Selected"},
            id="an auto-selected ServingRuntime is recorded with its kind",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}),
            (RT,),
            {"kind": "ClusterServingRuntime", "name": "rt", "selection": "Explicit"},
            id="a named runtime is recorded as Explicit",
        ),
        pytest.param(
            _isvc(runtime={"name": "local"}),
            (make_runtime("local", cluster=False),),
            {"kind": "ServingRuntime", "name": "local", "selection": "Explicit"},
            id="a default-kind name found as a ServingRuntime is recorded as a ServingRuntime",
        ),
    ],
)
def test_the_runtime_status(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], expected: dict[str, str]
) -> None:
    assert _plan(isvc, runtimes).status["runtime"] == expected


@pytest.mark.parametrize(
    ("isvc", "existing", "expected"),
    [
        pytest.param(
            _isvc(generation=2),
            [_deployment(observed_generation=4)],
            2,
            id="observedGeneration is the InferenceService generation, not the Deployment's",
        ),
        pytest.param(
            _isvc(generation=5, deploymentMode="OMENative", decoder=_annotated("RawDeployment")),
            [_replica(observedGeneration=9), _deployment("decoder", observed_generation=1)],
            5,
            id="every mode sets it",
        ),
        pytest.param(
            _isvc(generation=1, status={"observedGeneration": 3}),
            [],
            1,
            id="it is set before any workload exists",
        ),
        pytest.param(
            _isvc(status={"observedGeneration": 3}),
            [],
            None,
            id="a manifest without a generation removes an old value",
        ),
    ],
)
def test_the_observed_generation(
    isvc: InferenceService, existing: list[dict[str, Any]], expected: int | None
) -> None:
    assert _plan(isvc, existing=existing).status.get("observedGeneration") == expected


# --- S10: decisions recorded for the metrics --------------------------------------------------


@pytest.mark.parametrize(
    ("isvc", "runtimes", "models", "expected"),
    [
        pytest.param(
            _isvc(),
            (RT, make_runtime("off", disabled=True), make_runtime("big", size_range=("1B", "2B"))),
            (make_model("llama", modelParameterSize="7B"),),
            Decisions(
                selection=("selected", "cluster"),
                exclusions=("model_size", "disabled"),
                modes=(("engine", "RawDeployment"),),
            ),
            id="auto-selection records its outcome, scope and each exclusion's check",
        ),
        pytest.param(
            _isvc(),
            (make_runtime("local", cluster=False),),
            (LLAMA,),
            Decisions(selection=("selected", "namespaced"), modes=(("engine", "RawDeployment"),)),
            id="a ServingRuntime is the namespaced scope",
        ),
        pytest.param(
            _isvc(),
            (make_runtime("rt", formats=[entry()]),),
            (LLAMA,),
            Decisions(selection=("no_runtime", "none"), runtime_unresolved=True),
            id="a runtime that supports the model but does not qualify is not an exclusion",
        ),
        pytest.param(
            _isvc(deploymentMode="OMENative", decoder={}, router=_annotated("RawDeployment")),
            (RT,),
            (LLAMA,),
            Decisions(
                selection=("selected", "cluster"),
                modes=(
                    ("engine", "OMENative"),
                    ("decoder", "OMENative"),
                    ("router", "RawDeployment"),
                ),
            ),
            id="each declared component's resolved mode is recorded in reconcile order",
        ),
        pytest.param(
            _isvc(runtime={"name": "rt"}, deploymentMode="RawDeployment"),
            (make_runtime("rt", engineConfig=_annotated("OMENative")),),
            (LLAMA,),
            Decisions(named="advisory", modes=(("engine", "OMENative"),)),
            id="a named runtime used despite an advisory records advisory",
        ),
    ],
)
def test_the_decisions_of_a_pass(
    isvc: InferenceService,
    runtimes: tuple[ServingRuntime, ...],
    models: tuple[ModelResource, ...],
    expected: Decisions,
) -> None:
    assert _plan(isvc, runtimes, models).decisions == expected
