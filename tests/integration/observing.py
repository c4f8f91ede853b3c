"""What the integration tests do to the cluster and read back from it.

Seeding goes through HTTP (watches see it) and waits until the operator's watch-fed indexes hold
the seeded version, so a test never races the operator's view of runtimes and models. Reads
come from the emulator's state; request counts from its request log.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import kmock

from ome_operator.controller.runtime import Result
from tests.support.kube_access import apply_object, eventually
from tests.support.kube_emulator import ApiServerLikeEmulator
from tests.support.operator_run import RunningOperator

ISVC = "ome.io/v1beta1/inferenceservices"
DEPLOYMENT = "apps/v1/deployments"
SERVICE = "v1/services"
PDB = "policy/v1/poddisruptionbudgets"
LWS = "leaderworkerset.x-k8s.io/v1/leaderworkersets"
HPA = "autoscaling/v2/horizontalpodautoscalers"
REPLICA = "ome.io/v1beta1/inferencereplicas"
EVENT = "v1/events"
CSR = "ome.io/v1beta1/clusterservingruntimes"
SR = "ome.io/v1beta1/servingruntimes"
CBM = "ome.io/v1beta1/clusterbasemodels"
BM = "ome.io/v1beta1/basemodels"

#: Every kind the operator writes for an InferenceService, by resource.
WORKLOADS = (DEPLOYMENT, SERVICE, PDB, LWS, REPLICA, HPA)
WRITES = (kmock.method.POST, kmock.method.PATCH, kmock.method.PUT, kmock.method.DELETE)

#: A runner with one port, as most tests' runtimes have.
RUNNER = {
    "name": "ome-container",
    "image": "vllm:1",
    "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
}
MODEL_STORAGE = {"storageUri": "hf://meta/llama", "path": "/models/llama"}


async def settle(
    kube: ApiServerLikeEmulator,
    operator: RunningOperator,
    *,
    quiet: float = 0.05,
    timeout: float = 5.0,
) -> None:
    """Wait until no reconcile is queued or running and no API request came for ``quiet``
    seconds: the echoes of the last writes have then come back through the watches."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    seen, since = -1, loop.time()
    while True:
        count, now = len(list(kube)), loop.time()
        if count != seen or not operator.controller.queue.idle():
            seen, since = count, now
        elif now - since >= quiet:
            return
        if now > deadline:
            raise TimeoutError("the operator did not settle")
        await asyncio.sleep(0.01)


def _cached(operator: RunningOperator, stored: dict[str, Any]) -> bool:
    """Whether the operator's indexes hold this version of a runtime or model."""
    caches, meta = operator.controller.caches, stored["metadata"]
    namespace = meta.get("namespace") or "default"
    if stored["kind"] in ("ServingRuntime", "ClusterServingRuntime"):
        found = [r for r in caches.runtimes(namespace) if r.kind == stored["kind"]]
    else:
        catalog = caches.models(namespace, meta["name"])
        found = [*catalog.base_models.values(), *catalog.cluster_base_models.values()]
        found = [m for m in found if m.kind == stored["kind"]]
    return any(
        item.name == meta["name"] and item.metadata.resource_version == meta["resourceVersion"]
        for item in found
    )


async def seed(
    kube: ApiServerLikeEmulator, operator: RunningOperator, *manifests: dict[str, Any]
) -> list[dict[str, Any]]:
    """Create (or merge-patch) runtimes and models; return once the operator has read them."""
    stored = [await apply_object(kube, manifest) for manifest in manifests]
    for obj in stored:
        await eventually(lambda obj=obj: _cached(operator, obj))
    return stored


async def patch(
    kube: ApiServerLikeEmulator,
    resource: str,
    namespace: str | None,
    name: str,
    body: dict[str, Any],
    subresource: str | None = None,
) -> dict[str, Any]:
    """A merge patch over HTTP (watches see it); any refusal fails the test."""
    info = kmock.resource(resource)
    prefix = f"/apis/{info.group}/{info.version}" if info.group else "/api/v1"
    scope = f"/namespaces/{namespace}" if namespace else ""
    path = f"{prefix}{scope}/{info.plural}/{name}" + (f"/{subresource}" if subresource else "")
    headers = {"Content-Type": "application/merge-patch+json"}
    async with kube.patch(path, json=body, headers=headers) as response:
        answer = await response.json()
    if response.status >= 400:
        raise AssertionError(f"patching {path} failed: {response.status} {answer}")
    return answer


async def delete(
    kube: ApiServerLikeEmulator, resource: str, namespace: str | None, name: str
) -> None:
    info = kmock.resource(resource)
    prefix = f"/apis/{info.group}/{info.version}" if info.group else "/api/v1"
    scope = f"/namespaces/{namespace}" if namespace else ""
    async with kube.delete(f"{prefix}{scope}/{info.plural}/{name}") as response:
        assert response.status < 400, await response.text()


