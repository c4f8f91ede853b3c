"""The seed page "Runtime deployment-mode matching", sentence by sentence.

Every sentence of /work/shared/spec/runtime-deployment-mode-matching.txt is a requirement. Each
test quotes the sentence (or the part of it) that it pins. The page's example runtime and
InferenceService are copied below verbatim; its messages are compared as whole strings.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from ome_operator.core.admission import AdmissionVerdict, review_inference_service
from ome_operator.core.deployment_modes import (
    DeploymentMode,
    InvalidComponentModeError,
    ModeSource,
    ResolvedMode,
    check_component_mode,
    requested_mode,
    resolve_component_mode,
    runtime_mode,
)
from ome_operator.core.merging import merge_component
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.selection import (
    CHECKS,
    Advisory,
    NamedRuntime,
    RuntimeCatalog,
    resolve_named_runtime,
    select_runtime,
)
from ome_operator.core.selection.scoring import runtime_score
from ome_operator.models import InferenceService, ServingRuntime, from_manifest
from tests.builders import entry, make_isvc, make_runtime

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"
MODE = "ome.io/deploymentMode"

#: "This ClusterServingRuntime runs its engine in the deprecated MultiNode mode:" (verbatim).
PAGE_RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-llama-3-3-70b-instruct-multinode
spec:
  supportedModelFormats:
    - modelFramework:
        name: transformers
        version: "4.47.0.dev0"
      modelFormat:
        name: safetensors
        version: "1.0.0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 2
  protocolVersions:
    - openAI
  modelSizeRange:
    min: 60B
    max: 75B
  engineConfig:
    annotations:
      ome.io/deploymentMode: MultiNode
    leader:
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
      runner:
        name: ome-container
        image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
        ports:
          - containerPort: 8080
            name: http1
            protocol: TCP
        command:
          - python3
          - -m
          - sglang.launch_server
          - --host
          - "0.0.0.0"
          - --port
          - "8080"
          - --model-path
          - $(MODEL_PATH)
          - --tp-size
          - "8"
          - --nccl-init
          - $(LWS_LEADER_ADDRESS):5000
          - --nnodes
          - $(LWS_GROUP_SIZE)
          - --node-rank
          - $(LWS_WORKER_INDEX)
          - --served-model-name
          - meta-llama/Llama-3.3-70B-Instruct
        volumeMounts:
          - mountPath: /dev/shm
            name: dshm
        resources:
          requests:
            nvidia.com/gpu: 4
          limits:
            nvidia.com/gpu: 4
    worker:
      size: 1
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
      runner:
        name: ome-container
        image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
        command:
          - python3
          - -m
          - sglang.launch_server
          - --host
          - "0.0.0.0"
          - --port
          - "8080"
          - --model-path
          - $(MODEL_PATH)
          - --tp-size
          - "8"
          - --nccl-init
          - $(LWS_LEADER_ADDRESS):5000
          - --nnodes
          - $(LWS_GROUP_SIZE)
          - --node-rank
          - $(LWS_WORKER_INDEX)
          - --served-model-name
          - meta-llama/Llama-3.3-70B-Instruct
        volumeMounts:
          - mountPath: /dev/shm
            name: dshm
        resources:
          requests:
            nvidia.com/gpu: 4
          limits:
            nvidia.com/gpu: 4
"""

#: "This InferenceService asks for OMENative for all its components:" (verbatim).
PAGE_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-70b
  namespace: llama-demo
spec:
  deploymentMode: OMENative
  model:
    name: llama-3-3-70b-instruct
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

#: The model the page names; the page gives no spec, so this one matches the example runtime.
MODEL = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterBaseModel",
    "metadata": {"name": "llama-3-3-70b-instruct"},
    "spec": {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.47.0.dev0"},
        "modelArchitecture": "LlamaForCausalLM",
        "modelParameterSize": "70B",
        "storage": {"storageUri": "hf://meta-llama/Llama-3.3-70B-Instruct"},
    },
}

