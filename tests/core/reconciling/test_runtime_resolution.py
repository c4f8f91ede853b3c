"""The runtime a pass uses: a named runtime (SPEC S2.13.3–S2.13.5: refused when disabled, used
with a RuntimeCompatibilityAdvisory when it does not declare the model) and an auto-selected one
(S2.11, S2.14: logged with its score and scope)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from ome_operator.core.reconciling import Decisions, Event, LogRecord, Outcome, ReconcilePlan
from ome_operator.models import InferenceService, ModelResource, ServingRuntime, from_manifest
from tests.builders import entry, make_model, make_runtime
from tests.core.reconciling.plans import LLAMA, RT, deployment_of, isvc_of, plan_of, selected_record

SAMPLES = pathlib.Path(__file__).resolve().parents[3] / "manifests" / "samples"

SEED_EVENT = (
    "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model "
    "llama-3-3-70b-instruct (runtime srt-llama-3-3-70b-instruct-multinode does not support model "
    ": runtime engine deployment mode MultiNode does not match requested engine deployment mode "
    "OMENative); proceeding because the runtime was named explicitly"
)


def _sample(name: str, **changes: Any) -> Any:
    raw = yaml.safe_load((SAMPLES / name).read_text())
    raw["spec"].update(changes)
    return from_manifest(raw)


@pytest.mark.parametrize(
    ("isvc", "runtimes", "message"),
    [
        pytest.param(
            isvc_of(runtime={"name": "rt"}),
            (make_runtime("rt", disabled=True),),
            "cluster-scoped runtime rt is disabled",
            id="a disabled named ClusterServingRuntime: RuntimeValidationError",
        ),
        pytest.param(
            isvc_of(runtime={"name": "rt", "kind": "ServingRuntime"}),
            (make_runtime("rt", cluster=False, disabled=True),),
            "namespace-scoped runtime rt is disabled",
            id="a disabled named ServingRuntime: RuntimeValidationError",
        ),
        pytest.param(
            isvc_of(model=None, runtime={"name": "rt"}),
            (make_runtime("rt", disabled=True),),
            "cluster-scoped runtime rt is disabled",
            id="a disabled named runtime is refused without spec.model too",
        ),
    ],
)
def test_a_disabled_named_runtime(
    isvc: InferenceService, runtimes: tuple[ServingRuntime, ...], message: str
) -> None:
    assert plan_of(isvc, runtimes, existing=[deployment_of()]) == ReconcilePlan(
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
            isvc_of(runtime={"name": "rt"}),
            (RT,),
            (LLAMA,),
            (),
            "resolved",
            id="a named runtime that supports the model gives no event",
        ),
        pytest.param(
            isvc_of(model=None, runtime={"name": "other"}),
            (make_runtime("other", formats=[entry("gguf", "llama.cpp")]),),
            (),
            (),
            "resolved",
            id="without spec.model a named runtime is not checked against any model",
        ),
        pytest.param(
            isvc_of(runtime={"name": "rt"}),
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
    plan = plan_of(isvc, runtimes, models)
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


@pytest.mark.parametrize(
    ("runtimes", "models", "log"),
    [
        pytest.param(
            (RT,),
            (LLAMA,),
            selected_record("rt", 2, cluster=True),
            id="the log names the runtime, its score and isCluster true for a CSR",
        ),
        pytest.param(
            (RT, make_runtime("local", cluster=False)),
            (LLAMA,),
            selected_record("local", 2, cluster=False),
            id="a ServingRuntime in the namespace is logged with isCluster false",
        ),
        pytest.param(
            (make_runtime("rt", formats=[entry(autoSelect=True, priority=3)]),),
            (LLAMA,),
            selected_record("rt", 6, cluster=True),
            id="the logged score is the ranking score",
        ),
        pytest.param(
            (RT, make_runtime("gguf", formats=[entry("gguf", autoSelect=True)])),
            (LLAMA, make_model("llama", cluster=False, fmt="gguf")),
            selected_record("gguf", 2, cluster=True),
            id="a BaseModel of the same name supplies the data for kind ClusterBaseModel",
        ),
    ],
)
def test_the_selected_runtime_is_logged(
    runtimes: tuple[ServingRuntime, ...], models: tuple[ModelResource, ...], log: LogRecord
) -> None:
    plan = plan_of(isvc_of(), runtimes, models)
    assert (plan.outcome, plan.events, plan.logs) == (Outcome.SUCCESS, (), (log,))
