"""Passes that stop before any workload (docs/troubleshooting.md): no engine, a missing or
disabled model, a bad operator configuration, no model and no runtime, a model that fails the
runtime-selection pre-checks; what each one logs, posts, writes on the status and whether it is
retried."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.core.reconciling import Decisions, Event, LogRecord, Outcome, ReconcilePlan
from ome_operator.models import InferenceService, ModelResource
from tests.builders import make_model
from tests.core.reconciling.plans import CONFIG, EARLIER, LLAMA, condition_of, isvc_of, plan_of

MODEL_FORMAT_REQUIRED = (
    "Failed to find runtime for model llama: invalid model specification: modelFormat.name: "
    "model format name is required"
)
SHARDED = (
    "Failed to find runtime for model llama: model llama uses distribution Sharded: no model "
    "cache provider is configured for sharded model loading"
)


ADVICE = (
    "; models are not watched: once it is fixed, change this InferenceService (or a runtime) "
    "to reconcile it"
)


def _log(message: str, *fields: tuple[str, Any]) -> LogRecord:
    return LogRecord(
        "error", message, (("namespace", "default"), ("inferenceService", "svc"), *fields)
    )


def _model_not_found(kind: str, said: str, kept: dict[str, Any] | None = None) -> ReconcilePlan:
    """A pass parked on a missing model: its log line, ``Ready=False`` ``ModelNotFound`` (merged
    into the ``kept`` status) and a Warning event, both saying ``said`` and how the pass comes
    again (models are not watched)."""
    message = f"{said}{ADVICE}"
    kept = kept or {}
    ready = condition_of("Ready", "False", "ModelNotFound", message)
    conditions = sorted([*kept.get("conditions", []), ready], key=lambda c: c["type"])
    return ReconcilePlan(
        Outcome.PARKED,
        status={**kept, "conditions": conditions},
        events=(Event("Warning", "ModelNotFound", message),),
        logs=(
            _log(
                f"Failed to get referenced {kind}",
                ("model", "llama"),
                ("error", f'{kind} "llama" not found'),
            ),
        ),
    )


@pytest.mark.parametrize(
    ("isvc", "models", "config", "expected"),
    [
        # S3.7 / OPEN-11
        pytest.param(
            isvc_of(engine=None, decoder={}, router={}),
            (LLAMA,),
            CONFIG,
            ReconcilePlan(
                Outcome.PARKED,
                events=(Event("Warning", "DeploymentModeError", "engine component is required"),),
            ),
            id="no engine: a DeploymentModeError event and no workload at all",
        ),
        # A missing model: no silent stop, Ready False, ModelNotFound, and its Warning event
        pytest.param(
            isvc_of(),
            (),
            CONFIG,
            _model_not_found("ClusterBaseModel", 'ClusterBaseModel "llama" not found'),
            id="a missing ClusterBaseModel: logged, Ready False and an event ModelNotFound",
        ),
        pytest.param(
            isvc_of(),
            (make_model("llama", cluster=False),),
            CONFIG,
            _model_not_found(
                "ClusterBaseModel",
                'ClusterBaseModel "llama" not found; a BaseModel "llama" is in namespace default: '
                "set spec.model.kind to BaseModel to use it",
            ),
            id="a BaseModel does not stand in for a missing ClusterBaseModel, but is named",
        ),
        pytest.param(
            isvc_of(model_kind="BaseModel"),
            (LLAMA,),
            CONFIG,
            _model_not_found(
                "BaseModel",
                'BaseModel "llama" not found in namespace default; a ClusterBaseModel "llama" '
                "exists: set spec.model.kind to ClusterBaseModel to use it",
            ),
            id="a missing BaseModel names the ClusterBaseModel that has its name",
        ),
        pytest.param(
            isvc_of(model_kind="BaseModel"),
            (make_model("llama", cluster=False, namespace="other"),),
            CONFIG,
            _model_not_found("BaseModel", 'BaseModel "llama" not found in namespace default'),
            id="a BaseModel in another namespace is not found and not named",
        ),
        pytest.param(
            isvc_of(
                status={
                    "conditions": [
                        condition_of("EngineReady", "True", at=EARLIER),
                        condition_of("Ready", "True", at=EARLIER),
                    ],
                    "url": "http://svc.default.svc.cluster.local:8080",
                }
            ),
            (),
            CONFIG,
            _model_not_found(
                "ClusterBaseModel",
                'ClusterBaseModel "llama" not found',
                kept={
                    "conditions": [condition_of("EngineReady", "True", at=EARLIER)],
                    "url": "http://svc.default.svc.cluster.local:8080",
                },
            ),
            id="a model deleted under a ready InferenceService turns only Ready False",
        ),
        pytest.param(
            isvc_of(),
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
            isvc_of(model_kind="BaseModel"),
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
            isvc_of(),
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
            isvc_of(),
            (LLAMA,),
            parse_operator_config({"deploy": '{"replicas": {"defaultMinReplicas": "1"}}'}),
            ReconcilePlan(Outcome.ERROR, logs=(_log("unable to parse deploy config json"),)),
            id="an unparsable deploy entry stalls the reconcile with the exact log, no event",
        ),
        pytest.param(
            isvc_of(),
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
            isvc_of(model=None),
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
            isvc_of(),
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
            isvc_of(),
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
            isvc_of(runtime={"name": "rt"}),
            (make_model("llama", distribution="Sharded"),),
            CONFIG,
            ReconcilePlan(
                Outcome.ERROR,
                events=(Event("Warning", "RuntimeSelectionError", SHARDED),),
            ),
            id="a Sharded model fails a named runtime too",
        ),
        pytest.param(
            isvc_of(
                status={
                    "conditions": [
                        condition_of(
                            "RuntimeReady", "False", "RuntimeNotFound", "x", severity="Info"
                        )
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
    assert plan_of(isvc, models=models, config=config) == expected
