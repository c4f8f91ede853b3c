"""Events and the RuntimeReady condition as the real operator posts and writes them (the tables
of docs/troubleshooting.md): exact texts, posted once per decision, ``v1beta1Controllers``; and
the cause a component's pods show, in its condition and one event."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import (
    DEPLOYMENT,
    MODEL_STORAGE,
    RUNNER,
    condition_of,
    event_summary,
    events_for,
    make_available,
    owned_objects,
    patch,
    record_passes,
    seed,
    settle,
    status_of,
    stored,
    without_times,
)
from tests.support.kube_access import apply_object, eventually

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "samples"

#: A runtime no test's model matches: always a candidate, never chosen, and touched to re-queue.
BYSTANDER = runtime_manifest("bystander", formats=[entry("onnx", "transformers", autoSelect=True)])
LLAMA = model_manifest("llama", storage=MODEL_STORAGE)
VLLM = runtime_manifest("vllm", engineConfig={"runner": RUNNER})


def sample(name: str) -> dict[str, Any]:
    return yaml.safe_load((SAMPLES / name).read_text(encoding="utf-8"))


def seed_page(**runtime: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The seed page's runtime, model and InferenceService, the runtime named explicitly."""
    isvc = sample("inferenceservice-llama-3-70b.yaml")
    isvc["spec"]["runtime"] = {"name": "srt-llama-3-3-70b-instruct-multinode", **runtime}
    seeded = [
        sample("clusterservingruntime-multinode.yaml"),
        sample("clusterbasemodel-llama-3-3-70b-instruct.yaml"),
    ]
    return seeded, isvc


SEED_OBJECTS, SEED_ISVC = seed_page()
#: The seed page's runtime wins over spec.deploymentMode OMENative: a LeaderWorkerSet.
SEED_WORKLOADS = {
    ("LeaderWorkerSet", "lws-llama-3-70b-engine"),
    ("Service", "llama-3-70b-engine"),
    ("Service", "llama-3-70b"),
}


def expected_event(created: dict[str, Any], reason: str, message: str) -> dict[str, Any]:
    meta = created["metadata"]
    return {
        "type": "Warning",
        "reason": reason,
        "message": message,
        "involvedObject": {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceService",
            "namespace": meta["namespace"],
            "name": meta["name"],
        },
        "source": {"component": "v1beta1Controllers"},
    }