AVAILABLE = {
    "type": "Available",
    "status": "True",
    "reason": "MinimumReplicasAvailable",
    "message": "Deployment has minimum availability.",
}


async def make_available(kube: ApiServerLikeEmulator, namespace: str, name: str) -> None:
    """What the Deployment controller would report once the pods are up."""
    status = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "conditions": [AVAILABLE]}
    await patch(kube, DEPLOYMENT, namespace, name, {"status": status}, subresource="status")


async def make_pods_ready(
    kube: ApiServerLikeEmulator, namespace: str, *names: str, ready: bool = True
) -> None:
    """What the kubelet would report once the containers of these pods are (not) ready; each
    pod is waited for first."""
    for name in names:
        pod = await eventually(lambda n=name: stored(kube, "v1/pods", namespace, n))
        condition = {"type": "ContainersReady", "status": "True" if ready else "False"}
        kept = [
            c
            for c in (pod.get("status") or {}).get("conditions") or []
            if c["type"] != condition["type"]
        ]
        status = {"phase": "Running", "conditions": [*kept, condition]}  # the kubelet's and others'
        await patch(kube, "v1/pods", namespace, name, {"status": status}, subresource="status")


def stored(
    kube: ApiServerLikeEmulator, resource: str, namespace: str | None, name: str
) -> dict[str, Any] | None:
    """A copy of the live object (``raw`` shares nested dicts with the emulator's state), or
    None (``in kube.objects`` cannot be trusted with string resources)."""
    key = (kmock.resource(resource), namespace, name)
    if key not in kube.objects or kube.objects[key].deleted:
        return None
    return copy.deepcopy(kube.objects[key].raw)


def status_of(kube: ApiServerLikeEmulator, name: str, namespace: str = "default") -> dict[str, Any]:
    return (stored(kube, ISVC, namespace, name) or {}).get("status") or {}


def condition_of(
    kube: ApiServerLikeEmulator, name: str, kind: str, namespace: str = "default"
) -> dict[str, Any] | None:
    conditions = status_of(kube, name, namespace).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


def without_times(conditions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Conditions without ``lastTransitionTime`` (checked for presence, not value)."""
    assert all(isinstance(c.pop("lastTransitionTime", None), str) for c in conditions)
    return conditions


def owned_objects(kube: ApiServerLikeEmulator, namespace: str = "default") -> set[tuple[str, str]]:
    """(kind, name) of every live workload object in the namespace."""
    found = set()
    for resource in WORKLOADS:
        wanted = kmock.resource(resource)
        for (res, ns, name), versions in kube.objects.items():
            if res == wanted and ns == namespace and not versions.deleted:
                found.add((versions.raw["kind"], name))
    return found


def events_for(
    kube: ApiServerLikeEmulator, name: str, namespace: str = "default"
) -> list[dict[str, Any]]:
    """The Events posted about an InferenceService, oldest first."""
    wanted = kmock.resource(EVENT)
    return [
        copy.deepcopy(versions.raw)
        for (res, ns, _), versions in kube.objects.items()
        if res == wanted
        and ns == namespace
        and not versions.deleted
        and versions.raw["involvedObject"]["name"] == name
    ]


def event_summary(event: dict[str, Any]) -> dict[str, Any]:
    """An event's decision: what it says, about what, from whom."""
    involved = event["involvedObject"]
    return {
        "type": event["type"],
        "reason": event["reason"],
        "message": event["message"],
        "involvedObject": {
            k: involved[k] for k in ("apiVersion", "kind", "namespace", "name") if k in involved
        },
        "source": event["source"],
    }


def requests(kube: ApiServerLikeEmulator, since: int = 0) -> list[kmock.Request]:
    """The emulator's request log from position ``since`` (``len(list(kube))`` marks now)."""
    return list(kube)[since:]


def writes(kube: ApiServerLikeEmulator, since: int = 0) -> list[str]:
    """``METHOD path`` of every write request since the mark."""
    return [f"{r.method.name} {r.url.path}" for r in requests(kube, since) if r.method in WRITES]


def status_writes(kube: ApiServerLikeEmulator, name: str, since: int = 0) -> int:
    return sum(
        1
        for r in requests(kube, since)
        if r.method == kmock.method.PATCH
        and r.url.path.endswith(f"/inferenceservices/{name}/status")
    )


def record_passes(operator: RunningOperator, monkeypatch: Any) -> list[tuple[str, str]]:
    """Every key the controller reconciles from now on, in order."""
    passes: list[tuple[str, str]] = []
    runtime = operator.controller.runtime
    original = runtime.process

    async def process(key: tuple[str, str]) -> Result:
        passes.append(key)
        return await original(key)

    monkeypatch.setattr(runtime, "process", process)
    return passes


async def touch(
    kube: ApiServerLikeEmulator, resource: str, namespace: str | None, name: str, value: str = "1"
) -> None:
    """Change only a label: a change the operator watches that alters no decision."""
    await patch(kube, resource, namespace, name, {"metadata": {"labels": {"touched": value}}})
