"""Reconcile benchmark (issue: the operator): 1,000 InferenceServices against 200 runtimes.

Runs the real operator (kopf, handlers, controller) in-process against the API-server-like
emulator (kmock), creates the InferenceServices, and waits until every one has converged (its
workloads written and its status reporting the resolved runtime). Then, on a fresh emulator, a
plain script makes the same object writes with the same client and the same concurrency ("bare
writes"). Prints, as its last lines:

    api requests per reconcile: <x> (lists: <y>)
    converge: <t> s, bare writes: <b> s, ratio <t/b>

Targets: 0 list requests per reconcile, ratio <= 2. Not part of the tests:

    python tests/bench/reconcile.py [--isvcs 1000] [--runtimes 200] [--workers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import pathlib
import sys
import tempfile
import time
from collections.abc import Mapping
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import kmock  # noqa: E402
import kubernetes.config.kube_config  # noqa: E402

from ome_operator.cluster.api import KubeApi  # noqa: E402
from ome_operator.handlers.startup import kube_api  # noqa: E402
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest  # noqa: E402
from tests.support.kube_access import write_kubeconfig  # noqa: E402
from tests.support.kube_emulator import DECLARED_RESOURCES, ApiServerLikeEmulator  # noqa: E402
from tests.support.operator_run import running_operator  # noqa: E402

ISVC = "ome.io/v1beta1/inferenceservices"
NAMESPACES = ("team-a", "team-b", "team-c", "team-d")
_WRITES = ("POST", "PATCH", "PUT", "DELETE")


def _runtimes(count: int) -> list[dict[str, Any]]:
    found = []
    for i in range(count):
        cluster = i % 4 != 0
        formats = [entry("safetensors" if i % 3 else "gguf", autoSelect=True, priority=1 + i % 3)]
        runtime = runtime_manifest(
            f"runtime-{i:03d}",
            cluster=cluster,
            namespace=NAMESPACES[i % len(NAMESPACES)],
            formats=formats,
            size_range=("1B", f"{10 + i % 90}B"),
        )
        runtime["spec"]["engineConfig"] = {
            "runner": {
                "name": "ome-container",
                "image": f"vllm:{i}",
                "ports": [{"containerPort": 8080, "name": "http1"}],
            }
        }
        found.append(runtime)
    return found


def _isvcs(count: int) -> list[dict[str, Any]]:
    return [
        isvc_manifest(f"chat-{i:04d}", namespace=NAMESPACES[i % len(NAMESPACES)], model="llama")
        for i in range(count)
    ]


def _model() -> dict[str, Any]:
    return model_manifest(
        "llama",
        modelParameterSize="8B",
        storage={"path": "/models/llama", "storageUri": "hf://llama"},
    )


def _collection(obj: dict[str, Any]) -> str:
    api_version, kind = obj["apiVersion"], obj["kind"]
    plural = {
        "ServingRuntime": "servingruntimes",
        "ClusterServingRuntime": "clusterservingruntimes",
        "ClusterBaseModel": "clusterbasemodels",
        "InferenceService": "inferenceservices",
        "Deployment": "deployments",
        "Service": "services",
        "PodDisruptionBudget": "poddisruptionbudgets",
    }[kind]
    root = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    namespace = obj["metadata"].get("namespace")
    if kind.startswith("Cluster"):
        return f"{root}/{plural}"
    return f"{root}/namespaces/{namespace}/{plural}"


def _create_all(api: KubeApi, objects: list[dict[str, Any]], workers: int) -> None:
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda o: api.request("POST", _collection(o), o), objects))


def _patch_statuses(
    api: KubeApi, statuses: list[tuple[dict[str, Any], dict[str, Any]]], workers: int
) -> None:
    def patch(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
        isvc, status = pair
        api.merge_patch(isvc, {"status": status}, subresource="status")

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(patch, statuses))


class _Cluster:
    """An emulator on a random port with a kubeconfig pointing at it."""

    def __init__(self, tmp: pathlib.Path) -> None:
        self.tmp = tmp

    async def __aenter__(self) -> ApiServerLikeEmulator:
        self._emulator = ApiServerLikeEmulator()
        await self._emulator.__aenter__()
        self._server = kmock.Server(self._emulator)
        await self._server.__aenter__()
        self._emulator.resources.load_bundled()
        self._emulator.declare(*DECLARED_RESOURCES)
        path = str(write_kubeconfig(self.tmp / "kubeconfig", str(self._emulator.url)))
        kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION = path
        return self._emulator

    async def __aexit__(self, *exc: object) -> None:
        await self._server.__aexit__(*exc)
        await self._emulator.__aexit__(*exc)


def _writes(kube: ApiServerLikeEmulator) -> int:
    return sum(1 for request in kube if request.method.upper() in _WRITES)


def _converged(kube: ApiServerLikeEmulator, isvcs: list[dict[str, Any]]) -> bool:
    for isvc in isvcs:
        meta = isvc["metadata"]
        try:
            status = kube.objects[ISVC, meta["namespace"], meta["name"]].get("status") or {}
        except KeyError:
            return False
        if "runtime" not in status:
            return False
    return True


async def _operator_phase(
    options: argparse.Namespace, tmp: pathlib.Path
) -> tuple[float, dict[str, Any]]:
    async with _Cluster(tmp) as kube:
        api = kube_api()
        seeds = [_model(), *_runtimes(options.runtimes)]
        await asyncio.to_thread(_create_all, api, seeds, options.workers)
        isvcs = _isvcs(options.isvcs)
        async with running_operator(workers=options.workers) as operator:
            await operator.settled(timeout=30)
            before = len(list(kube))
            lists_before = len(kube[kmock.action.LIST])
            started = time.perf_counter()
            await asyncio.to_thread(_create_all, api, isvcs, options.workers)
            while not _converged(kube, isvcs):
                await asyncio.sleep(0.05)
            converge = time.perf_counter() - started
            await operator.settled(timeout=60)
            requests = list(kube)[before:]
            reconciles = sum(
                operator.metric("ome_inferenceservice_reconcile_total", result=r)
                for r in ("success", "error", "parked")
            )
            lists = len(kube[kmock.action.LIST]) - lists_before
            writes = [r for r in requests if r.method.upper() in _WRITES]
            objects = {
                kind: [
                    dict(o)
                    for (res, _, _), o in kube.objects.items()
                    if o and res == kube.resource(kind)
                ]
                for kind in (
                    "apps/v1/deployments",
                    "v1/services",
                    "policy/v1/poddisruptionbudgets",
                    ISVC,
                )
            }
        stats = {
            "requests": len(requests) - options.isvcs,
            "reconciles": reconciles,
            "lists": lists,
            "writes": len(writes),
            "objects": objects,
        }
        return converge, stats


def _data(value: Any) -> Any:
    """Plain JSON data from the emulator's stored objects (mappings of its own types)."""
    if isinstance(value, Mapping):
        return {k: _data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_data(v) for v in value]
    return value


