"""The admission webhook over HTTP (S7, S16.3, S10): real AdmissionReviews to the running operator.

kopf serves the handler id ``X`` at ``<webhook_url>/X``. The emulator is seeded first; the
webhook reads models, runtimes and AcceleratorClasses from the operator's watch-fed caches, so a
test waits until they show there before it asks. Each row compares the whole AdmissionReview
``response`` (``allowed``, ``status.message``, ``warnings``) with S7's exact texts, and the
``ome_webhook_requests_total`` sample it moved.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import aiohttp
import pytest

from tests.builders import entry, isvc_manifest, model_manifest, nested, runtime_manifest
from tests.support.kube_access import apply_object, eventually
from tests.support.kube_emulator import ApiServerLikeEmulator
from tests.support.operator_run import RunningOperator, running_operator

NS = "default"
UID = "705ab4f5-6393-11e8-b7cc-42010a800002"
MODE = "ome.io/deploymentMode"
REQUESTS = "ome_webhook_requests_total"
WARNINGS = "ome_webhook_warnings_total"
DENIED = 403

#: kind -> (webhook path, plural)
WEBHOOKS = {
    "InferenceService": ("validate-inferenceservice", "inferenceservices"),
    "ClusterServingRuntime": ("validate-clusterservingruntime", "clusterservingruntimes"),
    "ServingRuntime": ("validate-servingruntime", "servingruntimes"),
}


def _accelerator_class(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "AcceleratorClass",
        "metadata": {"name": name},
        "spec": {},
    }


#: What the cluster holds before each review: models, runtimes and one AcceleratorClass.
SEED = (
    model_manifest("llama"),
    model_manifest("off", disabled=True),
    model_manifest("sharded", distribution="Sharded"),
    model_manifest("nameless", fmt=""),
    runtime_manifest("rt"),
    runtime_manifest(
        "multinode",
        formats=[entry()],
        engineConfig={"annotations": {MODE: "MultiNode"}},
    ),
    runtime_manifest("off-rt", disabled=True),
    _accelerator_class("nvidia-a100"),
)
SEEDED_RUNTIMES = ["multinode", "off-rt", "rt"]
SEEDED_MODELS = ["llama", "nameless", "off", "sharded"]

# --- texts of S7 and S16.3 -------------------------------------------------------------------

AUTO = "Runtime rt will be auto-selected for model llama"
NO_SUPPORT = (
    "no supporting runtime found for model llama and engine does not have complete runner "
    "configuration: "
)
VALID_MODES = "valid values are RawDeployment, OMENative, MultiNode, VirtualDeployment"


def _strategy(component: str, mode: str) -> str:
    return (
        f'{component}.deploymentStrategy is set but deploymentMode is "{mode}"; '
        "deploymentStrategy applies only to RawDeployment and is ignored here \u2014 use "
        f"{component}.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
    )


def _typo(value: str, place: str, suggestion: str | None = None) -> str:
    text = f'{MODE} "{value}" on {place} is not a deployment mode and is ignored; {VALID_MODES}'
    return text + (f"; did you mean {suggestion}?" if suggestion else "")


#: S16.7: a new cluster runtime "csr" with rt's one autoSelect entry ties with rt for llama.
TIES_WITH_RT = (
    "runtime csr ties with rt for model llama (score 2): the name decides, csr is selected"
)


def allowed(*warnings: str) -> dict[str, Any]:
    """The AdmissionResponse of an admitted object."""
    response: dict[str, Any] = {"uid": UID, "allowed": True}
    if warnings:
        response["warnings"] = list(warnings)
    return response


def denied(message: str, *warnings: str) -> dict[str, Any]:
    """The AdmissionResponse of a denial: the message text alone, warnings kept."""
    response: dict[str, Any] = {"uid": UID, "allowed": False}
    if warnings:
        response["warnings"] = list(warnings)
    response["status"] = {"message": message, "code": DENIED}
    return response


# --- talking to the webhook ------------------------------------------------------------------


def admission_review(
    obj: dict[str, Any] | None, *, operation: str = "CREATE", old: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An ``admission.k8s.io/v1`` AdmissionReview request, as the API server sends it."""
    subject = obj if obj is not None else old
    assert subject is not None
    group, _, version = subject["apiVersion"].partition("/")
    kind = subject["kind"]
    meta = subject.get("metadata") or {}
    request: dict[str, Any] = {
        "uid": UID,
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": WEBHOOKS[kind][1]},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": {"group": group, "version": version, "resource": WEBHOOKS[kind][1]},
        "name": meta.get("name", ""),
        "operation": operation,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{operation.title()}Options"},
    }
    if "namespace" in meta:
        request["namespace"] = meta["namespace"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


async def post_review(operator: RunningOperator, review: dict[str, Any]) -> dict[str, Any]:
    """POST the review to the kind's webhook path; the ``response`` of the answer."""
    subject = review["request"]["object"] or review["request"]["oldObject"]
    path = WEBHOOKS[subject["kind"]][0]
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{operator.webhook_url}/{path}", json=review) as answer:
            assert answer.status == 200, await answer.text()
            body = await answer.json()
    assert (body["apiVersion"], body["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    return body["response"]


async def answered(
    operator: RunningOperator, review: dict[str, Any], *, timeout: float = 10.0
) -> dict[str, Any]:
    """``post_review`` once the webhook server listens: kopf starts it after the operator is
    ready, once the resources are scanned."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return await post_review(operator, review)
        except aiohttp.ClientConnectorError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.02)


def samples(operator: RunningOperator, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Every sample of a counter, keyed by its sorted labels."""
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in operator.registry.collect()
        for sample in family.samples
        if sample.name == name
    }


async def seeded(kube: ApiServerLikeEmulator, operator: RunningOperator) -> None:
    """Seed ``SEED`` and wait until the webhook's caches hold all of it.

    The caches are bound to kopf's indexes by the first handler call; a review of an
    (admitted) runtime that needs no AcceleratorClass makes that call.
    """
    for manifest in SEED:
        await apply_object(kube, manifest)
    await answered(operator, admission_review(runtime_manifest("warm-up")))
    caches = operator.controller.caches

    def visible() -> bool:
        models = [m for m in SEEDED_MODELS if caches.models(NS, m).lookup(NS, m) is not None]
        return (
            [r.name for r in caches.runtimes(NS)] == SEEDED_RUNTIMES
            and models == SEEDED_MODELS
            and caches.accelerator_class_names() == {"nvidia-a100"}
        )

    await eventually(visible, timeout=10.0)


def isvc(name: str = "svc", **kwargs: Any) -> dict[str, Any]:
    return isvc_manifest(name, namespace=NS, **kwargs)


# --- InferenceService: S7.2 denials, S7.3 warnings, S16.3 typo warnings ------------------------

ISVC_ROWS = [
    # S7.2.1
    pytest.param(
        isvc(model=None),
        denied("at least one of spec.model or spec.runtime must be set"),
        id="7.2.1: neither spec.model nor spec.runtime is denied",
    ),
    # S7.2.2
    pytest.param(
        isvc(engine={"minAvailable": 1, "maxUnavailable": "50%"}),
        denied("spec.engine.minAvailable and spec.engine.maxUnavailable cannot both be set"),
        id="7.2.2: minAvailable and maxUnavailable together are denied",
    ),
    pytest.param(
        isvc(router={"maxUnavailable": "150%"}),
        denied(
            "spec.router.maxUnavailable must be a non-negative integer or a percentage from "
            "0% to 100%"
        ),
        id="7.2.2: a percentage above 100% is denied",
    ),
    pytest.param(
        isvc(decoder={"minAvailable": -1}),
        denied(
            "spec.decoder.minAvailable must be a non-negative integer or a percentage from "
            "0% to 100%"
        ),
        id="7.2.2: a negative integer is denied",
    ),
    # S7.2.3
    pytest.param(
        isvc(engine={"leader": {}}),
        denied(
            "InvalidLeaderWorkerPairing: engine declares leader without worker; "
            "declare both or neither"
        ),
        id="7.2.3: an engine leader without a worker is denied",
    ),
    pytest.param(
        isvc(decoder={"worker": {"size": 2}}),
        denied(
            "InvalidLeaderWorkerPairing: decoder declares worker without leader; "
            "declare both or neither"
        ),
        id="7.2.3: a decoder worker without a leader is denied",
    ),
    # S7.2.4
    pytest.param(
        isvc(engine={"annotations": {MODE: "OMENative"}}, decoder={}),
        denied(
            'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not match '
            'decoder deploymentMode=""; when either is OMENative, both must use the same value'
        ),
        id="7.2.4: an OMENative engine with a decoder declaring no mode is denied",
    ),
    pytest.param(
        isvc(deploymentMode="OMENative", decoder={"annotations": {MODE: "RawDeployment"}}),
        denied(
            'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not match '
            'decoder deploymentMode="RawDeployment"; when either is OMENative, both must use '
            "the same value"
        ),
        id="7.2.4: the decoder's own annotation beats spec.deploymentMode",
    ),
    # S7.2.5
    pytest.param(
        isvc(model="ghost"),
        denied(
            'referenced model "ghost" not found in namespace "default": ensure a BaseModel '
            "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
        ),
        id="7.2.5: a model that exists nowhere is denied",
    ),
    pytest.param(
        isvc(model="off"),
        denied("model off is disabled"),
        id="7.2.5: a disabled model is denied",
    ),
    pytest.param(
        isvc(model="sharded"),
        denied(
            "model sharded uses distribution Sharded: no model cache provider is configured for "
            "sharded model loading"
        ),
        id="7.2.5: a Sharded model is denied",
    ),
    # S7.2.6, named
    pytest.param(
        isvc(runtime={"name": "ghost-rt"}),
        denied("runtime ghost-rt not found in namespace default or at cluster scope"),
        id="7.2.6: a named runtime that exists nowhere is denied",
    ),
    pytest.param(
        isvc(runtime={"name": "rt", "kind": "ServingRuntime"}),
        denied("ServingRuntime rt not found in namespace default"),
        id="7.2.6: kind ServingRuntime looks only in the namespace",
    ),
    pytest.param(
        isvc(runtime={"name": "off-rt"}),
        denied("cluster-scoped runtime off-rt is disabled"),
        id="7.2.6: a disabled named runtime is denied",
    ),
    pytest.param(
        isvc(model=None, runtime={"name": "off-rt"}),
        denied("cluster-scoped runtime off-rt is disabled"),
        id="7.2.6: a disabled named runtime is denied without a model too",
    ),
    pytest.param(
        isvc(model=None, runtime={"name": "ghost-rt"}),
        allowed(),
        id="7.2.6: without a model a missing named runtime is admitted",
    ),
    pytest.param(
        isvc(model="nameless", runtime={"name": "rt"}),
        denied("invalid model specification: modelFormat.name: model format name is required"),
        id="7.2.6: a named runtime with a model failing a pre-check is denied with its text",
    ),
    # S7.2.6, auto
    pytest.param(
        isvc(acceleratorSelector={"acceleratorClass": "nvidia-h100"}),
        denied(
            NO_SUPPORT + "no runtime found to support model safetensors with format safetensors in "
            "namespace default. Checked 3 runtimes (0 namespace-scoped, 3 cluster-scoped). "
            "Excluded runtimes: multinode (runtime does not support the required accelerator "
            "class); off-rt (runtime is disabled); rt (runtime does not support the required "
            "accelerator class)"
        ),
        id="7.2.6: auto-selection finding no runtime is denied with the S2.12 message",
    ),
    pytest.param(
        isvc(model="nameless"),
        denied(
            "no supporting runtime found for model nameless and engine does not have complete "
            "runner configuration: invalid model specification: modelFormat.name: model format "
            "name is required"
        ),
        id="7.2.6: auto-selection failing a model pre-check is denied with the S2.2 text",
    ),
    pytest.param(
        isvc(
            acceleratorSelector={"acceleratorClass": "nvidia-h100"},
            engine={"runner": {"image": "vllm:1"}},
        ),
        allowed(),
        id="7.2.6: an engine with a complete runner skips auto-selection",
    ),
    pytest.param(
        isvc(
            acceleratorSelector={"acceleratorClass": "nvidia-h100"},
            engine={
                "leader": {"runner": {"image": "vllm:1"}},
                "worker": {"runner": {"image": "vllm:1"}},
            },
        ),
        allowed(),
        id="7.2.6: a leader and a worker runner image make a complete runner too",
    ),
    # S7.3.1
    pytest.param(
        isvc(deploymentMode="OMENative", runtime={"name": "multinode"}),
        allowed(
            'runtime "multinode" does not declare support for model "llama" (runtime multinode '
            "does not support model : runtime engine deployment mode MultiNode does not match "
            "requested engine deployment mode OMENative); proceeding because the runtime was "
            "named explicitly"
        ),
        id="7.3.1: a named runtime not declaring support warns",
    ),
    pytest.param(
        isvc(deploymentMode="OMENative", runtime={"name": "multinode", "autoSync": False}),
        allowed(
            'runtime "multinode" does not declare support for model "llama" (runtime multinode '
            "does not support model : runtime engine deployment mode MultiNode does not match "
            "requested engine deployment mode OMENative); proceeding because the runtime was "
            "named explicitly"
        ),
        id="7.3.1: autoSync false still warns",
    ),
    pytest.param(
        isvc(runtime={"name": "multinode"}),
        allowed(),
        id="7.3.1: a named runtime that supports the model does not warn",
    ),
    # S7.3.2
    pytest.param(isvc(), allowed(AUTO), id="7.3.2: a successful auto-selection warns"),
    # S7.3.3
    pytest.param(
        isvc(
            deploymentMode="OMENative",
            engine={"deploymentStrategy": {"type": "Recreate"}},
            router={"deploymentStrategy": {"type": "Recreate"}},
        ),
        allowed(AUTO, _strategy("engine", "OMENative"), _strategy("router", "OMENative")),
        id="7.3.3: deploymentStrategy under OMENative warns per component, after selection",
    ),
    pytest.param(
        isvc(
            annotations={MODE: "MultiNode"},
            engine={"deploymentStrategy": {"type": "Recreate"}},
        ),
        allowed(AUTO, _strategy("engine", "MultiNode")),
        id="7.3.3: the metadata annotation's mode counts when spec.deploymentMode is unset",
    ),
    pytest.param(
        isvc(
            deploymentMode="RawDeployment",
            engine={"deploymentStrategy": {"type": "Recreate"}},
        ),
        allowed(AUTO),
        id="7.3.3: deploymentStrategy under RawDeployment does not warn",
    ),
    pytest.param(
        isvc(
            engine={
                "annotations": {MODE: "OMENative"},
                "deploymentStrategy": {"type": "Recreate"},
            }
        ),
        allowed(AUTO),
        id="7.3.3: a component-annotation mode does not warn (OPEN-29)",
    ),
    # S16.3
    pytest.param(
        isvc(
            annotations={MODE: "MultiNodeRayVLLM"},
            engine={"annotations": {MODE: "omenative"}},
            router={"annotations": {MODE: "virtualdeployment"}},
        ),
        allowed(
            AUTO,
            _typo("MultiNodeRayVLLM", "metadata.annotations"),
            _typo("omenative", "spec.engine.annotations", "OMENative"),
            _typo("virtualdeployment", "spec.router.annotations", "VirtualDeployment"),
        ),
        id="16.3: every misspelled mode warns, with a suggestion when only the case differs",
    ),
    pytest.param(
        isvc(model="ghost", engine={"annotations": {MODE: "rawdeployment"}}),
        denied(
            'referenced model "ghost" not found in namespace "default": ensure a BaseModel '
            "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name",
            _typo("rawdeployment", "spec.engine.annotations", "RawDeployment"),
        ),
        id="16.3: a denial still carries the typo warnings",
    ),
    # a malformed object
    pytest.param(
        isvc(engine={"minReplicas": "2"}),
        denied(
            'InferenceService "default/svc" is invalid: spec.engine.minReplicas: '
            'must be an integer (got "2")'
        ),
        id="a malformed InferenceService is denied naming the field and the value",
    ),
    # limits (issue 8): what the operator could not read or the API server could not store
    pytest.param(
        isvc(engine={"runner": {"image": "vllm:1", "x-config": nested(5_000)}}),
        denied(
            'InferenceService "default/svc" is invalid: spec.engine.runner["x-config"]'
            + ".a" * 96
            + ": nested more than 100 levels deep (the limit is 100)"
        ),
        id="an object nested deeper than the limit is denied with the path where it goes over",
    ),
    pytest.param(
        isvc(annotations={"note": "x" * 1_600_000}),
        denied(
            'InferenceService "default/svc" is invalid: (root): the object is 1600177 bytes '
            "as JSON, over the 1572864 bytes an API server stores per object "
            "(etcd's request limit)"
        ),
        id="an object too big to store is denied with its size and the limit",
    ),
    pytest.param(
        isvc(engine={"minReplicas": 10**30}),
        denied(f"spec.engine.minReplicas must be from 0 to 2147483647 (got {10**30})"),
        id="a minReplicas beyond int32 is denied",
    ),
]


@pytest.mark.parametrize(("manifest", "expected"), ISVC_ROWS)
async def test_inference_service_review_answers_as_s7_says(
    kube: ApiServerLikeEmulator,
    operator: RunningOperator,
    manifest: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    await seeded(kube, operator)
    labels = {"kind": "InferenceService", "operation": "CREATE"}
    verdict = str(expected["allowed"]).lower()
    before = operator.metric(REQUESTS, **labels, allowed=verdict)

    assert await post_review(operator, admission_review(manifest)) == expected
    assert operator.metric(REQUESTS, **labels, allowed=verdict) == before + 1


# --- ServingRuntime / ClusterServingRuntime: S7.4 denials, S16.3 typo warnings -----------------


def _classes(*names: str) -> dict[str, Any]:
    return {"acceleratorRequirements": {"acceleratorClasses": list(names)}}


UNKNOWN = "unknown accelerator classes referenced in AcceleratorRequirements: "
PRIORITIES = "different priorities assigned for the model format"

RUNTIME_ROWS = [
    pytest.param(
        runtime_manifest("csr", **_classes("nvidia-h200", "nvidia-a100", "nvidia-h100")),
        denied(UNKNOWN + "[nvidia-h200 nvidia-h100]"),
        id="7.4.1: unknown accelerator classes are denied, in list order",
    ),
    pytest.param(
        runtime_manifest("csr", **_classes("nvidia-a100")),
        allowed(TIES_WITH_RT),
        id="7.4.1: existing accelerator classes are admitted",
    ),
    pytest.param(
        runtime_manifest(
            "csr",
            formats=[entry(autoSelect=True, priority=2), entry("gguf", autoSelect=True)],
        ),
        denied(PRIORITIES),
        id="7.4.2: unnamed autoSelect entries with different priorities are denied",
    ),
    pytest.param(
        runtime_manifest(
            "csr",
            formats=[
                entry(name="a", autoSelect=True, priority=2),
                entry("gguf", name="b", autoSelect=True),
            ],
        ),
        allowed(),
        id="7.4.2: entries of different names may have different priorities",
    ),
    pytest.param(
        runtime_manifest(
            "csr",
            formats=[entry(autoSelect=True, priority=1), entry("gguf", priority=3)],
        ),
        allowed(TIES_WITH_RT),
        id="7.4.2: an entry without autoSelect true is not compared",
    ),
    pytest.param(
        runtime_manifest(
            "csr",
            formats=[entry(autoSelect=True, priority=2), entry("gguf", autoSelect=True)],
            **_classes("nvidia-h100"),
        ),
        denied(UNKNOWN + "[nvidia-h100]"),
        id="7.4: the accelerator-class denial comes before the priority denial",
    ),
    pytest.param(
        runtime_manifest(
            "csr",
            disabled=True,
            formats=[entry(autoSelect=True, priority=2), entry("gguf", autoSelect=True)],
            **_classes("nvidia-h100"),
        ),
        allowed(),
        id="7.4: a disabled runtime is not checked",
    ),
    pytest.param(
        runtime_manifest(
            "csr",
            engineConfig={"annotations": {MODE: "multinode"}},
            routerConfig={"annotations": {MODE: "Deployment"}},
        ),
        allowed(
            _typo("multinode", "spec.engineConfig.annotations", "MultiNode"),
            _typo("Deployment", "spec.routerConfig.annotations"),
            TIES_WITH_RT,
        ),
        id="16.3: misspelled modes in runtime configs warn",
    ),
    pytest.param(
        runtime_manifest("csr", formats=[entry(autoSelect=True, priority="high")]),
        denied(
            'ClusterServingRuntime "csr" is invalid: spec.supportedModelFormats[0].priority: '
            'must be an integer (got "high")'
        ),
        id="a malformed ClusterServingRuntime is denied naming the field and the value",
    ),
    pytest.param(
        runtime_manifest("sr", cluster=False, **_classes("nvidia-a100", "nvidia-h100")),
        denied(UNKNOWN + "[nvidia-h100]"),
        id="7.4.1: a ServingRuntime is checked the same way",
    ),
    pytest.param(
        runtime_manifest(
            "sr",
            cluster=False,
            formats=[entry(autoSelect=True, priority=3), entry("gguf", autoSelect=True)],
        ),
        denied(PRIORITIES),
        id="7.4.2: a ServingRuntime's priorities are checked the same way",
    ),
]


@pytest.mark.parametrize(("manifest", "expected"), RUNTIME_ROWS)
async def test_runtime_review_answers_as_s7_4_says(
    kube: ApiServerLikeEmulator,
    operator: RunningOperator,
    manifest: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    await seeded(kube, operator)
    labels = {"kind": manifest["kind"], "operation": "CREATE"}
    verdict = str(expected["allowed"]).lower()
    before = operator.metric(REQUESTS, **labels, allowed=verdict)

    assert await post_review(operator, admission_review(manifest)) == expected
    assert operator.metric(REQUESTS, **labels, allowed=verdict) == before + 1


# --- operations and metrics ---------------------------------------------------------------------


async def test_an_update_is_validated_so_a_label_change_can_be_denied(
    kube: ApiServerLikeEmulator, operator: RunningOperator
) -> None:
    await seeded(kube, operator)
    old = isvc(model="off")
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "serving"}

    response = await post_review(operator, admission_review(new, operation="UPDATE", old=old))

    assert response == denied("model off is disabled")
    assert samples(operator, REQUESTS) == {
        (("allowed", "false"), ("kind", "InferenceService"), ("operation", "UPDATE")): 1.0,
        (("allowed", "true"), ("kind", "ClusterServingRuntime"), ("operation", "CREATE")): 1.0,
    }


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(isvc(model=None), id="an InferenceService that CREATE would deny"),
        pytest.param(
            runtime_manifest("csr", **_classes("nvidia-h100")),
            id="a ClusterServingRuntime that CREATE would deny",
        ),
        pytest.param(
            runtime_manifest("sr", cluster=False, **_classes("nvidia-h100")),
            id="a ServingRuntime that CREATE would deny",
        ),
    ],
)
async def test_delete_is_never_validated(
    kube: ApiServerLikeEmulator, operator: RunningOperator, manifest: dict[str, Any]
) -> None:
    await seeded(kube, operator)
    before = samples(operator, REQUESTS)

    response = await post_review(operator, admission_review(None, operation="DELETE", old=manifest))

    assert response == allowed()
    assert samples(operator, REQUESTS) == before


async def test_every_review_is_counted_by_kind_operation_and_verdict(
    kube: ApiServerLikeEmulator, operator: RunningOperator
) -> None:
    await seeded(kube, operator)
    requests, warnings = samples(operator, REQUESTS), samples(operator, WARNINGS)
    assert (requests, warnings) == (
        {(("allowed", "true"), ("kind", "ClusterServingRuntime"), ("operation", "CREATE")): 1.0},
        {},
    )
    reviews = [
        admission_review(isvc()),
        admission_review(isvc(deploymentMode="OMENative", runtime={"name": "multinode"})),
        admission_review(
            isvc(deploymentMode="OMENative", engine={"deploymentStrategy": {"type": "Recreate"}})
        ),
        admission_review(isvc(model=None)),
        admission_review(isvc(engine={"minReplicas": "2"})),
        admission_review(isvc(), operation="UPDATE", old=isvc()),
        admission_review(None, operation="DELETE", old=isvc()),
        admission_review(runtime_manifest("csr", **_classes("nvidia-h100"))),
        admission_review(runtime_manifest("sr", cluster=False)),
    ]
    for review in reviews:
        await post_review(operator, review)

    assert samples(operator, REQUESTS) == {
        (("allowed", "false"), ("kind", "ClusterServingRuntime"), ("operation", "CREATE")): 1.0,
        (("allowed", "false"), ("kind", "InferenceService"), ("operation", "CREATE")): 2.0,
        (("allowed", "true"), ("kind", "ClusterServingRuntime"), ("operation", "CREATE")): 1.0,
        (("allowed", "true"), ("kind", "InferenceService"), ("operation", "CREATE")): 3.0,
        (("allowed", "true"), ("kind", "InferenceService"), ("operation", "UPDATE")): 1.0,
        (("allowed", "true"), ("kind", "ServingRuntime"), ("operation", "CREATE")): 1.0,
    }
    assert samples(operator, WARNINGS) == {
        (("warning", "auto_selected"),): 3.0,
        (("warning", "deployment_strategy"),): 1.0,
        (("warning", "does_not_declare_support"),): 1.0,
    }


# --- an operator that watches some namespaces (run -n) ----------------------------------------


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        pytest.param(
            isvc_manifest("svc", namespace="team-b", model=None),
            allowed(),
            id="an InferenceService of another namespace is not this operator's to deny",
        ),
        pytest.param(
            runtime_manifest("sr", cluster=False, namespace="team-b", **_classes("nvidia-h100")),
            allowed(),
            id="nor is a ServingRuntime of another namespace",
        ),
        pytest.param(
            isvc_manifest("svc", namespace="team-a", model=None),
            denied("at least one of spec.model or spec.runtime must be set"),
            id="an InferenceService of its namespace is reviewed",
        ),
        pytest.param(
            runtime_manifest("csr", **_classes("nvidia-h100")),
            denied(UNKNOWN + "[nvidia-h100]"),
            id="a ClusterServingRuntime is always reviewed",
        ),
    ],
)
async def test_a_namespaced_operator_reviews_only_its_namespaces(
    kube, kubeconfig, manifest, expected
) -> None:
    async with running_operator(namespaces=("team-a",)) as operator:
        await answered(operator, admission_review(runtime_manifest("warm-up")))
        before = samples(operator, REQUESTS)
        assert await post_review(operator, admission_review(manifest)) == expected
        counted = samples(operator, REQUESTS) != before
        assert counted is (expected["allowed"] is False)


