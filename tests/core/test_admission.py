"""Rules of the admission webhook (SPEC S7.2–S7.4, S16.3): the first denial, then every warning."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ome_operator.core import admission
from ome_operator.core.admission import (
    AdmissionVerdict,
    SelectionOutcome,
    mode_typo_warnings,
    review_inference_service,
    review_serving_runtime,
)
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import InferenceService, ModelResource, ServingRuntime, from_manifest
from tests.builders import entry, make_isvc, make_model, make_runtime, runtime_manifest

MODE = "ome.io/deploymentMode"
LLAMA = make_model("llama")
RT = make_runtime("rt")
MODELS = (LLAMA,)
RUNTIMES = (RT,)

#: An engine whose runner is complete, so auto-selection is left to the controller (S7.2.6).
COMPLETE = {"runner": {"image": "vllm:1"}}
AUTO = "Runtime rt will be auto-selected for model llama"
NO_SUPPORT = (
    "no supporting runtime found for model llama and engine does not have complete runner "
    "configuration: "
)
NOT_FOUND = "no runtime found to support model safetensors with format safetensors in namespace "
ONE_CSR = ". Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)"
VALID_MODES = "valid values are RawDeployment, OMENative, MultiNode, VirtualDeployment"


def _denied(message: str, *warnings: str) -> AdmissionVerdict:
    return AdmissionVerdict(False, message, warnings)


def _allowed(*warnings: str) -> AdmissionVerdict:
    return AdmissionVerdict(True, "", warnings)


def _strategy(component: str, mode: str) -> str:
    return (
        f'{component}.deploymentStrategy is set but deploymentMode is "{mode}"; '
        "deploymentStrategy applies only to RawDeployment and is ignored here \u2014 use "
        f"{component}.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
    )


def _typo(value: str, place: str, suggestion: str | None = None) -> str:
    text = f'{MODE} "{value}" on {place} is not a deployment mode and is ignored; {VALID_MODES}'
    return text + (f"; did you mean {suggestion}?" if suggestion else "")


def _review(
    isvc: InferenceService,
    models: Sequence[ModelResource] = MODELS,
    runtimes: Sequence[ServingRuntime] = RUNTIMES,
) -> AdmissionVerdict:
    return review_inference_service(isvc, ModelCatalog.of(models), RuntimeCatalog.of(runtimes))


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(admission.__all__) == [
        "AdmissionDenied",
        "AdmissionVerdict",
        "MAX_REPLICAS",
        "SelectionOutcome",
        "mode_typo_warnings",
        "replica_range_problem",
        "review_inference_service",
        "review_serving_runtime",
    ]


# Names the objects of an InferenceService are made from ----------------------------------------

_TOO_LONG = (
    "metadata.name must be no more than 63 characters (got {}): it is the value of the "
    "ome.io/inferenceservice label on every object the InferenceService owns"
)


def _not_a_label(name: str) -> str:
    return (
        f'metadata.name "{name}" must be a DNS-1035 label (lower case letters, digits and '
        "'-', starting with a letter and ending with a letter or digit): it names the "
        "InferenceService's Services"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("a" * 63, _allowed(AUTO), id="63 characters are a label value"),
        pytest.param("a" * 64, _denied(_TOO_LONG.format(64)), id="64 characters are not"),
        pytest.param("llama-3-70b", _allowed(AUTO), id="letters, digits and dashes"),
        pytest.param("3b-llama", _denied(_not_a_label("3b-llama")), id="starts with a digit"),
        pytest.param("llama.v2", _denied(_not_a_label("llama.v2")), id="a dot: no Service name"),
        pytest.param("llama-", _denied(_not_a_label("llama-")), id="ends with a dash"),
        pytest.param(
            "x" * 70 + ".v2",
            _denied(_TOO_LONG.format(73)),
            id="the length is checked first",
        ),
    ],
)
def test_the_name_must_make_valid_object_names_and_label_values(
    name: str, expected: AdmissionVerdict
) -> None:
    assert _review(make_isvc(name)) == expected


def test_the_name_is_checked_before_every_other_rule() -> None:
    assert _review(make_isvc("3b", model=None)) == _denied(_not_a_label("3b"))


# S7.2: InferenceService denials, in order (OPEN-25) ---------------------------------------------


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        # 1. model or runtime
        pytest.param(
            make_isvc(model=None),
            MODELS,
            RUNTIMES,
            _denied("at least one of spec.model or spec.runtime must be set"),
            id="1: neither spec.model nor spec.runtime is denied",
        ),
        pytest.param(
            make_isvc(model=None, engine={"minAvailable": 1, "maxUnavailable": 1, "leader": {}}),
            MODELS,
            RUNTIMES,
            _denied("at least one of spec.model or spec.runtime must be set"),
            id="1: the model-or-runtime denial comes before every later one",
        ),
        pytest.param(
            make_isvc(model=None, runtime={"name": "rt"}),
            MODELS,
            RUNTIMES,
            _allowed(),
            id="1: spec.runtime alone is enough",
        ),
        # 2. PDB fields
        pytest.param(
            make_isvc(engine={"minAvailable": 1, "maxUnavailable": 1}),
            MODELS,
            RUNTIMES,
            _denied("spec.engine.minAvailable and spec.engine.maxUnavailable cannot both be set"),
            id="2: engine minAvailable and maxUnavailable together are denied",
        ),
        pytest.param(
            make_isvc(decoder={"minAvailable": "50%", "maxUnavailable": 0}),
            MODELS,
            RUNTIMES,
            _denied("spec.decoder.minAvailable and spec.decoder.maxUnavailable cannot both be set"),
            id="2: decoder minAvailable and maxUnavailable together are denied",
        ),
        pytest.param(
            make_isvc(router={"minAvailable": 0, "maxUnavailable": "0%"}),
            MODELS,
            RUNTIMES,
            _denied("spec.router.minAvailable and spec.router.maxUnavailable cannot both be set"),
            id="2: router minAvailable and maxUnavailable together are denied",
        ),
        pytest.param(
            make_isvc(engine={"minAvailable": -1}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.engine.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a negative integer is denied",
        ),
        pytest.param(
            make_isvc(engine={"maxUnavailable": "101%"}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.engine.maxUnavailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a percentage above 100% is denied",
        ),
        pytest.param(
            make_isvc(router={"maxUnavailable": "12.5%"}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.router.maxUnavailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a fractional percentage is denied",
        ),
        pytest.param(
            make_isvc(decoder={"minAvailable": "one"}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.decoder.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a string that is not a percentage is denied",
        ),
        pytest.param(
            make_isvc(engine={"minAvailable": "-5%"}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.engine.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: a negative percentage is denied",
        ),
        pytest.param(
            make_isvc(
                engine={"minAvailable": 0},
                decoder={"maxUnavailable": "100%"},
                router={"minAvailable": "0%"},
            ),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="2: 0, 0% and 100% are valid PDB values",
        ),
        pytest.param(
            make_isvc(
                engine={"minAvailable": "x"}, decoder={"minAvailable": 1, "maxUnavailable": 1}
            ),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.engine.minAvailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: components are checked in engine, decoder, router order",
        ),
        pytest.param(
            make_isvc(engine={"maxUnavailable": -1, "leader": {}}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.engine.maxUnavailable must be a non-negative integer or a percentage from "
                "0% to 100%"
            ),
            id="2: the PDB denial comes before the leader/worker pairing",
        ),
        # 3. leader/worker pairing
        pytest.param(
            make_isvc(engine={"leader": {}}),
            MODELS,
            RUNTIMES,
            _denied(
                "InvalidLeaderWorkerPairing: engine declares leader without worker; "
                "declare both or neither"
            ),
            id="3: an engine leader without worker is denied",
        ),
        pytest.param(
            make_isvc(engine={"worker": {"size": 1}}),
            MODELS,
            RUNTIMES,
            _denied(
                "InvalidLeaderWorkerPairing: engine declares worker without leader; "
                "declare both or neither"
            ),
            id="3: an engine worker without leader is denied",
        ),
        pytest.param(
            make_isvc(decoder={"leader": {"runner": {"image": "x"}}}),
            MODELS,
            RUNTIMES,
            _denied(
                "InvalidLeaderWorkerPairing: decoder declares leader without worker; "
                "declare both or neither"
            ),
            id="3: a decoder leader without worker is denied",
        ),
        pytest.param(
            make_isvc(engine={"leader": {}, "worker": {}}),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="3: an engine declaring both leader and worker passes",
        ),
        pytest.param(
            make_isvc(
                engine={"leader": {}, "annotations": {MODE: "OMENative"}},
                decoder={},
            ),
            MODELS,
            RUNTIMES,
            _denied(
                "InvalidLeaderWorkerPairing: engine declares leader without worker; "
                "declare both or neither"
            ),
            id="3: the pairing denial comes before the mode combination",
        ),
        # 4. mode combination
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}, decoder={}),
            MODELS,
            RUNTIMES,
            _denied(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode=""; when either is OMENative, both must use the '
                "same value"
            ),
            id="4: an OMENative engine with a decoder declaring no mode is denied",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                decoder={"annotations": {MODE: "RawDeployment"}},
            ),
            MODELS,
            RUNTIMES,
            _denied(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode="RawDeployment"; when either is OMENative, both '
                "must use the same value"
            ),
            id="4: spec.deploymentMode is the mode of a component without its own annotation",
        ),
        pytest.param(
            make_isvc(
                engine={"annotations": {MODE: "omenative"}},
                decoder={"annotations": {MODE: "OMENative"}},
            ),
            MODELS,
            RUNTIMES,
            _denied(
                'InvalidDeploymentModeCombination: engine deploymentMode="" does not match '
                'decoder deploymentMode="OMENative"; when either is OMENative, both must use the '
                "same value",
                _typo("omenative", "spec.engine.annotations", "OMENative"),
            ),
            id="4: an invalid annotation value counts as no mode (OPEN-27)",
        ),
        pytest.param(
            make_isvc(
                engine={"annotations": {MODE: "RawDeployment"}},
                decoder={"annotations": {MODE: "MultiNode"}},
            ),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="4: different modes pass when neither is OMENative",
        ),
        pytest.param(
            make_isvc(deploymentMode="OMENative", decoder={}),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="4: the same OMENative mode on both passes",
        ),
        pytest.param(
            make_isvc(engine={"leader": {}, "worker": {}}, decoder={}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "OMENative"}})],
            _allowed(AUTO),
            id="4: the runtime's mode and the leader/worker shape are not consulted",
        ),
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="4: the combination is checked only when both engine and decoder are declared",
        ),
        pytest.param(
            make_isvc(model="missing", engine={"annotations": {MODE: "OMENative"}}, decoder={}),
            MODELS,
            RUNTIMES,
            _denied(
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode=""; when either is OMENative, both must use the '
                "same value"
            ),
            id="4: the mode-combination denial comes before the model check",
        ),
        # 5. model
        pytest.param(
            make_isvc(model="missing"),
            MODELS,
            RUNTIMES,
            _denied(
                'referenced model "missing" not found in namespace "default": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: a model in neither scope is denied",
        ),
        pytest.param(
            make_isvc(namespace="team"),
            [make_model("llama", cluster=False, namespace="other")],
            RUNTIMES,
            _denied(
                'referenced model "llama" not found in namespace "team": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: a BaseModel in another namespace does not count",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", disabled=True)],
            RUNTIMES,
            _denied("model llama is disabled"),
            id="5: a disabled model is denied",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", distribution="Sharded")],
            RUNTIMES,
            _denied(
                "model llama uses distribution Sharded: no model cache provider is configured "
                "for sharded model loading"
            ),
            id="5: a sharded model is denied",
        ),
        pytest.param(
            make_isvc(model="missing", engine=None),
            MODELS,
            RUNTIMES,
            _denied(
                'referenced model "missing" not found in namespace "default": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: the model is checked even without an engine (OPEN-28)",
        ),
        pytest.param(
            make_isvc(model="llama", engine=None),
            [make_model("llama", cluster=False)],
            RUNTIMES,
            _allowed(),
            id="5: the webhook admits a BaseModel referenced with the default kind",
        ),
        pytest.param(
            make_isvc(model="missing", runtime={"name": "gone"}),
            MODELS,
            RUNTIMES,
            _denied(
                'referenced model "missing" not found in namespace "default": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: the model denial comes before the runtime check",
        ),
        # 6. named runtime
        pytest.param(
            make_isvc(runtime={"name": "gone"}),
            MODELS,
            RUNTIMES,
            _denied("runtime gone not found in namespace default or at cluster scope"),
            id="6: a named runtime missing with spec.model is denied",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt", "kind": "ServingRuntime"}, namespace="team"),
            MODELS,
            RUNTIMES,
            _denied("ServingRuntime rt not found in namespace team"),
            id="6: kind ServingRuntime looks only in the namespace",
        ),
        pytest.param(
            make_isvc(runtime={"name": "ns-rt"}, namespace="team"),
            MODELS,
            [make_runtime("ns-rt", cluster=False, namespace="team")],
            _allowed(),
            id="6: the default kind falls back to a ServingRuntime of that name",
        ),
        pytest.param(
            make_isvc(model=None, runtime={"name": "gone"}),
            MODELS,
            RUNTIMES,
            _allowed(),
            id="6: a named runtime missing without spec.model is admitted",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            MODELS,
            [make_runtime("rt", disabled=True)],
            _denied("cluster-scoped runtime rt is disabled"),
            id="6: a disabled named ClusterServingRuntime is denied",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt", "kind": "ServingRuntime"}),
            MODELS,
            [make_runtime("rt", cluster=False, disabled=True)],
            _denied("namespace-scoped runtime rt is disabled"),
            id="6: a disabled named ServingRuntime is denied",
        ),
        pytest.param(
            make_isvc(model=None, runtime={"name": "rt"}),
            MODELS,
            [make_runtime("rt", disabled=True)],
            _denied("cluster-scoped runtime rt is disabled"),
            id="6: a disabled named runtime is denied without spec.model too",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}, engine=None),
            MODELS,
            [make_runtime("rt", disabled=True)],
            _allowed(),
            id="6: without an engine the runtime is not checked",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            [make_model("llama", fmt="")],
            RUNTIMES,
            _denied("invalid model specification: modelFormat.name: model format name is required"),
            id="6: a named runtime with a model failing the S2.2 pre-check is denied",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            MODELS,
            RUNTIMES,
            _allowed(),
            id="6: a compatible named runtime is admitted without warnings",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            MODELS,
            [make_runtime("rt", formats=[entry("gguf")])],
            _allowed(
                'runtime "rt" does not declare support for model "llama" (runtime rt does not '
                "support model safetensors: model format 'mt:safetensors:transformers' not in "
                "supported formats: format name mismatch (model=safetensors, runtime=gguf)); "
                "proceeding because the runtime was named explicitly"
            ),
            id="6: an incompatible named runtime only warns, naming the model format",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}, engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "MultiNode"}})],
            _allowed(
                'runtime "rt" does not declare support for model "llama" (runtime rt does not '
                "support model : runtime engine deployment mode MultiNode does not match "
                "requested engine deployment mode OMENative); proceeding because the runtime was "
                "named explicitly"
            ),
            id="6: a mode mismatch of a named runtime warns with an empty model name",
        ),
        pytest.param(
            make_isvc(
                runtime={"name": "rt", "autoSync": False},
                acceleratorSelector={"acceleratorClass": "h100"},
            ),
            MODELS,
            RUNTIMES,
            _allowed(
                'runtime "rt" does not declare support for model "llama" (runtime rt does not '
                "support model : runtime does not support the required accelerator class); "
                "proceeding because the runtime was named explicitly"
            ),
            id="6: the named-runtime warning is given with autoSync false too",
        ),
        # 6. auto-selection
        pytest.param(
            make_isvc(engine=COMPLETE),
            MODELS,
            (),
            _allowed(),
            id="6: an engine runner image skips auto-selection",
        ),
        pytest.param(
            make_isvc(
                engine={
                    "leader": {"runner": {"image": "l"}},
                    "worker": {"runner": {"image": "w"}},
                }
            ),
            MODELS,
            (),
            _allowed(),
            id="6: leader and worker runner images together skip auto-selection",
        ),
        pytest.param(
            make_isvc(engine={"leader": {"runner": {"image": "l"}}, "worker": {}}),
            MODELS,
            (),
            _denied(NO_SUPPORT + NOT_FOUND + "default"),
            id="6: a leader image without a worker image is not a complete runner",
        ),
        pytest.param(
            make_isvc(engine={"runner": {"image": ""}}),
            MODELS,
            (),
            _denied(NO_SUPPORT + NOT_FOUND + "default"),
            id="6: an empty runner image is not a complete runner",
        ),
        pytest.param(
            make_isvc(namespace="team"),
            MODELS,
            (),
            _denied(NO_SUPPORT + NOT_FOUND + "team"),
            id="6: auto-selection without runtimes is denied with the S2.12 message",
        ),
        pytest.param(
            make_isvc(),
            MODELS,
            [make_runtime("rt", disabled=True)],
            _denied(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(runtime is disabled)"
            ),
            id="6: the auto-selection denial wraps the whole S2.12 message",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", fmt="")],
            RUNTIMES,
            _denied(
                NO_SUPPORT
                + "invalid model specification: modelFormat.name: model format name is required"
            ),
            id="6: the auto-selection denial wraps the S2.2 text",
        ),
        pytest.param(
            make_isvc(acceleratorSelector={"acceleratorClass": "h100"}),
            MODELS,
            RUNTIMES,
            _denied(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(runtime does not support the required accelerator class)"
            ),
            id="6: selection applies the admitted ISVC's accelerator class",
        ),
        pytest.param(
            make_isvc(annotations={"ome.io/accelerator-class": "h100"}),
            MODELS,
            [make_runtime("rt", acceleratorRequirements={"acceleratorClasses": ["h100"]})],
            _allowed(AUTO),
            id="6: a runtime listing the ISVC's accelerator class is selected",
        ),
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "MultiNode"}})],
            _denied(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(runtime engine deployment mode MultiNode does not match requested engine "
                "deployment mode OMENative)"
            ),
            id="6: selection applies the admitted ISVC's deployment mode",
        ),
        pytest.param(
            make_isvc(),
            MODELS,
            RUNTIMES,
            _allowed(AUTO),
            id="6: a successful auto-selection warns which runtime it picks",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", fmt="gguf"), make_model("llama", cluster=False)],
            [make_runtime("rt", formats=[entry("gguf", autoSelect=True)])],
            _denied(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(model format 'mt:safetensors:transformers' not in supported formats: "
                "format name mismatch (model=safetensors, runtime=gguf))"
            ),
            id="6: a BaseModel in the namespace supplies the data for kind ClusterBaseModel",
        ),
        pytest.param(
            make_isvc(engine=None, decoder={}),
            MODELS,
            (),
            _allowed(),
            id="6: without an engine no runtime is selected",
        ),
        # 2b. replica bounds (issue 8: they become an int32 spec.replicas)
        pytest.param(
            make_isvc(engine={**COMPLETE, "minReplicas": 10**30}),
            MODELS,
            RUNTIMES,
            _denied(f"spec.engine.minReplicas must be from 0 to 2147483647 (got {10**30})"),
            id="2b: a minReplicas beyond int32 is denied",
        ),
        pytest.param(
            make_isvc(decoder={"maxReplicas": -1}),
            MODELS,
            RUNTIMES,
            _denied("spec.decoder.maxReplicas must be from 0 to 2147483647 (got -1)"),
            id="2b: a negative maxReplicas is denied",
        ),
        pytest.param(
            make_isvc(router={"minReplicas": 3, "maxReplicas": 2}),
            MODELS,
            RUNTIMES,
            _denied(
                "spec.router.minReplicas (3) must not be greater than spec.router.maxReplicas (2)"
            ),
            id="2b: minReplicas above maxReplicas is denied",
        ),
        pytest.param(
            make_isvc(engine={**COMPLETE, "minReplicas": 3, "maxReplicas": 0}),
            MODELS,
            RUNTIMES,
            _allowed(),
            id="2b: maxReplicas 0 is unset and bounds nothing",
        ),
        pytest.param(
            make_isvc(engine={**COMPLETE, "minReplicas": 0, "maxReplicas": 2147483647}),
            MODELS,
            RUNTIMES,
            _allowed(),
            id="2b: the int32 range is allowed end to end",
        ),
        pytest.param(
            make_isvc(engine={"minReplicas": -2, "leader": {}}),
            MODELS,
            RUNTIMES,
            _denied("spec.engine.minReplicas must be from 0 to 2147483647 (got -2)"),
            id="2b: replica bounds come before the leader/worker pairing",
        ),
    ],
)
def test_inference_service_denials_in_order(
    isvc: InferenceService,
    models: Sequence[ModelResource],
    runtimes: Sequence[ServingRuntime],
    expected: AdmissionVerdict,
) -> None:
    assert _review(isvc, models, runtimes) == expected


# S7.3.3 and S16.3: InferenceService warnings ---------------------------------------------------


@pytest.mark.parametrize(
    ("isvc", "warnings"),
    [
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                engine={**COMPLETE, "deploymentStrategy": {"type": "Recreate"}},
                decoder={"deploymentStrategy": {}},
                router={"deploymentStrategy": {}},
            ),
            (
                _strategy("engine", "OMENative"),
                _strategy("decoder", "OMENative"),
                _strategy("router", "OMENative"),
            ),
            id="deploymentStrategy warns per component, in engine, decoder, router order",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "MultiNode"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_strategy("engine", "MultiNode"),),
            id="a valid metadata annotation mode triggers the deploymentStrategy warning",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "VirtualDeployment"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_strategy("engine", "VirtualDeployment"),),
            id="VirtualDeployment in the metadata annotation triggers the warning",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                annotations={MODE: "RawDeployment"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_strategy("engine", "OMENative"),),
            id="spec.deploymentMode comes before the metadata annotation",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="RawDeployment",
                annotations={MODE: "OMENative"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (),
            id="no deploymentStrategy warning when the ISVC-level mode is RawDeployment",
        ),
        pytest.param(
            make_isvc(engine={**COMPLETE, "deploymentStrategy": {}}),
            (),
            id="no deploymentStrategy warning without an ISVC-level mode",
        ),
        pytest.param(
            make_isvc(
                engine={
                    **COMPLETE,
                    "deploymentStrategy": {},
                    "annotations": {MODE: "OMENative"},
                }
            ),
            (),
            id="no deploymentStrategy warning for a component-annotation mode (OPEN-29)",
        ),
        pytest.param(
            make_isvc(deploymentMode="OMENative", engine=COMPLETE, router={}),
            (),
            id="no deploymentStrategy warning for components that do not set one",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "omenative"},
                engine={**COMPLETE, "deploymentStrategy": {}},
            ),
            (_typo("omenative", "metadata.annotations", "OMENative"),),
            id="an invalid metadata mode gives a typo warning and no deploymentStrategy warning",
        ),
        pytest.param(
            make_isvc(
                annotations={MODE: "MultiNodeRayVLLM"},
                engine={**COMPLETE, "annotations": {MODE: "rawdeployment"}},
                decoder={"annotations": {MODE: "multinode"}},
                router={"annotations": {MODE: ""}},
            ),
            (
                _typo("MultiNodeRayVLLM", "metadata.annotations"),
                _typo("rawdeployment", "spec.engine.annotations", "RawDeployment"),
                _typo("multinode", "spec.decoder.annotations", "MultiNode"),
                _typo("", "spec.router.annotations"),
            ),
            id="typo warnings name each place: metadata, then engine, decoder, router",
        ),
        pytest.param(
            make_isvc(
                deploymentMode="OMENative",
                engine={"deploymentStrategy": {}, "annotations": {MODE: "omeNative"}},
            ),
            (
                AUTO,
                _strategy("engine", "OMENative"),
                _typo("omeNative", "spec.engine.annotations", "OMENative"),
            ),
            id="warnings come as selection, deploymentStrategy, then typos",
        ),
    ],
)
def test_inference_service_warnings(isvc: InferenceService, warnings: tuple[str, ...]) -> None:
    assert _review(isvc) == AdmissionVerdict(True, "", warnings)


# S16.3: the mode-typo warning ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param({}, [], id="no annotation, no warning"),
        pytest.param({"other": "omenative"}, [], id="other annotations are not read"),
        pytest.param({MODE: "RawDeployment"}, [], id="RawDeployment is a mode"),
        pytest.param({MODE: "OMENative"}, [], id="OMENative is a mode"),
        pytest.param({MODE: "MultiNode"}, [], id="MultiNode is a mode"),
        pytest.param({MODE: "VirtualDeployment"}, [], id="VirtualDeployment is a mode"),
        pytest.param(
            {MODE: "omenative"},
            [
                'ome.io/deploymentMode "omenative" on spec.engine.annotations is not a deployment '
                "mode and is ignored; valid values are RawDeployment, OMENative, MultiNode, "
                "VirtualDeployment; did you mean OMENative?"
            ],
            id="a mode in another letter case suggests the mode",
        ),
        pytest.param(
            {MODE: "RAWDEPLOYMENT"},
            [_typo("RAWDEPLOYMENT", "spec.engine.annotations", "RawDeployment")],
            id="upper case suggests RawDeployment",
        ),
        pytest.param(
            {MODE: "virtualdeployment"},
            [_typo("virtualdeployment", "spec.engine.annotations", "VirtualDeployment")],
            id="lower case suggests VirtualDeployment",
        ),
        pytest.param(
            {MODE: "MultiNodeRayVLLM"},
            [
                'ome.io/deploymentMode "MultiNodeRayVLLM" on spec.engine.annotations is not a '
                "deployment mode and is ignored; valid values are RawDeployment, OMENative, "
                "MultiNode, VirtualDeployment"
            ],
            id="a value that is no mode in any case suggests nothing",
        ),
        pytest.param(
            {MODE: " OMENative"},
            [_typo(" OMENative", "spec.engine.annotations")],
            id="a value with spaces is not a mode and suggests nothing",
        ),
    ],
)
def test_mode_typo_warnings(annotations: dict[str, str], expected: list[str]) -> None:
    assert mode_typo_warnings("spec.engine.annotations", annotations) == expected


# S7.4: ServingRuntime / ClusterServingRuntime ------------------------------------------------


@pytest.mark.parametrize(
    ("runtime", "classes", "expected"),
    [
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": ["h100", "a100", "h200"]}),
            frozenset({"a100"}),
            _denied(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h100 h200]"
            ),
            id="unknown accelerator classes are denied, in list order",
        ),
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": ["h200", "h100"]}),
            frozenset(),
            _denied(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h200 h100]"
            ),
            id="the missing names keep the runtime's order, not sorted",
        ),
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": ["h100"]}),
            frozenset({"h100", "a100"}),
            _allowed(),
            id="known accelerator classes pass",
        ),
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": []}),
            frozenset(),
            _allowed(),
            id="an empty class list passes",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True, priority=1),
                    entry(name="llama", autoSelect=True, priority=2),
                ]
            ),
            frozenset(),
            _denied("different priorities assigned for the model format"),
            id="autoSelect entries sharing a name with different priorities are denied",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True),
                    entry(name="llama", autoSelect=True, priority=1),
                ]
            ),
            frozenset(),
            _allowed(),
            id="an unset priority counts as 1",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True),
                    entry(name="llama", autoSelect=True, priority=3),
                ]
            ),
            frozenset(),
            _denied("different priorities assigned for the model format"),
            id="an unset priority differs from 3",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(autoSelect=True, priority=2),
                    entry("gguf", name="", autoSelect=True, priority=1),
                ]
            ),
            frozenset(),
            _denied("different priorities assigned for the model format"),
            id="entries with an empty or absent name form one group",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="a", autoSelect=True, priority=1),
                    entry(name="b", autoSelect=True, priority=2),
                ]
            ),
            frozenset(),
            _allowed(),
            id="different names may have different priorities",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True, priority=1),
                    entry(name="llama", autoSelect=False, priority=2),
                    entry(name="llama", priority=3),
                ]
            ),
            frozenset(),
            _allowed(),
            id="only autoSelect true entries are compared",
        ),
        pytest.param(
            make_runtime(
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                formats=[
                    entry(name="x", autoSelect=True, priority=1),
                    entry(name="x", autoSelect=True, priority=2),
                ],
            ),
            frozenset(),
            _denied("unknown accelerator classes referenced in AcceleratorRequirements: [h100]"),
            id="the accelerator-class denial comes before the priority denial",
        ),
        pytest.param(
            make_runtime(
                disabled=True,
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                formats=[
                    entry(name="x", autoSelect=True, priority=1),
                    entry(name="x", autoSelect=True, priority=2),
                ],
            ),
            frozenset(),
            _allowed(),
            id="a disabled runtime skips every denial",
        ),
        pytest.param(
            make_runtime(
                "ns-rt",
                cluster=False,
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
            ),
            frozenset(),
            _denied("unknown accelerator classes referenced in AcceleratorRequirements: [h100]"),
            id="a ServingRuntime gets the same denials",
        ),
        pytest.param(
            make_runtime(
                engineConfig={"annotations": {MODE: "omenative"}},
                decoderConfig={"annotations": {MODE: "OMENative"}},
                routerConfig={"annotations": {MODE: "Raw"}},
            ),
            frozenset(),
            _allowed(
                _typo("omenative", "spec.engineConfig.annotations", "OMENative"),
                _typo("Raw", "spec.routerConfig.annotations"),
            ),
            id="runtime config annotations get typo warnings in engine, decoder, router order",
        ),
        pytest.param(
            make_runtime(
                disabled=True,
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                engineConfig={"annotations": {MODE: "multinode"}},
            ),
            frozenset(),
            _allowed(_typo("multinode", "spec.engineConfig.annotations", "MultiNode")),
            id="a disabled runtime still gets typo warnings",
        ),
        pytest.param(
            make_runtime(
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                engineConfig={"annotations": {MODE: "multinode"}},
            ),
            frozenset(),
            _denied(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h100]",
                _typo("multinode", "spec.engineConfig.annotations", "MultiNode"),
            ),
            id="a denied runtime still gets typo warnings",
        ),
        pytest.param(
            make_runtime(engineConfig={"minReplicas": 4, "maxReplicas": 2}),
            frozenset(),
            _denied(
                "spec.engineConfig.minReplicas (4) must not be greater than "
                "spec.engineConfig.maxReplicas (2)"
            ),
            id="a runtime's replica bounds are checked as an InferenceService's",
        ),
        pytest.param(
            make_runtime(routerConfig={"maxReplicas": 2**31}),
            frozenset(),
            _denied("spec.routerConfig.maxReplicas must be from 0 to 2147483647 (got 2147483648)"),
            id="a runtime maxReplicas beyond int32 is denied",
        ),
    ],
)
def test_serving_runtime_review(
    runtime: ServingRuntime, classes: frozenset[str], expected: AdmissionVerdict
) -> None:
    assert review_serving_runtime(runtime, classes) == expected


@pytest.mark.parametrize(
    ("runtimes", "expected"),
    [
        pytest.param(
            [runtime_manifest("rt"), runtime_manifest("off", disabled=True)],
            SelectionOutcome("selected", "cluster", ("disabled",)),
            id="a selection records its scope and the checks that excluded the others",
        ),
        pytest.param(
            [runtime_manifest("off", disabled=True)],
            SelectionOutcome("no_runtime", "none", ("disabled",)),
            id="no runtime records no_runtime",
        ),
    ],
)
def test_auto_selection_outcome_is_reported_for_metrics(runtimes, expected) -> None:
    verdict = review_inference_service(
        make_isvc("svc"),
        ModelCatalog.of([make_model("llama")]),
        RuntimeCatalog.of(from_manifest(r) for r in runtimes),
    )
    assert verdict.selection == expected