def _plain(obj: dict[str, Any]) -> dict[str, Any]:
    obj = _data(obj)
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k in ("name", "namespace", "labels", "annotations", "ownerReferences")
    }
    return {**{k: v for k, v in obj.items() if k not in ("metadata", "status")}, "metadata": meta}


async def _bare_phase(
    options: argparse.Namespace, tmp: pathlib.Path, objects: dict[str, list[dict[str, Any]]]
) -> float:
    async with _Cluster(tmp) as kube:
        api = kube_api()
        seeds = [_model(), *_runtimes(options.runtimes)]
        await asyncio.to_thread(_create_all, api, seeds, options.workers)
        isvcs = _isvcs(options.isvcs)
        workloads = [
            _plain(o)
            for kind in ("apps/v1/deployments", "v1/services", "policy/v1/poddisruptionbudgets")
            for o in objects[kind]
        ]
        statuses = [
            (i, _data(o.get("status") or {}))
            for i, o in zip(
                isvcs,
                sorted(
                    objects[ISVC], key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"])
                ),
                strict=False,
            )
        ]
        statuses.sort(
            key=lambda pair: (pair[0]["metadata"]["namespace"], pair[0]["metadata"]["name"])
        )
        started = time.perf_counter()
        await asyncio.to_thread(_create_all, api, isvcs, options.workers)
        await asyncio.to_thread(_create_all, api, workloads, options.workers)
        await asyncio.to_thread(_patch_statuses, api, statuses, options.workers)
        bare = time.perf_counter() - started
        del kube
        return bare


async def _main(options: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        converge, stats = await _operator_phase(options, pathlib.Path(tmp))
        bare = await _bare_phase(options, pathlib.Path(tmp), stats["objects"])
    reconciles = max(stats["reconciles"], 1)
    print(f"isvcs: {options.isvcs}, runtimes: {options.runtimes}, workers: {options.workers}")
    print(
        f"reconciles: {int(stats['reconciles'])}, requests: {stats['requests']}, "
        f"writes: {stats['writes']}"
    )
    print(
        f"api requests per reconcile: {stats['requests'] / reconciles:.2f} "
        f"(lists: {stats['lists'] / reconciles:.2f})"
    )
    print(f"converge: {converge:.2f} s, bare writes: {bare:.2f} s, ratio {converge / bare:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isvcs", type=int, default=1000)
    parser.add_argument("--runtimes", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