@pytest.mark.parametrize(
    ("seeded", "isvc", "reason", "message"),
    [
        pytest.param(
            [LLAMA],
            isvc_manifest("chat"),
            "RuntimeNotFound",
            "no runtime found to support model safetensors with format safetensors in namespace "
            "default. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded "
            "runtimes: bystander (model format 'mt:safetensors:transformers' not in supported "
            "formats: format name mismatch (model=safetensors, runtime=onnx))",
            id="auto-selection finding no runtime posts RuntimeNotFound with the S2.12 text",
        ),
        pytest.param(
            [LLAMA],
            isvc_manifest("chat", runtime={"name": "ghost"}),
            "RuntimeNotFound",
            "runtime ghost not found in namespace default or at cluster scope",
            id="a missing named ClusterServingRuntime posts RuntimeNotFound",
        ),
        pytest.param(
            [LLAMA],
            isvc_manifest("chat", runtime={"name": "ghost", "kind": "ServingRuntime"}),
            "RuntimeNotFound",
            "ServingRuntime ghost not found in namespace default",
            id="a missing named ServingRuntime posts RuntimeNotFound",
        ),
        pytest.param(
            SEED_OBJECTS,
            SEED_ISVC,
            "RuntimeCompatibilityAdvisory",
            "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model "
            "llama-3-3-70b-instruct (runtime srt-llama-3-3-70b-instruct-multinode does not "
            "support model : runtime engine deployment mode MultiNode does not match requested "
            "engine deployment mode OMENative); proceeding because the runtime was named "
            "explicitly",
            id="the seed page's named MultiNode runtime posts its advisory",
        ),
        pytest.param(
            [LLAMA, runtime_manifest("off", disabled=True, engineConfig={"runner": RUNNER})],
            isvc_manifest("chat", runtime={"name": "off"}),
            "RuntimeValidationError",
            "cluster-scoped runtime off is disabled",
            id="a disabled named cluster runtime posts RuntimeValidationError",
        ),
        pytest.param(
            [LLAMA, runtime_manifest("off", cluster=False, disabled=True)],
            isvc_manifest("chat", runtime={"name": "off", "kind": "ServingRuntime"}),
            "RuntimeValidationError",
            "namespace-scoped runtime off is disabled",
            id="a disabled named namespace runtime posts RuntimeValidationError",
        ),
        pytest.param(
            [VLLM, model_manifest("llama", disabled=True, storage=MODEL_STORAGE)],
            isvc_manifest("chat"),
            "ModelReconcileError",
            "specified base model llama is disabled",
            id="a disabled model posts ModelReconcileError",
        ),
        pytest.param(
            [VLLM, LLAMA],
            isvc_manifest("chat", engine=None, runtime={"name": "vllm"}),
            "DeploymentModeError",
            "engine component is required",
            id="an InferenceService without an engine posts DeploymentModeError",
        ),
        pytest.param(
            [VLLM, model_manifest("broken", fmt="", storage=MODEL_STORAGE)],
            isvc_manifest("chat", model="broken"),
            "RuntimeSelectionError",
            "Failed to find runtime for model broken: invalid model specification: "
            "modelFormat.name: model format name is required",
            id="a model without a format name posts RuntimeSelectionError",
        ),
    ],
)
async def test_a_decision_posts_its_event_once(
    kube, operator, monkeypatch, seeded, isvc, reason, message
):
    await seed(kube, operator, BYSTANDER, *seeded)
    created = await apply_object(kube, isvc)
    name, namespace = created["metadata"]["name"], created["metadata"]["namespace"]
    await eventually(lambda: events_for(kube, name, namespace))

    passes = record_passes(operator, monkeypatch)
    operator.controller.requeue()  # another pass, as a watched change would give
    await eventually(lambda: (namespace, name) in passes)
    await settle(kube, operator)

    posted = events_for(kube, name, namespace)
    assert [event_summary(e) for e in posted] == [expected_event(created, reason, message)]
    assert posted[0]["involvedObject"]["uid"] == created["metadata"]["uid"]
    # Only the advisory goes ahead with the runtime; every other decision creates nothing.
    advised = reason == "RuntimeCompatibilityAdvisory"
    assert owned_objects(kube, namespace) == (SEED_WORKLOADS if advised else set())


async def test_autosync_false_posts_no_advisory_and_still_uses_the_runtime(kube, operator):
    seeded, isvc = seed_page(autoSync=False)
    await seed(kube, operator, *seeded)
    await apply_object(kube, isvc)
    await eventually(lambda: status_of(kube, "llama-3-70b", "llama-demo").get("runtime"))
    await settle(kube, operator)

    assert events_for(kube, "llama-3-70b", "llama-demo") == []
    assert status_of(kube, "llama-3-70b", "llama-demo")["runtime"] == {
        "kind": "ClusterServingRuntime",
        "name": "srt-llama-3-3-70b-instruct-multinode",
        "selection": "Explicit",
    }
    assert owned_objects(kube, "llama-demo") == SEED_WORKLOADS


NO_RUNTIME = (
    "no runtime found to support model safetensors with format safetensors in namespace default"
)