#: "a ClusterServingRuntime with no autoSelect: true entry" that supports the model.
MANUAL = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterServingRuntime",
    "metadata": {"name": "srt-llama-3-3-70b-instruct-manual"},
    "spec": {
        "supportedModelFormats": [
            {
                "modelFramework": {"name": "transformers", "version": "4.47.0.dev0"},
                "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                "modelArchitecture": "LlamaForCausalLM",
                "priority": 1,
            }
        ],
        "modelSizeRange": {"min": "60B", "max": "75B"},
    },
}

RUNTIME_NAME = "srt-llama-3-3-70b-instruct-multinode"
REJECTION = (
    "runtime engine deployment mode MultiNode does not match requested engine deployment mode "
    "OMENative"
)
NO_RUNTIME = (
    "no runtime found to support model safetensors with format safetensors in namespace "
    "llama-demo. Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: "
    "srt-llama-3-3-70b-instruct-multinode (runtime engine deployment mode MultiNode does not "
    "match requested engine deployment mode OMENative)"
)
WARNING = (
    f'runtime "{RUNTIME_NAME}" does not declare support for model "llama-3-3-70b-instruct" '
    f"(runtime {RUNTIME_NAME} does not support model : runtime engine deployment mode MultiNode "
    "does not match requested engine deployment mode OMENative); proceeding because the runtime "
    "was named explicitly"
)
EVENT = (
    "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model "
    "llama-3-3-70b-instruct (runtime srt-llama-3-3-70b-instruct-multinode does not support model "
    ": runtime engine deployment mode MultiNode does not match requested engine deployment mode "
    "OMENative); proceeding because the runtime was named explicitly"
)


def _page_runtime(**changes: Any) -> ServingRuntime:
    """The example runtime, optionally with spec fields replaced or a new name."""
    raw = yaml.safe_load(PAGE_RUNTIME)
    name = changes.pop("name", None)
    if name is not None:
        raw["metadata"]["name"] = name
    raw["spec"].update(changes)
    return from_manifest(raw)


def _engine_config(mode: str | None) -> dict[str, Any]:
    """The example runtime's engineConfig declaring ``mode`` (or none)."""
    config = yaml.safe_load(PAGE_RUNTIME)["spec"]["engineConfig"]
    config.pop("annotations")
    if mode is not None:
        config["annotations"] = {MODE: mode}
    return config


def _page_isvc(**spec: Any) -> InferenceService:
    """The example InferenceService, with spec fields replaced (``None`` removes one)."""
    raw = yaml.safe_load(PAGE_ISVC)
    raw["spec"].update(spec)
    raw["spec"] = {k: v for k, v in raw["spec"].items() if v is not None}
    return from_manifest(raw)


def _model_spec():
    return from_manifest(MODEL).spec


def _select(isvc: InferenceService, *runtimes: ServingRuntime):
    return select_runtime(
        _model_spec(), "llama-3-3-70b-instruct", isvc, RuntimeCatalog.of(runtimes), "llama-demo"
    )


def _resolve(isvc: InferenceService, runtime: ServingRuntime, component: str) -> ResolvedMode:
    merged = merge_component(
        runtime.spec.config(component), isvc.spec.component(component), where=component
    )
    return resolve_component_mode(isvc, component, merged)


# --- The examples are the page's --------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "page"),
    [
        pytest.param(
            "clusterservingruntime-multinode.yaml",
            PAGE_RUNTIME,
            id="the sample runtime is the page's example runtime",
        ),
        pytest.param(
            "inferenceservice-llama-3-70b.yaml",
            PAGE_ISVC,
            id="the sample InferenceService is the page's example InferenceService",
        ),
    ],
)
def test_the_samples_are_the_page_examples(sample: str, page: str) -> None:
    assert yaml.safe_load((SAMPLES / sample).read_text()) == yaml.safe_load(page)