# --- a workload of another mode beside the component's new one ---------------------------------

#: The LeaderWorkerSet a MultiNode engine of ``svc`` had (or OME's MultiNode left).
LEFT_BEHIND = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {
        "name": "lws-svc-engine",
        "namespace": NS,
        "labels": {"ome.io/inferenceservice": "svc", "component": "engine"},
    },
    "spec": {"replicas": 1},
}


async def test_a_workload_of_another_mode_is_warned_about_from_the_caches(
    kube: ApiServerLikeEmulator, operator: RunningOperator
) -> None:
    await seeded(kube, operator)
    await apply_object(kube, LEFT_BEHIND)
    held = operator.controller.caches.objects.caches["LeaderWorkerSet"]
    await eventually(lambda: held.named(NS, "lws-svc-engine"), timeout=10.0)
    sent = len(list(kube))

    review = admission_review(isvc(deploymentMode="OMENative"), operation="UPDATE", old=isvc())
    response = await post_review(operator, review)

    assert response == allowed(
        AUTO,
        "engine resolves to OMENative (InferenceReplica svc-engine), but the LeaderWorkerSet "
        "lws-svc-engine of another mode (an earlier mode, or OME) is in namespace default: both "
        "run until it is deleted; once EngineReady is True, delete it with "
        "kubectl delete leaderworkerset lws-svc-engine -n default",
    )
    assert [r.url.path for r in list(kube)[sent:] if "svc-engine" in r.url.path] == []
