"""Rules of SPEC S2.4 (check order), S2.5 (accelerator classes), S2.6 (mode filter outcomes),
S2.7 (model-format check: entries, label, fragments) and S2.9 (size reason text)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.selection.errors import Exclusion
from ome_operator.core.selection.matching import (
    CHECKS,
    Request,
    accelerator_reason,
    entry_differences,
    first_exclusion,
    format_reason,
    model_label,
    required_accelerator_classes,
    size_reason,
)
from ome_operator.models import ModelSpec, SupportedModelFormat
from tests.builders import entry, make_isvc, make_model_spec, make_runtime

MODE = "ome.io/deploymentMode"
CLASS = "ome.io/accelerator-class"
NO_CLASS = "runtime does not support the required accelerator class"


def _entry(fmt: str = "safetensors", framework: str = "transformers", **kw: Any):
    """One parsed supportedModelFormats entry."""
    return make_runtime(formats=[entry(fmt, framework, **kw)]).spec.supported_model_formats[0]


# --- S2.4: the checks and their order -------------------------------------------------------


def test_the_checks_run_in_the_documented_order() -> None:
    assert CHECKS == (
        "disabled",
        "accelerator_class",
        "deployment_mode",
        "model_format",
        "model_size",
    )


#: A runtime failing all five checks for ``_ORDER_ISVC`` and ``_ORDER_MODEL``.
_FAILS_ALL: dict[str, Any] = {
    "disabled": True,
    "acceleratorRequirements": {"acceleratorClasses": ["a100"]},
    "engineConfig": {"annotations": {MODE: "MultiNode"}},
    "formats": [entry("pytorch", autoSelect=True)],
    "size_range": ("1B", "2B"),
}
#: What makes the runtime pass each check.
_PASSES: dict[str, dict[str, Any]] = {
    "disabled": {"disabled": False},
    "accelerator_class": {"acceleratorRequirements": {"acceleratorClasses": ["h100"]}},
    "deployment_mode": {"engineConfig": {"annotations": {MODE: "OMENative"}}},
    "model_format": {"formats": [entry(autoSelect=True)]},
    "model_size": {"size_range": None},
}
_ORDER_MODEL = make_model_spec(modelParameterSize="7B")
_ORDER_ISVC = make_isvc(annotations={CLASS: "h100"}, deploymentMode="OMENative")


def _passing(*checks: str):
    spec = dict(_FAILS_ALL)
    for check in checks:
        spec.update(_PASSES[check])
    return make_runtime("rt", **spec)


@pytest.mark.parametrize(
    ("passed", "expected"),
    [
        pytest.param(
            (),
            Exclusion("rt", True, "disabled", "runtime is disabled"),
            id="a disabled runtime's only reason is that it is disabled, whatever else fails",
        ),
        pytest.param(
            ("disabled",),
            Exclusion("rt", True, "accelerator_class", NO_CLASS),
            id="the accelerator-class check comes before the mode, format and size checks",
        ),
        pytest.param(
            ("disabled", "accelerator_class"),
            Exclusion(
                "rt",
                True,
                "deployment_mode",
                "runtime engine deployment mode MultiNode does not match requested engine "
                "deployment mode OMENative",
            ),
            id="the deployment-mode check comes before the format and size checks",
        ),
        pytest.param(
            ("disabled", "accelerator_class", "deployment_mode"),
            Exclusion(
                "rt",
                True,
                "model_format",
                "model format 'mt:safetensors:transformers' not in supported formats: "
                "format name mismatch (model=safetensors, runtime=pytorch)",
            ),
            id="the model-format check comes before the size check",
        ),
        pytest.param(
            ("disabled", "accelerator_class", "deployment_mode", "model_format"),
            Exclusion(
                "rt", True, "model_size", "model size 7B is outside supported range [1B, 2B]"
            ),
            id="the size check is the last check",
        ),
        pytest.param(
            ("disabled", "accelerator_class", "deployment_mode", "model_format", "model_size"),
            None,
            id="a runtime passing all five checks supports the model",
        ),
    ],
)
def test_the_first_failing_check_is_the_only_reason(
    passed: tuple[str, ...], expected: Exclusion | None
) -> None:
    assert first_exclusion(_passing(*passed), Request(_ORDER_MODEL, _ORDER_ISVC)) == expected


def test_a_namespaced_exclusion_records_its_scope() -> None:
    runtime = make_runtime("sr", cluster=False, disabled=True)
    expected = Exclusion("sr", False, "disabled", "runtime is disabled")
    assert first_exclusion(runtime, Request(_ORDER_MODEL, _ORDER_ISVC)) == expected


def test_without_an_inference_service_the_accelerator_and_mode_checks_pass() -> None:
    runtime = _passing("disabled")
    expected = Exclusion(
        "rt",
        True,
        "model_format",
        "model format 'mt:safetensors:transformers' not in supported formats: "
        "format name mismatch (model=safetensors, runtime=pytorch)",
    )
    assert first_exclusion(runtime, Request(_ORDER_MODEL)) == expected


# --- S2.5: accelerator classes --------------------------------------------------------------


@pytest.mark.parametrize(
    ("isvc_kwargs", "expected"),
    [
        pytest.param({}, frozenset(), id="an InferenceService naming no class requires none"),
        pytest.param(
            {"annotations": {CLASS: "h100"}},
            frozenset({"h100"}),
            id="the ome.io/accelerator-class annotation requires its class",
        ),
        pytest.param(
            {"annotations": {CLASS: ""}},
            frozenset({""}),
            id="a present accelerator-class annotation with an empty value still requires a class",
        ),
        pytest.param(
            {"acceleratorSelector": {"acceleratorClass": "h200"}},
            frozenset({"h200"}),
            id="spec.acceleratorSelector.acceleratorClass requires its class",
        ),
        pytest.param(
            {"engine": {"acceleratorOverride": {"acceleratorClass": "a100"}}},
            frozenset({"a100"}),
            id="spec.engine.acceleratorOverride.acceleratorClass requires its class",
        ),
        pytest.param(
            {"decoder": {"acceleratorOverride": {"acceleratorClass": "l40s"}}},
            frozenset({"l40s"}),
            id="spec.decoder.acceleratorOverride.acceleratorClass requires its class",
        ),
        pytest.param(
            {
                "annotations": {CLASS: "h100"},
                "acceleratorSelector": {"acceleratorClass": "h200"},
                "engine": {"acceleratorOverride": {"acceleratorClass": "a100"}},
                "decoder": {"acceleratorOverride": {"acceleratorClass": "l40s"}},
            },
            frozenset({"h100", "h200", "a100", "l40s"}),
            id="the required classes are the union of the four places",
        ),
        pytest.param(
            {
                "annotations": {CLASS: "h100"},
                "acceleratorSelector": {"acceleratorClass": "h100"},
            },
            frozenset({"h100"}),
            id="a class named in two places is required once",
        ),
        pytest.param(
            {"router": {"acceleratorOverride": {"acceleratorClass": "a10"}}},
            frozenset(),
            id="the router's acceleratorOverride is not one of the four places",
        ),
        pytest.param(
            {"acceleratorSelector": {"policy": "BestFit", "constraints": {"minMemory": 80}}},
            frozenset(),
            id="acceleratorSelector policy and constraints require no class",
        ),
    ],
)
def test_required_classes_are_pooled_from_four_places(
    isvc_kwargs: dict[str, Any], expected: frozenset[str]
) -> None:
    assert required_accelerator_classes(make_isvc(**isvc_kwargs)) == expected


@pytest.mark.parametrize(
    ("required", "offered", "expected"),
    [
        pytest.param(frozenset(), None, None, id="no required class passes a runtime with no list"),
        pytest.param(frozenset({"h100"}), ["h100"], None, id="a listed class passes"),
        pytest.param(
            frozenset({"h100", "h200"}),
            ["h200", "a100", "h100"],
            None,
            id="a runtime listing every required class and more passes",
        ),
        pytest.param(
            frozenset({"h100", "h200"}),
            ["h100"],
            NO_CLASS,
            id="a runtime must list every required class, not just one",
        ),
        pytest.param(frozenset({"h100"}), None, NO_CLASS, id="a runtime with no list fails"),
        pytest.param(frozenset({"h100"}), [], NO_CLASS, id="a runtime with an empty list fails"),
        pytest.param(
            frozenset({"H100"}), ["h100"], NO_CLASS, id="class names match case-sensitively"
        ),
        pytest.param(
            frozenset({""}),
            [""],
            NO_CLASS,
            id="an empty class value is a class no runtime lists",
        ),
    ],
)
def test_the_runtime_must_list_every_required_class(
    required: frozenset[str], offered: list[str] | None, expected: str | None
) -> None:
    spec = {} if offered is None else {"acceleratorRequirements": {"acceleratorClasses": offered}}
    assert accelerator_reason(make_runtime(**spec), required) == expected


def test_an_empty_accelerator_class_annotation_excludes_every_runtime() -> None:
    isvc = make_isvc(annotations={CLASS: ""})
    runtime = make_runtime(acceleratorRequirements={"acceleratorClasses": ["h100"]})
    expected = Exclusion("rt", True, "accelerator_class", NO_CLASS)
    assert first_exclusion(runtime, Request(make_model_spec(), isvc)) == expected


# --- S2.6: the mode filter's outcome table --------------------------------------------------


def _engine_mode_runtime(mode: str | None):
    config = {"engineConfig": {"annotations": {MODE: mode}}} if mode else {}
    return make_runtime("rt", **config)


def _mode_isvc(mode: str | None):
    return make_isvc(engine={"annotations": {MODE: mode}} if mode else {})


@pytest.mark.parametrize(
    ("isvc_mode", "runtime_mode", "expected"),
    [
        pytest.param(None, "MultiNode", None, id="an InferenceService asking no mode passes"),
        pytest.param("OMENative", None, None, id="a runtime declaring no mode passes"),
        pytest.param("OMENative", "OMENative", None, id="equal modes pass"),
        pytest.param(
            "OMENative",
            "MultiNode",
            "runtime engine deployment mode MultiNode does not match requested engine "
            "deployment mode OMENative",
            id="OMENative asked of a MultiNode runtime is rejected, runtime mode first",
        ),
        pytest.param(
            "RawDeployment",
            "OMENative",
            "runtime engine deployment mode OMENative does not match requested engine "
            "deployment mode RawDeployment",
            id="RawDeployment asked of an OMENative runtime is rejected",
        ),
    ],
)
def test_the_mode_check_rejects_only_when_both_sides_declare_different_modes(
    isvc_mode: str | None, runtime_mode: str | None, expected: str | None
) -> None:
    found = first_exclusion(
        _engine_mode_runtime(runtime_mode), Request(make_model_spec(), _mode_isvc(isvc_mode))
    )
    assert found == (
        None if expected is None else Exclusion("rt", True, "deployment_mode", expected)
    )


def test_the_engine_is_compared_before_the_decoder() -> None:
    isvc = make_isvc(deploymentMode="OMENative", decoder={})
    runtime = make_runtime(
        engineConfig={"annotations": {MODE: "RawDeployment"}},
        decoderConfig={"annotations": {MODE: "MultiNode"}},
    )
    expected = Exclusion(
        "rt",
        True,
        "deployment_mode",
        "runtime engine deployment mode RawDeployment does not match requested engine "
        "deployment mode OMENative",
    )
    assert first_exclusion(runtime, Request(make_model_spec(), isvc)) == expected


def test_a_decoder_mismatch_names_the_decoder_in_both_slots() -> None:
    isvc = make_isvc(deploymentMode="OMENative", decoder={})
    runtime = make_runtime(decoderConfig={"annotations": {MODE: "MultiNode"}})
    expected = Exclusion(
        "rt",
        True,
        "deployment_mode",
        "runtime decoder deployment mode MultiNode does not match requested decoder "
        "deployment mode OMENative",
    )
    assert first_exclusion(runtime, Request(make_model_spec(), isvc)) == expected


# --- S2.7.2: the model label ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        pytest.param(
            make_model_spec(
                fmt_version="1.0.0",
                framework_version="4.40.1",
                modelArchitecture="Qwen2ForCausalLM",
            ),
            "mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1",
            id="the label joins format, version, architecture, framework and version with colons",
        ),
        pytest.param(
            make_model_spec(
                fmt_version="1.0.0",
                framework_version="4.40.1",
                modelArchitecture="Qwen2ForCausalLM",
                quantization="fp8",
            ),
            "mt:safetensors:1.0.0:Qwen2ForCausalLM:fp8:transformers:4.40.1",
            id="quantization sits between the architecture and the framework",
        ),
        pytest.param(
            make_model_spec(framework=None),
            "mt:safetensors",
            id="a model with only a format name is labelled by that name",
        ),
        pytest.param(
            make_model_spec(quantization="int4"),
            "mt:safetensors:int4:transformers",
            id="each unset part is left out",
        ),
        pytest.param(
            make_model_spec(fmt_version="1.0.0", framework=None, modelArchitecture="Llama"),
            "mt:safetensors:1.0.0:Llama",
            id="a model without a framework has no framework parts",
        ),
        pytest.param(
            make_model_spec(fmt_version=""),
            "mt:safetensors::transformers",
            id="an empty version counts as set and keeps its empty part",
        ),
    ],
)
def test_the_model_label(model: ModelSpec, expected: str) -> None:
    assert model_label(model) == expected


# --- S2.7.1 and S2.7.3: one entry's differences ---------------------------------------------

_PIPELINE = {
    "className": "FluxPipeline",
    "scheduler": {"library": "diffusers", "type": "FlowMatchEulerDiscreteScheduler"},
    "vae": {"library": "diffusers", "type": "AutoencoderKL"},
    "additionalComponents": {"image_encoder": {"library": "transformers", "type": "CLIP"}},
}


def _pipeline(**changes: Any) -> dict[str, Any]:
    found = {**_PIPELINE, **changes}
    return {k: v for k, v in found.items() if v is not None}


@pytest.mark.parametrize(
    ("wanted", "model", "expected"),
    [
        pytest.param(None, _pipeline(), [], id="an entry without a pipeline accepts any model"),
        pytest.param(
            {},
            None,
            ["diffusion pipeline required by runtime but not specified in model"],
            id="an entry with an empty pipeline requires the model to have one",
        ),
        pytest.param({}, {}, [], id="an empty pipeline is matched by any model pipeline"),
        pytest.param(
            {"className": "SD3Pipeline"},
            _pipeline(),
            ["pipeline class mismatch (model=FluxPipeline, runtime=SD3Pipeline)"],
            id="a set class name must equal the model's",
        ),
        pytest.param(
            {"className": "SD3Pipeline"},
            _pipeline(className=None),
            ["pipeline class mismatch (model=<nil>, runtime=SD3Pipeline)"],
            id="a model pipeline without a class shows <nil>",
        ),
        pytest.param(
            {"scheduler": {}},
            _pipeline(),
            [],
            id="an empty component only requires the model to have that component",
        ),
        pytest.param(
            {"scheduler": {"library": "other"}},
            _pipeline(),
            ["scheduler library mismatch (model=diffusers, runtime=other)"],
            id="a set component library must equal the model's",
        ),
        pytest.param(
            {"vae": {"type": "VQModel"}},
            _pipeline(),
            ["vae type mismatch (model=AutoencoderKL, runtime=VQModel)"],
            id="a set component type must equal the model's",
        ),
        pytest.param(
            {"vae": {"library": "diffusers"}},
            _pipeline(),
            [],
            id="a component type the entry leaves unset is not compared",
        ),
        pytest.param(
            {"additionalComponents": {"image_encoder": {}}},
            _pipeline(additionalComponents=None),
            ["diffusion pipeline missing required additional components"],
            id="required additional components need the model to have some",
        ),
        pytest.param(
            {"additionalComponents": {"safety_checker": {}}},
            _pipeline(),
            ["diffusion component safety_checker missing in model"],
            id="each required additional component key must exist in the model",
        ),
        pytest.param(
            {"additionalComponents": {"image_encoder": {"type": "SigLIP"}}},
            _pipeline(),
            ["image_encoder type mismatch (model=CLIP, runtime=SigLIP)"],
            id="an additional component's set type must equal the model's",
        ),
        pytest.param(
            {"additionalComponents": {"image_encoder": {"library": "open_clip"}}},
            _pipeline(),
            ["image_encoder library mismatch (model=transformers, runtime=open_clip)"],
            id="an additional component's set library must equal the model's",
        ),
        pytest.param(
            {"className": "SD3Pipeline", "tokenizer": {}, "additionalComponents": {"x": {}}},
            _pipeline(),
            ["pipeline class mismatch (model=FluxPipeline, runtime=SD3Pipeline)"],
            id="only the first pipeline difference is reported",
        ),
    ],
)
def test_diffusion_pipeline_rules(
    wanted: dict[str, Any] | None, model: dict[str, Any] | None, expected: list[str]
) -> None:
    fields = {} if wanted is None else {"diffusionPipeline": wanted}
    spec = make_model_spec() if model is None else make_model_spec(diffusionPipeline=model)
    assert entry_differences(_entry(**fields), spec) == expected


@pytest.mark.parametrize(
    "component", ["scheduler", "textEncoder", "tokenizer", "transformer", "vae"]
)
def test_each_pipeline_component_the_entry_sets_must_exist_in_the_model(component: str) -> None:
    found = entry_differences(
        _entry(diffusionPipeline={component: {}}), make_model_spec(diffusionPipeline={})
    )
    assert found == [f"component {component} required by runtime but not specified in model"]


@pytest.mark.parametrize(
    ("fields", "model", "expected"),
    [
        pytest.param({}, make_model_spec(), [], id="both without architecture match"),
        pytest.param(
            {"modelArchitecture": "Llama"},
            make_model_spec(modelArchitecture="Llama"),
            [],
            id="equal architectures match",
        ),
        pytest.param(
            {"modelArchitecture": "MistralForCausalLM"},
            make_model_spec(modelArchitecture="Qwen2ForCausalLM"),
            ["architecture mismatch (model=Qwen2ForCausalLM, runtime=MistralForCausalLM)"],
            id="different architectures mismatch",
        ),
        pytest.param(
            {},
            make_model_spec(modelArchitecture="Llama"),
            ["model has architecture Llama but runtime has no architecture requirement"],
            id="an architecture only the model has mismatches",
        ),
        pytest.param(
            {"modelArchitecture": "Llama"},
            make_model_spec(),
            ["model has no architecture but runtime requires Llama"],
            id="an architecture only the entry has mismatches",
        ),
        pytest.param(
            {"modelArchitecture": "llama"},
            make_model_spec(modelArchitecture="Llama"),
            ["architecture mismatch (model=Llama, runtime=llama)"],
            id="architectures compare case-sensitively",
        ),
        pytest.param({}, make_model_spec(), [], id="both without quantization match"),
        pytest.param(
            {"quantization": "fp8"},
            make_model_spec(quantization="fp8"),
            [],
            id="equal quantizations match",
        ),
        pytest.param(
            {"quantization": "int4"},
            make_model_spec(quantization="fp8"),
            ["quantization mismatch (model=fp8, runtime=int4)"],
            id="different quantizations mismatch",
        ),
        pytest.param(
            {},
            make_model_spec(quantization="fp8"),
            ["model has quantization fp8 but runtime has no quantization requirement"],
            id="a quantization only the model has mismatches",
        ),
        pytest.param(
            {"quantization": "int4"},
            make_model_spec(),
            ["model has no quantization but runtime requires int4"],
            id="a quantization only the entry has mismatches",
        ),
    ],
)
def test_architecture_and_quantization_must_be_both_unset_or_equal(
    fields: dict[str, Any], model: ModelSpec, expected: list[str]
) -> None:
    assert entry_differences(_entry(**fields), model) == expected


@pytest.mark.parametrize(
    ("found", "model", "expected"),
    [
        pytest.param(
            _entry("pytorch"),
            make_model_spec(),
            ["format name mismatch (model=safetensors, runtime=pytorch)"],
            id="format names must be equal",
        ),
        pytest.param(
            _entry("Safetensors"),
            make_model_spec(),
            ["format name mismatch (model=safetensors, runtime=Safetensors)"],
            id="format names compare case-sensitively",
        ),
        pytest.param(
            _entry(fmt_version="2.0.0"),
            make_model_spec(fmt_version="1.0.0"),
            ["format version mismatch (model=1.0.0, runtime=2.0.0)"],
            id="format versions must match",
        ),
        pytest.param(
            _entry(fmt_version="1.0"),
            make_model_spec(fmt_version="1.0.0"),
            [],
            id="format versions compare numerically",
        ),
        pytest.param(
            _entry(fmt_version="2.0.0"),
            make_model_spec(),
            ["model has no format version but runtime requires 2.0.0"],
            id="a format version only the entry has mismatches",
        ),
        pytest.param(
            _entry(),
            make_model_spec(fmt_version="1.0.0"),
            ["model has format version but runtime has no version requirement"],
            id="a format version only the model has mismatches",
        ),
        pytest.param(
            _entry(),
            make_model_spec(fmt_version=""),
            ["model has format version but runtime has no version requirement"],
            id="an empty model format version counts as set",
        ),
        pytest.param(
            _entry(fmt_version="1.0.0"),
            make_model_spec(fmt_version="1.08.0"),
            ["format version mismatch (model=1.08.0, runtime=1.0.0)"],
            id="a format version that does not parse never matches",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    {
                        "modelFormat": {
                            "name": "safetensors",
                            "version": "2.0.0",
                            "operator": "GreaterThan",
                        },
                        "modelFramework": {"name": "transformers"},
                    }
                ]
            ).spec.supported_model_formats[0],
            make_model_spec(fmt_version="1.0.0"),
            [],
            id="the entry's operator compares the entry's version against the model's",
        ),
        pytest.param(
            _entry("pytorch", fmt_version="2.0.0"),
            make_model_spec(fmt_version="1.0.0"),
            ["format name mismatch (model=safetensors, runtime=pytorch)"],
            id="when format names differ the format version is not compared",
        ),
        pytest.param(
            _entry(framework="vllm"),
            make_model_spec(),
            ["framework name mismatch (model=transformers, runtime=vllm)"],
            id="framework names must be equal",
        ),
        pytest.param(
            _entry(framework_version="4.36.0"),
            make_model_spec(framework_version="4.40.1"),
            ["framework version mismatch (model=4.40.1, runtime=4.36.0)"],
            id="framework versions must match",
        ),
        pytest.param(
            _entry(framework_version="4.36.0"),
            make_model_spec(),
            ["model has no framework version but runtime requires 4.36.0"],
            id="a framework version only the entry has mismatches",
        ),
        pytest.param(
            _entry(),
            make_model_spec(framework_version="4.40.1"),
            ["model has framework version but runtime has no version requirement"],
            id="a framework version only the model has mismatches",
        ),
        pytest.param(
            _entry(framework_version="4.36.0"),
            make_model_spec(framework=None),
            ["model has no framework but runtime requires transformers"],
            id="a model without a framework never matches",
        ),
        pytest.param(
            _entry(framework="vllm", framework_version="0.6.0"),
            make_model_spec(framework_version="4.40.1"),
            ["framework name mismatch (model=transformers, runtime=vllm)"],
            id="when framework names differ the framework version is not compared",
        ),
    ],
)
def test_format_and_framework_names_and_versions(
    found: SupportedModelFormat, model: ModelSpec, expected: list[str]
) -> None:
    assert entry_differences(found, model) == expected


def test_fragments_of_one_entry_come_in_aspect_order() -> None:
    found = _entry(
        "pytorch",
        "vllm",
        diffusionPipeline={},
        modelArchitecture="MistralForCausalLM",
        quantization="int4",
    )
    model = make_model_spec(modelArchitecture="Qwen2ForCausalLM", quantization="fp8")
    assert entry_differences(found, model) == [
        "diffusion pipeline required by runtime but not specified in model",
        "architecture mismatch (model=Qwen2ForCausalLM, runtime=MistralForCausalLM)",
        "quantization mismatch (model=fp8, runtime=int4)",
        "format name mismatch (model=safetensors, runtime=pytorch)",
        "framework name mismatch (model=transformers, runtime=vllm)",
    ]


# --- S2.7.3: the whole reason ---------------------------------------------------------------

_DOC_MODEL = make_model_spec(
    fmt_version="1.0.0", framework_version="4.40.1", modelArchitecture="Qwen2ForCausalLM"
)


@pytest.mark.parametrize(
    ("formats", "expected"),
    [
        pytest.param(
            [
                entry(
                    fmt_version="1.0.0",
                    framework_version="4.36.0",
                    modelArchitecture="MistralForCausalLM",
                )
            ],
            "model format 'mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1' not in "
            "supported formats: architecture mismatch (model=Qwen2ForCausalLM, "
            "runtime=MistralForCausalLM), framework version mismatch (model=4.40.1, "
            "runtime=4.36.0)",
            id="the documented example: differences of one entry joined by a comma and space",
        ),
        pytest.param(
            [
                entry("pytorch", fmt_version="1.0.0", framework_version="4.40.1"),
                entry(
                    fmt_version="1.0.0",
                    framework_version="4.40.1",
                    modelArchitecture="LlamaForCausalLM",
                ),
            ],
            "model format 'mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1' not in "
            "supported formats: model has architecture Qwen2ForCausalLM but runtime has no "
            "architecture requirement, format name mismatch (model=safetensors, "
            "runtime=pytorch); architecture mismatch (model=Qwen2ForCausalLM, "
            "runtime=LlamaForCausalLM)",
            id="entries are listed in supportedModelFormats order separated by a semicolon",
        ),
        pytest.param(
            [],
            "model format 'mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1' not in "
            "supported formats: no supported formats defined",
            id="a runtime with no entries has no supported formats defined",
        ),
        pytest.param(
            [
                entry("pytorch"),
                entry(
                    fmt_version="1.0.0",
                    framework_version="4.40.1",
                    modelArchitecture="Qwen2ForCausalLM",
                ),
            ],
            None,
            id="one matching entry is enough",
        ),
        pytest.param(
            [
                entry(
                    fmt_version="1.0.0",
                    framework_version="4.40.1",
                    modelArchitecture="Qwen2ForCausalLM",
                    autoSelect=False,
                )
            ],
            None,
            id="an autoSelect false entry still supports the model",
        ),
    ],
)
def test_the_model_format_reason(formats: list[dict[str, Any]], expected: str | None) -> None:
    assert format_reason(make_runtime(formats=formats), _DOC_MODEL) == expected


# --- S2.9: the size reason ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "size_range", "expected"),
    [
        pytest.param(
            "3.21B",
            ("500M", "2B"),
            "model size 3.21B is outside supported range [500M, 2B]",
            id="the documented example",
        ),
        pytest.param(
            "7B",
            ("70B", None),
            "model size 7B is outside supported range [70B, inf)",
            id="a missing maximum renders inf)",
        ),
        pytest.param(
            "70B",
            (None, "13B"),
            "model size 70B is outside supported range (-inf, 13B]",
            id="a missing minimum renders (-inf",
        ),
        pytest.param(
            "0.5T",
            ("1B", "13B"),
            "model size 0.5T is outside supported range [1B, 13B]",
            id="the size and bounds are shown as written",
        ),
        pytest.param(
            "2.5B",
            ("2B", "4b"),
            "model size 2.5B is outside supported range [2B, 4b]",
            id="an unparseable bound is shown as written",
        ),
        pytest.param("1B", ("500M", "2B"), None, id="a size inside the range passes"),
        pytest.param(None, ("500M", "2B"), None, id="a model without a size is not checked"),
        pytest.param("70B", None, None, id="a runtime without a range is not checked"),
    ],
)
def test_the_size_reason(
    size: str | None, size_range: tuple[str | None, str | None] | None, expected: str | None
) -> None:
    model = make_model_spec() if size is None else make_model_spec(modelParameterSize=size)
    assert size_reason(make_runtime(size_range=size_range), model) == expected


def test_one_range_covers_all_entries() -> None:
    runtime = make_runtime(
        formats=[entry("pytorch"), entry(autoSelect=True)], size_range=("1B", "2B")
    )
    model = make_model_spec(modelParameterSize="7B")
    expected = Exclusion(
        "rt", True, "model_size", "model size 7B is outside supported range [1B, 2B]"
    )
    assert first_exclusion(runtime, Request(model)) == expected