# --- Introduction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime_spec", "isvc_spec", "reason"),
    [
        pytest.param(
            {"engineConfig": _engine_config("MultiNode")},
            {},
            REJECTION,
            id="a runtime declaring another engine mode is skipped",
        ),
        pytest.param(
            {
                "engineConfig": _engine_config(None),
                "decoderConfig": {"annotations": {MODE: "MultiNode"}},
            },
            {"decoder": {}},
            "runtime decoder deployment mode MultiNode does not match requested decoder "
            "deployment mode OMENative",
            id="a runtime declaring another decoder mode is skipped",
        ),
        pytest.param(
            {"engineConfig": _engine_config("OMENative")},
            {"deploymentMode": "RawDeployment"},
            "runtime engine deployment mode OMENative does not match requested engine deployment "
            "mode RawDeployment",
            id="declaring a mode on a runtime keeps it away from services asking another",
        ),
    ],
)
def test_when_no_runtime_is_named_ome_skips_a_runtime_declaring_a_different_mode(
    runtime_spec: dict[str, Any], isvc_spec: dict[str, Any], reason: str
) -> None:
    """Page: "When an InferenceService doesn't name a runtime, OME skips any serving runtime that
    declares a different deployment mode for the engine or decoder than the InferenceService asks
    for. Declare a mode on a runtime to keep it away from InferenceServices that ask for a different
    one." """
    selection = _select(_page_isvc(**isvc_spec), _page_runtime(**runtime_spec))
    assert (selection.chosen, [v.reason for v in selection.verdicts]) == (None, [reason])


@pytest.mark.parametrize(
    "isvc_spec",
    [
        pytest.param({"deploymentMode": "OMENative"}, id="asking OMENative"),
        pytest.param({"deploymentMode": "RawDeployment"}, id="asking RawDeployment"),
        pytest.param(
            {"engine": {"annotations": {MODE: "MultiNode"}}, "decoder": {}},
            id="asking MultiNode for the engine",
        ),
        pytest.param(
            {"deploymentMode": None, "engine": {"annotations": {MODE: "VirtualDeployment"}}},
            id="asking VirtualDeployment for the engine",
        ),
        pytest.param({"deploymentMode": None}, id="asking no mode"),
    ],
)
def test_catalog_runtimes_declare_no_mode_so_they_always_pass(isvc_spec: dict[str, Any]) -> None:
    """Page: "The catalog runtimes declare no mode, so they always pass this check." """
    runtime = _page_runtime(engineConfig=_engine_config(None))
    assert _select(_page_isvc(**isvc_spec), runtime).chosen.runtime == runtime


# --- The matching rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runtime_spec", "isvc_spec", "reason"),
    [
        pytest.param(
            {
                "engineConfig": _engine_config(None),
                "decoderConfig": {"annotations": {MODE: "MultiNode"}},
            },
            {},
            None,
            id="the decoder is not compared when the InferenceService has no spec.decoder",
        ),
        pytest.param(
            {
                "engineConfig": _engine_config(None),
                "decoderConfig": {"annotations": {MODE: "MultiNode"}},
            },
            {"decoder": {}},
            "runtime decoder deployment mode MultiNode does not match requested decoder "
            "deployment mode OMENative",
            id="the decoder is compared when the InferenceService has a spec.decoder",
        ),
        pytest.param(
            {
                "engineConfig": _engine_config(None),
                "routerConfig": {"annotations": {MODE: "MultiNode"}},
            },
            {"router": {}},
            None,
            id="the router is not compared",
        ),
        pytest.param(
            {"engineConfig": _engine_config("MultiNode")},
            {"deploymentMode": None},
            None,
            id="only the runtime declaring a mode is not a rejection",
        ),
        pytest.param(
            {"engineConfig": _engine_config(None)},
            {},
            None,
            id="only the InferenceService declaring a mode is not a rejection",
        ),
        pytest.param(
            {"engineConfig": _engine_config("OMENative")},
            {},
            None,
            id="both sides declaring the same mode is not a rejection",
        ),
        pytest.param(
            {"engineConfig": _engine_config("MultiNode")},
            {},
            REJECTION,
            id="both sides declaring different modes for the same component is a rejection",
        ),
    ],
)
def test_the_matching_rule(
    runtime_spec: dict[str, Any], isvc_spec: dict[str, Any], reason: str | None
) -> None:
    """Page: "OME compares the engine's modes, and the decoder's when the InferenceService has a
    spec.decoder. It doesn't compare the router. It rejects the runtime when both sides declare a
    mode for the same component and the modes differ." """
    (verdict,) = _select(_page_isvc(**isvc_spec), _page_runtime(**runtime_spec)).verdicts
    assert verdict.reason == reason