async def test_runtime_ready_follows_the_runtime_lookup(kube, operator):
    # A runtime of another namespace is no candidate here; seeding it binds the indexes.
    elsewhere = runtime_manifest("elsewhere", cluster=False, namespace="elsewhere")
    await seed(kube, operator, elsewhere, LLAMA)
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: status_of(kube, "chat"))
    await settle(kube, operator)

    not_found = {
        "type": "RuntimeReady",
        "status": "False",
        "reason": "RuntimeNotFound",
        "message": NO_RUNTIME,
        "severity": "Info",
    }
    assert without_times(status_of(kube, "chat")["conditions"]) == [not_found]
    assert operator.metric("ome_runtime_unresolved_inferenceservices") == 1
    assert owned_objects(kube) == set()

    await seed(kube, operator, BYSTANDER)  # the message changes: a second event
    checked = (
        f"{NO_RUNTIME}. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). "
        "Excluded runtimes: bystander (model format 'mt:safetensors:transformers' not in "
        "supported formats: format name mismatch (model=safetensors, runtime=onnx))"
    )
    # The writer posts a pass's events before its status: one wait for both, whichever lands
    # first, so neither can be read before it is there.
    await eventually(
        lambda: (
            (
                [(e["reason"], e["message"]) for e in events_for(kube, "chat")],
                without_times(status_of(kube, "chat")["conditions"]),
            )
            == (
                [("RuntimeNotFound", NO_RUNTIME), ("RuntimeNotFound", checked)],
                [{**not_found, "message": checked}],
            )
        )
    )

    await seed(kube, operator, VLLM)
    await eventually(lambda: stored(kube, DEPLOYMENT, "default", "chat-engine"))
    await settle(kube, operator)

    conditions = without_times(status_of(kube, "chat")["conditions"])
    assert [c for c in conditions if c["type"] == "RuntimeReady"] == [
        {"type": "RuntimeReady", "status": "True", "reason": "RuntimeResolved", "severity": "Info"}
    ]
    assert [c["type"] for c in conditions] == [
        "EngineReady",
        "IngressReady",
        "Ready",
        "RuntimeReady",
    ]
    assert [(e["reason"], e["message"]) for e in events_for(kube, "chat")] == [
        ("RuntimeNotFound", NO_RUNTIME),
        ("RuntimeNotFound", checked),
    ]
    assert operator.metric("ome_runtime_unresolved_inferenceservices") == 0


async def test_a_resolved_runtime_adds_no_runtime_ready_condition(kube, operator):
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: status_of(kube, "chat"))
    await settle(kube, operator)

    assert [c["type"] for c in status_of(kube, "chat")["conditions"]] == [
        "EngineReady",
        "IngressReady",
        "Ready",
    ]
    assert events_for(kube, "chat") == []


STUCK = (
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
    "available: 3 No preemption victims found for incoming pod."
)


async def test_a_deployment_whose_pods_cannot_be_scheduled_says_so_once(kube, operator):
    await seed(kube, operator, VLLM, LLAMA)
    await apply_object(kube, isvc_manifest("chat"))
    await eventually(lambda: stored(kube, DEPLOYMENT, "default", "chat-engine"))

    # What the Deployment controller creates and the scheduler leaves of a pod it cannot place.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "chat-engine-5d8f9-x2x7q",
            "namespace": "default",
            "labels": {"ome.io/inferenceservice": "chat", "component": "engine"},
        },
        "spec": {"containers": [{"name": "ome-container", "image": "vllm:1"}]},
    }
    await apply_object(kube, pod)
    scheduled = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    status = {"phase": "Pending", "conditions": [{**scheduled, "message": STUCK}]}
    await patch(
        kube,
        "v1/pods",
        "default",
        pod["metadata"]["name"],
        {"status": status},
        subresource="status",
    )
    await eventually(
        lambda: (
            (condition_of(kube, "chat", "EngineReady") or {}).get("reason") == "PodsUnschedulable"
        )
    )
    operator.controller.requeue()  # another pass with the same cause
    await settle(kube, operator)

    told = f"1 of 1 pods cannot be scheduled: {STUCK}"
    unschedulable = {"status": "False", "reason": "PodsUnschedulable", "message": told}
    assert without_times(status_of(kube, "chat")["conditions"]) == [
        {"type": "EngineReady", **unschedulable},
        {"type": "IngressReady", "status": "True", "reason": "IngressDisabled"},
        {"type": "Ready", **unschedulable},
    ]
    assert [event_summary(e) for e in events_for(kube, "chat")] == [
        {
            "type": "Warning",
            "reason": "PodsUnschedulable",
            "message": f"engine component: {told}",
            "involvedObject": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "namespace": "default",
                "name": "chat",
            },
            "source": {"component": "v1beta1Controllers"},
        }
    ]

    await make_available(kube, "default", "chat-engine")
    await eventually(lambda: status_of(kube, "chat")["conditions"][0]["status"] == "True")
    assert without_times(status_of(kube, "chat")["conditions"])[0] == {
        "type": "EngineReady",
        "status": "True",
        "reason": "MinimumReplicasAvailable",
        "message": "Deployment has minimum availability.",
    }
