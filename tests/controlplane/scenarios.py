"""What control-plane tests seed: a model and a runtime in the test's namespace (namespaced kinds,
so tests never see each other's runtimes), InferenceServices, and waiting for convergence."""

from __future__ import annotations

import copy
import time
from typing import Any

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.support.installed_cluster import ISVC, WRITE_VERBS, Cluster, eventually
from tests.support.operator_process import OperatorProcess

#: The operator's log line of the optional APIs it found at start.
START_LINE = "Optional APIs found at start"

MODE = "ome.io/deploymentMode"
OWNER_LABEL = "ome.io/inferenceservice"
#: Integer and milli quantities: the server stores them as "1" (the no-op PATCH of issue 7).
RESOURCES = {
    "limits": {"nvidia.com/gpu": 1, "cpu": "2000m", "memory": "1Gi"},
    "requests": {"nvidia.com/gpu": 1, "cpu": "1000m", "memory": "1024Mi"},
}
RUNNER = {
    "name": "ome-container",
    "image": "vllm:1",
    "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
    "resources": RESOURCES,
}
WORKER = {"name": "ome-container", "image": "vllm:1", "resources": RESOURCES}
MULTINODE = {
    "annotations": {MODE: "MultiNode"},
    "leader": {"runner": RUNNER},
    "worker": {"size": 2, "runner": WORKER},
}
#: The workloads of each mode (engine only), by (kind, name) for an InferenceService "chat".
WORKLOADS = {
    "RawDeployment": {
        ("Deployment", "chat-engine"),
        ("Service", "chat-engine"),
        ("PodDisruptionBudget", "chat-engine"),
        ("Service", "chat"),
    },
    "MultiNode": {
        ("LeaderWorkerSet", "lws-chat-engine"),
        ("Service", "chat-engine"),
        ("Service", "chat"),
    },
    "OMENative": {
        ("InferenceReplica", "chat-engine"),
        ("Service", "chat-engine"),
        ("Service", "chat-engine-headless"),
        ("PodDisruptionBudget", "chat-engine"),
        ("Service", "chat"),
    },
}
#: The resources the operator writes for an InferenceService.
OWNED = (
    "apps/v1/deployments",
    "v1/services",
    "policy/v1/poddisruptionbudgets",
    "ome.io/v1beta1/inferencereplicas",
    "leaderworkerset.x-k8s.io/v1/leaderworkersets",
)


def model(namespace: str, name: str = "llama") -> dict[str, Any]:
    return model_manifest(
        name,
        cluster=False,
        namespace=namespace,
        storage={"storageUri": "hf://meta/llama", "path": "/models/llama"},
    )


#: The runtime's replica bounds: equal, so that no autoscaler is made unless a test's
#: InferenceService asks for one with bounds of its own (docs/autoscaling.md).
FIXED_REPLICAS = {"minReplicas": 1, "maxReplicas": 1}


def runtime(namespace: str, name: str = "vllm", **engine_config: Any) -> dict[str, Any]:
    return runtime_manifest(
        name,
        cluster=False,
        namespace=namespace,
        engineConfig={"runner": copy.deepcopy(RUNNER), **FIXED_REPLICAS, **engine_config},
    )


def isvc(namespace: str, name: str = "chat", **spec: Any) -> dict[str, Any]:
    manifest = isvc_manifest(name, namespace=namespace, **spec)
    if "model" in manifest["spec"]:
        manifest["spec"]["model"]["kind"] = "BaseModel"
    return manifest


def admitted(cluster: Cluster, manifest: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    """Apply ``manifest`` until the webhook admits it (its caches may not hold a runtime or
    model created a moment ago); the stored object."""
    eventually(lambda: cluster.apply(manifest, check=False).returncode == 0, timeout)
    meta = manifest["metadata"]
    return cluster.stored(ISVC, meta["namespace"], meta["name"])


def seed(
    cluster: Cluster,
    namespace: str,
    *isvcs: dict[str, Any],
    engine_config: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    cluster.apply(model(namespace), runtime(namespace, **(engine_config or {})))
    return [admitted(cluster, manifest) for manifest in isvcs]


def owned(cluster: Cluster, namespace: str, name: str) -> list[dict[str, Any]]:
    """Every object labelled as ``name``'s, of the kinds the operator writes."""
    found = []
    for resource in OWNED:
        found += cluster.list(resource, namespace, f"{OWNER_LABEL}={name}")
    return found


def kinds_and_names(objects: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(o["kind"], o["metadata"]["name"]) for o in objects}


def workloads(mode: str, name: str = "chat") -> set[tuple[str, str]]:
    """The (kind, name) of the workloads of an InferenceService ``name`` whose engine runs in
    ``mode``."""
    return {(kind, found.replace("chat", name, 1)) for kind, found in WORKLOADS[mode]}


def owned_workloads(cluster: Cluster, namespace: str, name: str, mode: str) -> list[dict[str, Any]]:
    """The objects ``name`` owns once they are the workloads of ``mode`` (before: none), for
    ``eventually``."""
    found = owned(cluster, namespace, name)
    return found if kinds_and_names(found) == workloads(mode, name) else []


def status(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    return cluster.stored(ISVC, namespace, name).get("status") or {}


def converged(cluster: Cluster, namespace: str, quiet: float = 2.0, timeout: float = 90.0) -> None:
    """Wait until nobody (the operator, the Deployment and ReplicaSet controllers, the garbage
    collector) wrote in ``namespace`` for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mark = cluster.plane.audit_mark()
        time.sleep(quiet)
        if not [
            r
            for r in cluster.plane.audit_since(mark)
            if r.get("verb") in WRITE_VERBS
            and (r.get("objectRef") or {}).get("namespace") == namespace
        ]:
            return
    raise AssertionError(f"writes in {namespace} went on for {timeout} s")


def operator_statuses(cluster: Cluster, mark: int, namespace: str) -> list[int]:
    """HTTP codes the operator was answered in ``namespace`` since ``mark``."""
    return [
        r.get("responseStatus", {}).get("code", 0)
        for r in cluster.operator_requests(mark)
        if (r.get("objectRef") or {}).get("namespace") == namespace
    ]


__all__ = [
    "MODE",
    "MULTINODE",
    "OWNER_LABEL",
    "RUNNER",
    "WORKLOADS",
    "admitted",
    "converged",
    "isvc",
    "kinds_and_names",
    "model",
    "operator_statuses",
    "owned",
    "owned_workloads",
    "runtime",
    "seed",
    "status",
    "workloads",
]


def start_line(operator: OperatorProcess) -> tuple[str, str]:
    """(podGroups, gangPlacement) of the operator's ``Optional APIs found at start`` line."""

    def logged() -> tuple[str, str]:
        found = [r for r in operator.records() if r.get("message") == START_LINE]
        assert found, "no start line yet"
        return found[0]["podGroups"], found[0]["gangPlacement"]

    return eventually(logged)