def test_the_check_is_a_filter_that_adds_nothing_to_the_score() -> None:
    """Page: "The check is a filter: it adds nothing to a runtime's score." """
    declaring = _page_runtime(name="b-native", engineConfig=_engine_config("OMENative"))
    silent = _page_runtime(name="a-silent", engineConfig=_engine_config(None))
    selection = _select(_page_isvc(), declaring, silent)
    assert [(v.runtime.name, v.score) for v in selection.verdicts] == [
        ("a-silent", 4),
        ("b-native", 4),
    ]
    assert runtime_score(declaring, _model_spec()) == runtime_score(silent, _model_spec())


def test_the_mode_is_checked_before_the_model_format() -> None:
    """Page: "OME checks the mode before the model format, so runtimes built for other models can
    show a mode rejection too." """
    other_model = _page_runtime(supportedModelFormats=[entry("pytorch", autoSelect=True)])
    (verdict,) = _select(_page_isvc(), other_model).verdicts
    assert (verdict.exclusion.check, verdict.reason) == ("deployment_mode", REJECTION)


def test_every_check_is_listed_in_order() -> None:
    """Page: "Troubleshoot runtime selection lists every check in order." """
    assert CHECKS == (
        "disabled",
        "accelerator_class",
        "deployment_mode",
        "model_format",
        "model_size",
    )


# --- Where each side declares a mode ----------------------------------------------------------


@pytest.mark.parametrize(
    ("isvc_spec", "expected"),
    [
        pytest.param(
            {"deploymentMode": "OMENative"},
            DeploymentMode.OME_NATIVE,
            id="an InferenceService can set spec.deploymentMode",
        ),
        pytest.param(
            {"deploymentMode": None, "engine": {"annotations": {MODE: "MultiNode"}}},
            DeploymentMode.MULTI_NODE,
            id="an InferenceService component can use the ome.io/deploymentMode annotation",
        ),
    ],
)
def test_the_inference_service_declares_by_annotation_or_spec(
    isvc_spec: dict[str, Any], expected: DeploymentMode
) -> None:
    """Page: "Both sides use the ome.io/deploymentMode annotation, and an InferenceService can also
    set spec.deploymentMode" (the InferenceService side)."""
    assert requested_mode(_page_isvc(**isvc_spec), "engine") == expected


def test_the_runtime_declares_by_annotation() -> None:
    """Page: "Both sides use the ome.io/deploymentMode annotation" (the runtime side)."""
    assert runtime_mode(_page_runtime(), "engine") == DeploymentMode.MULTI_NODE


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        pytest.param(
            "RawDeployment",
            "runtime engine deployment mode RawDeployment does not match requested engine "
            "deployment mode OMENative",
            id="RawDeployment counts",
        ),
        pytest.param("OMENative", None, id="OMENative counts"),
        pytest.param("MultiNode", REJECTION, id="MultiNode counts"),
        pytest.param(
            "VirtualDeployment",
            "runtime engine deployment mode VirtualDeployment does not match requested engine "
            "deployment mode OMENative",
            id="VirtualDeployment counts",
        ),
        pytest.param("multinode", None, id="values are case-sensitive"),
        pytest.param("MultiNodes", None, id="a misspelled value silently counts as no mode"),
    ],
)
def test_a_mode_counts_only_when_its_value_is_one_of_the_four(
    value: str, reason: str | None
) -> None:
    """Page: "A mode counts when its value is RawDeployment, OMENative (since v1.3), MultiNode
    (deprecated) or VirtualDeployment (legacy). Annotation values are case-sensitive, and OME
    silently treats a misspelled one as no mode." """
    (verdict,) = _select(_page_isvc(), _page_runtime(engineConfig=_engine_config(value))).verdicts
    assert verdict.reason == reason


def test_a_misspelled_inference_service_annotation_is_no_mode() -> None:
    """Page: "OME silently treats a misspelled one as no mode" (the InferenceService side)."""
    isvc = _page_isvc(deploymentMode=None, engine={"annotations": {MODE: "OMEnative"}})
    (verdict,) = _select(isvc, _page_runtime()).verdicts
    assert (verdict.qualifies, verdict.reason) == (True, None)


_COMPLETE_ENGINE = {"runner": {"image": "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64"}}


@pytest.mark.parametrize(
    ("isvc_spec", "expected"),
    [
        pytest.param(
            {"engine": _COMPLETE_ENGINE, "decoder": {"annotations": {MODE: "RawDeployment"}}},
            AdmissionVerdict(
                False,
                'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not '
                'match decoder deploymentMode="RawDeployment"; when either is OMENative, both '
                "must use the same value",
            ),
            id="an OMENative engine denies a decoder asking another mode",
        ),
        pytest.param(
            {
                "deploymentMode": None,
                "engine": _COMPLETE_ENGINE,
                "decoder": {"annotations": {MODE: "OMENative"}},
            },
            AdmissionVerdict(
                False,
                'InvalidDeploymentModeCombination: engine deploymentMode="" does not match '
                'decoder deploymentMode="OMENative"; when either is OMENative, both must use the '
                "same value",
            ),
            id="an OMENative decoder denies an engine asking no mode",
        ),
        pytest.param(
            {"engine": _COMPLETE_ENGINE, "decoder": {}},
            AdmissionVerdict(True),
            id="an engine and a decoder asking the same mode are admitted",
        ),
    ],
)
def test_the_webhook_requires_one_mode_when_either_component_asks_for_omenative(
    isvc_spec: dict[str, Any], expected: AdmissionVerdict
) -> None:
    """Page: "Since v1.3, when the engine or the decoder asks for OMENative, the webhook requires
    both to ask for the same mode." """
    verdict = review_inference_service(
        _page_isvc(**isvc_spec),
        ModelCatalog.of([from_manifest(MODEL)]),
        RuntimeCatalog.of([_page_runtime()]),
    )
    assert verdict == expected


# --- The runtime's mode also sets the running mode --------------------------------------------


@pytest.mark.parametrize(
    "component", ["engine", "decoder", "router"], ids=lambda c: f"{c} config annotations"
)
def test_runtime_configs_are_merged_into_declared_components_annotations_included(
    component: str,
) -> None:
    """Page: "OME merges the runtime's engineConfig, decoderConfig and routerConfig into the
    components the InferenceService declares, annotations included." """
    runtime = make_runtime(**{f"{component}Config": {"annotations": {MODE: "MultiNode", "a": "1"}}})
    isvc = make_isvc(**{component: {"annotations": {"b": "2"}}})
    merged = merge_component(
        runtime.spec.config(component), isvc.spec.component(component), where=component
    )
    assert merged.annotations == {MODE: "MultiNode", "a": "1", "b": "2"}


@pytest.mark.parametrize(
    ("isvc_spec", "expected"),
    [
        pytest.param(
            {},
            ResolvedMode(DeploymentMode.MULTI_NODE, ModeSource.COMPONENT_ANNOTATION),
            id="the runtime's mode comes ahead of spec.deploymentMode",
        ),
        pytest.param(
            {"engine": {"annotations": {MODE: "OMENative"}}},
            ResolvedMode(DeploymentMode.OME_NATIVE, ModeSource.COMPONENT_ANNOTATION),
            id="only the component's own annotation in the InferenceService overrides it",
        ),
        pytest.param(
            {"deploymentMode": None},
            ResolvedMode(DeploymentMode.MULTI_NODE, ModeSource.COMPONENT_ANNOTATION),
            id="a service declaring no mode runs in the runtime's mode",
        ),
    ],
)
def test_the_runtime_s_mode_becomes_the_component_s_mode(
    isvc_spec: dict[str, Any], expected: ResolvedMode
) -> None:
    """Page: "So a runtime's mode becomes the component's mode, ahead of spec.deploymentMode, and
    only the component's own annotation in the InferenceService overrides it." """
    assert _resolve(_page_isvc(**isvc_spec), _page_runtime(), "engine") == expected


def test_a_service_declaring_no_mode_can_get_a_multinode_runtime_and_run_as_multinode() -> None:
    """Page: "An InferenceService that declares no mode can get a MultiNode runtime and run as
    MultiNode." The resolved mode and the rule that set it are what ``effective`` shows."""
    isvc = _page_isvc(deploymentMode=None)
    chosen = _select(isvc, _page_runtime()).runtime()
    assert (chosen.name, _resolve(isvc, chosen, "engine")) == (
        RUNTIME_NAME,
        ResolvedMode(DeploymentMode.MULTI_NODE, ModeSource.COMPONENT_ANNOTATION),
    )


def test_a_multinode_router_config_passes_matching_but_the_router_cannot_run_it() -> None:
    """Page: "A runtime whose routerConfig declares MultiNode passes matching, but a router can't
    run in that mode. For an InferenceService that sets spec.router and gets that runtime, OME can't
    create or update the router. The manager logs Failed to reconcile component with invalid
    deployment mode for router" (the error text; the log record belongs to the controller)."""
    runtime = _page_runtime(
        engineConfig=_engine_config(None), routerConfig={"annotations": {MODE: "MultiNode"}}
    )
    isvc = _page_isvc(router={})
    chosen = _select(isvc, runtime).runtime()
    engine, router = _resolve(isvc, chosen, "engine"), _resolve(isvc, chosen, "router")
    check_component_mode("engine", engine)
    with pytest.raises(InvalidComponentModeError) as caught:
        check_component_mode("router", router)
    assert (chosen, router, str(caught.value)) == (
        runtime,
        ResolvedMode(DeploymentMode.MULTI_NODE, ModeSource.COMPONENT_ANNOTATION),
        "invalid deployment mode for router",
    )


# --- Example ----------------------------------------------------------------------------------


def test_the_example_runtime_runs_its_engine_in_multinode() -> None:
    """Page: "This ClusterServingRuntime runs its engine in the deprecated MultiNode mode" """
    runtime = _page_runtime()
    resolved = _resolve(make_isvc(model=None), runtime, "engine")
    assert (runtime.kind, runtime_mode(runtime, "engine"), resolved) == (
        "ClusterServingRuntime",
        DeploymentMode.MULTI_NODE,
        ResolvedMode(DeploymentMode.MULTI_NODE, ModeSource.COMPONENT_ANNOTATION),
    )


def test_the_example_inference_service_asks_omenative_for_all_its_components() -> None:
    """Page: "This InferenceService asks for OMENative for all its components" """
    isvc = _page_isvc(decoder={}, router={})
    no_modes = make_runtime("plain")
    assert [_resolve(isvc, no_modes, c) for c in ("engine", "decoder", "router")] == [
        ResolvedMode(DeploymentMode.OME_NATIVE, ModeSource.SERVICE_SPEC)
    ] * 3


def test_the_model_is_a_cluster_base_model_the_default_kind() -> None:
    """Page: "llama-3-3-70b-instruct is a ClusterBaseModel, the default kind." """
    isvc = _page_isvc()
    model = from_manifest(MODEL)
    found = ModelCatalog.of([model]).referenced(isvc.spec.model, isvc.namespace)
    assert (isvc.spec.model.kind, found) == ("ClusterBaseModel", model)


@pytest.mark.parametrize(
    ("mode", "skipped"),
    [
        pytest.param("MultiNode", True, id="the example's MultiNode engine is skipped"),
        pytest.param("RawDeployment", True, id="a RawDeployment engine is skipped"),
        pytest.param("VirtualDeployment", True, id="a VirtualDeployment engine is skipped"),
        pytest.param("OMENative", False, id="an OMENative engine is not skipped"),
        pytest.param(None, False, id="an engine declaring no mode is not skipped"),
    ],
)
def test_auto_selection_skips_every_runtime_whose_engine_declares_another_mode(
    mode: str | None, skipped: bool
) -> None:
    """Page: "Auto-selection skips the runtime above, and any other runtime whose engine declares a
    mode other than OMENative." """
    runtime = _page_runtime(name="other", engineConfig=_engine_config(mode))
    (verdict,) = _select(_page_isvc(), runtime).verdicts
    assert (verdict.exclusion is not None, verdict.qualifies) == (skipped, not skipped)


# --- Where a rejection shows up ---------------------------------------------------------------


def test_the_rule_applies_when_picking_and_when_checking_a_named_runtime() -> None:
    """Page: "OME applies the rule when it picks a runtime, and when it checks a runtime that the
    InferenceService names." """
    catalog = RuntimeCatalog.of([_page_runtime()])
    picked = _select(_page_isvc(), _page_runtime()).verdicts[0].reason
    named = resolve_named_runtime(
        _page_isvc(runtime={"name": RUNTIME_NAME}), catalog, _model_spec()
    ).advisory.inner
    assert (picked, named) == (
        REJECTION,
        f"runtime {RUNTIME_NAME} does not support model : {REJECTION}",
    )


@pytest.mark.parametrize(
    ("runtime_spec", "isvc_spec", "expected"),
    [
        pytest.param(
            {},
            {},
            "runtime engine deployment mode MultiNode does not match requested engine deployment "
            "mode OMENative",
            id="the page's reason, with engine as the component and the runtime's mode first",
        ),
        pytest.param(
            {
                "engineConfig": _engine_config(None),
                "decoderConfig": {"annotations": {MODE: "MultiNode"}},
            },
            {"decoder": {}},
            "runtime decoder deployment mode MultiNode does not match requested decoder "
            "deployment mode OMENative",
            id="with decoder as the component",
        ),
    ],
)
def test_a_rejection_gives_this_reason(
    runtime_spec: dict[str, Any], isvc_spec: dict[str, Any], expected: str
) -> None:
    """Page: "A rejection gives this reason, with engine or decoder as the component and the
    runtime's mode first" """
    (verdict,) = _select(_page_isvc(**isvc_spec), _page_runtime(**runtime_spec)).verdicts
    assert verdict.reason == expected


def test_the_no_runtime_message() -> None:
    """Page: "When the only runtimes are the example runtime and a ClusterServingRuntime with no
    autoSelect: true entry, the example InferenceService gets this message: [...] The message names
    the model by its format, and leaves out the other runtime because it passed every check." """
    selection = _select(_page_isvc(), _page_runtime(), from_manifest(MANUAL))
    assert (selection.chosen, str(selection.failure)) == (None, NO_RUNTIME)


def test_the_no_runtime_message_is_the_webhook_denial_reason() -> None:
    """The same message reaches the user who applies the example InferenceService (S7.2.6)."""
    verdict = review_inference_service(
        _page_isvc(),
        ModelCatalog.of([from_manifest(MODEL)]),
        RuntimeCatalog.of([_page_runtime(), from_manifest(MANUAL)]),
    )
    assert verdict == AdmissionVerdict(
        False,
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have "
        f"complete runner configuration: {NO_RUNTIME}",
    )


def test_the_named_runtime_event() -> None:
    """Page: "If the example InferenceService also sets spec.runtime.name:
    srt-llama-3-3-70b-instruct-multinode, the event is: [...]" """
    runtime = _page_runtime()
    isvc = _page_isvc(runtime={"name": RUNTIME_NAME})
    found = resolve_named_runtime(isvc, RuntimeCatalog.of([runtime]), _model_spec())
    expected_inner = f"runtime {RUNTIME_NAME} does not support model : {REJECTION}"
    assert found == NamedRuntime(
        runtime, Advisory(RUNTIME_NAME, "llama-3-3-70b-instruct", expected_inner)
    )
    assert found.advisory.event() == EVENT


# --- Resolve a conflict -----------------------------------------------------------------------


def test_an_omenative_copy_of_a_multinode_runtime_is_picked_and_runs_omenative() -> None:
    """Page: "Use a runtime that declares the InferenceService's mode, or none. To move a MultiNode
    runtime to OMENative, make an OMENative copy of it." """
    copy = _page_runtime(
        name="srt-llama-3-3-70b-instruct-omenative", engineConfig=_engine_config("OMENative")
    )
    isvc = _page_isvc()
    chosen = _select(isvc, _page_runtime(), copy).runtime()
    assert (chosen, _resolve(isvc, chosen, "engine")) == (
        copy,
        ResolvedMode(DeploymentMode.OME_NATIVE, ModeSource.COMPONENT_ANNOTATION),
    )


@pytest.mark.parametrize(
    "isvc_spec",
    [
        pytest.param(
            {"engine": {"annotations": {MODE: "MultiNode"}}},
            id="changing the component's mode to the runtime's",
        ),
        pytest.param({"deploymentMode": None}, id="removing the InferenceService's mode"),
    ],
)
def test_either_way_the_component_runs_in_the_runtime_s_mode(isvc_spec: dict[str, Any]) -> None:
    """Page: "Change the InferenceService's mode for that component to the runtime's, or remove it.
    Either way, the component runs in the runtime's mode." """
    isvc = _page_isvc(**isvc_spec)
    chosen = _select(isvc, _page_runtime()).runtime()
    assert (chosen.name, _resolve(isvc, chosen, "engine").mode) == (
        RUNTIME_NAME,
        DeploymentMode.MULTI_NODE,
    )


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        pytest.param(
            {},
            ResolvedMode(DeploymentMode.MULTI_NODE, ModeSource.COMPONENT_ANNOTATION),
            id="a named runtime runs the component in the runtime's mode",
        ),
        pytest.param(
            {"annotations": {MODE: "OMENative"}},
            ResolvedMode(DeploymentMode.OME_NATIVE, ModeSource.COMPONENT_ANNOTATION),
            id="unless the component's own annotation sets one",
        ),
    ],
)
def test_a_named_runtime_is_used_with_a_warning(
    engine: dict[str, Any], expected: ResolvedMode
) -> None:
    """Page: "Name the runtime in spec.runtime.name. OME uses it with a warning, and the component
    runs in the runtime's mode unless the component's own annotation sets one." """
    runtime = _page_runtime()
    isvc = _page_isvc(runtime={"name": RUNTIME_NAME}, engine=engine)
    verdict = review_inference_service(
        isvc, ModelCatalog.of([from_manifest(MODEL)]), RuntimeCatalog.of([runtime])
    )
    named = resolve_named_runtime(isvc, RuntimeCatalog.of([runtime]), _model_spec())
    assert (verdict, named.runtime, _resolve(isvc, named.runtime, "engine")) == (
        AdmissionVerdict(True, "", (WARNING,)),
        runtime,
        expected,
    )


def test_the_named_runtime_warning_text() -> None:
    """The warning the webhook returns for the example with spec.runtime.name (S7.3.1)."""
    isvc = _page_isvc(runtime={"name": RUNTIME_NAME})
    named = resolve_named_runtime(isvc, RuntimeCatalog.of([_page_runtime()]), _model_spec())
    assert named.advisory.warning() == WARNING


@pytest.mark.parametrize(
    "auto_select",
    [pytest.param(None, id="autoSelect unset"), pytest.param(False, id="autoSelect false")],
)
def test_a_runtime_without_autoselect_entries_is_only_used_where_named(
    auto_select: bool | None,
) -> None:
    """Page: "To keep InferenceServices that declare no mode off a runtime, leave autoSelect unset
    or false on all its entries. Then name the runtime where you need it." """
    formats = yaml.safe_load(PAGE_RUNTIME)["spec"]["supportedModelFormats"]
    for found in formats:
        found.pop("autoSelect")
        if auto_select is not None:
            found["autoSelect"] = auto_select
    runtime = _page_runtime(supportedModelFormats=formats)
    auto = _select(_page_isvc(deploymentMode=None), runtime)
    named = resolve_named_runtime(
        _page_isvc(deploymentMode=None, runtime={"name": RUNTIME_NAME}),
        RuntimeCatalog.of([runtime]),
        _model_spec(),
    )
    assert (auto.chosen, named) == (None, NamedRuntime(runtime))
