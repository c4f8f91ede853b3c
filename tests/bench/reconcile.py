"""Reconcile benchmark (issue: the operator): 1,000 InferenceServices against 200 runtimes,
a third of them OMENative with a leader and 2 workers (the InferenceReplica controller makes
their pods).

The API server is the kmock-based emulator of the tests, run in a process of its own
(``emulator_process.py``) so that the operator's CPU, and not the emulator's, is what the
figures compare. Phase 1 runs the real operator (kopf, handlers, controller) in this process,
creates the InferenceServices, and waits until every one has converged (its status, as the
operator's watch sees it, names the resolved runtime). Phase 2, on a fresh emulator, is the
"bare writes": a plain loop making the same object writes (the InferenceServices, the
workloads the operator wrote, their statuses) with the same client and the same concurrency.
Prints, as its last lines:

    api requests per reconcile: <x> (lists: <y>)
    converge: <t> s, bare writes: <b> s, ratio <t/b>

A reconcile is a pass of either controller (InferenceService or InferenceReplica); the line
before them compares the writes with their physical minimum (every object created once, every
status written once per change it goes through). Targets: 0 list requests per
reconcile, ratio <= 2. Not part of the tests:

    python tests/bench/reconcile.py [--isvcs 1000] [--runtimes 200] [--workers 4] [--controlplane]

``--controlplane`` runs both phases against the real control plane of the test tier instead
(a fresh one per phase, built by tests/controlplane/build.sh; its webhook configuration removed,
so that both phases write alike). The operator then authenticates with the token of its shipped
ServiceAccount; requests are counted from the API server's audit log, by the operator's user.

``BENCH_EMULATOR_SCRIPT`` may name another script to start the emulator with (a profiler
wrapper, for instance).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import json
import os
import pathlib
import signal
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import kubernetes.config  # noqa: E402
import kubernetes.config.kube_config  # noqa: E402
from kubernetes import client as k8s_client  # noqa: E402

from ome_operator.cluster.api import KubeApi  # noqa: E402
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest  # noqa: E402
from tests.support.control_plane import ControlPlane, build_binaries  # noqa: E402
from tests.support.installed_cluster import OPERATOR_USER, VWC, Cluster  # noqa: E402
from tests.support.kube_access import write_kubeconfig  # noqa: E402
from tests.support.operator_run import RunningOperator, running_operator  # noqa: E402

NAMESPACES = ("team-a", "team-b", "team-c", "team-d")


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


_RUNNER = {"name": "ome-container", "image": "vllm:leader"}
#: A third of the InferenceServices: OMENative, a leader and 2 workers per Instance.
_LEADER_WORKER = {"leader": {"runner": _RUNNER}, "worker": {"size": 2, "runner": _RUNNER}}


def _isvcs(count: int) -> list[dict[str, Any]]:
    return [
        isvc_manifest(
            f"chat-{i:04d}",
            namespace=NAMESPACES[i % len(NAMESPACES)],
            model="llama",
            **({"deploymentMode": "OMENative", "engine": _LEADER_WORKER} if i % 3 == 2 else {}),
        )
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
        "InferenceReplica": "inferencereplicas",
        "HorizontalPodAutoscaler": "horizontalpodautoscalers",
        "Pod": "pods",
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
    """Each object's status, through its status subresource, by server-side apply as the
    operator writes it (an apply costs the API server more than a merge patch)."""

    def patch(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
        isvc, status = pair
        meta = {k: isvc["metadata"][k] for k in ("name", "namespace")}
        applied = {"apiVersion": isvc["apiVersion"], "kind": isvc["kind"], "metadata": meta}
        api.apply({**applied, "status": status}, manager="ome-operator", subresource="status")

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(patch, statuses))


class _Emulator:
    """The emulator in its own process (tests/bench/emulator_process.py), and kubeconfigs for
    the operator and for the bench's own requests (which the emulator does not count)."""

    def __init__(self, tmp: pathlib.Path) -> None:
        self.tmp = tmp

    async def __aenter__(self) -> _Emulator:
        script = pathlib.Path(__file__).with_name("emulator_process.py")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            os.environ.get("BENCH_EMULATOR_SCRIPT", str(script)),
            stdout=asyncio.subprocess.PIPE,
        )
        url = (await self.process.stdout.readline()).decode().strip()
        operator = write_kubeconfig(self.tmp / "operator", url)
        kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(operator)
        bench = write_kubeconfig(self.tmp / "bench", url)
        bench.write_text(bench.read_text().replace("test-token", "bench"))
        configuration = k8s_client.Configuration()
        kubernetes.config.load_kube_config(str(bench), client_configuration=configuration)
        configuration.connection_pool_maxsize = 16
        self.api = KubeApi(k8s_client.ApiClient(configuration))
        return self

    async def counts(self) -> collections.Counter[str]:
        self.process.send_signal(signal.SIGUSR1)
        return collections.Counter(json.loads(await self.process.stdout.readline()))

    async def __aexit__(self, *exc: object) -> None:
        self.process.send_signal(signal.SIGTERM)
        output, _ = await self.process.communicate()
        final = json.loads(output.decode().strip().splitlines()[-1])
        self.cpu_seconds = final.get("cpu-seconds", 0.0)


#: Audit verbs as the emulator's request-log keys name them.
_VERBS = {"get": "GET", "list": "LIST", "watch": "WATCH", "create": "CREATE", "delete": "DELETE"}


def _cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _ControlPlane:
    """A fresh real control plane with the operator's manifests installed; the same interface
    as ``_Emulator``: ``api`` (the bench's client, as the admin), ``counts()`` (the operator's
    requests so far, from the audit log) and ``cpu_seconds`` (API server and etcd)."""

    def __init__(self, tmp: pathlib.Path) -> None:
        self.tmp = tmp

    async def __aenter__(self) -> _ControlPlane:
        folder = pathlib.Path(tempfile.mkdtemp(dir=self.tmp, prefix="controlplane-"))
        self.plane = ControlPlane(folder, build_binaries())
        await asyncio.to_thread(self.plane.start)
        cluster = await asyncio.to_thread(Cluster.install, self.plane, folder)
        self.plane.request("DELETE", f"/apis/{VWC}/ome-webhook-server")
        for namespace in NAMESPACES:
            cluster.namespace(namespace)
        kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(
            cluster.operator_kubeconfig
        )
        os.environ["KUBECONFIG"] = str(cluster.operator_kubeconfig)
        configuration = k8s_client.Configuration()
        kubernetes.config.load_kube_config(
            str(self.plane.admin_kubeconfig), client_configuration=configuration
        )
        configuration.connection_pool_maxsize = 16
        self.api = KubeApi(k8s_client.ApiClient(configuration))
        self._pids = self.plane.pids("kube-apiserver", "etcd")
        return self

    async def counts(self) -> collections.Counter[str]:
        records = await asyncio.to_thread(self.plane.audit_since, 0)
        found: collections.Counter[str] = collections.Counter()
        for record in records:
            if record.get("user", {}).get("username") == OPERATOR_USER:
                verb = _VERBS.get(record["verb"], "UPDATE")
                found[f"{verb} {(record.get('objectRef') or {}).get('resource', '')}"] += 1
        return found

    async def __aexit__(self, *exc: object) -> None:
        self.cpu_seconds = sum(_cpu_seconds(pid) for pid in self._pids)
        await asyncio.to_thread(self.plane.stop)


def _all(api: KubeApi, path: str) -> list[dict[str, Any]]:
    """The items, each with its kind and apiVersion (a real API server leaves them out)."""
    listed = api.request("GET", path)
    kind = {
        "kind": listed.get("kind", "").removesuffix("List"),
        "apiVersion": listed.get("apiVersion"),
    }
    return [{**kind, **item} for item in listed.get("items") or []]


def _converged(operator: RunningOperator, expected: int) -> bool:
    """Every InferenceService's status, as the operator's watch sees it, names its runtime, and
    an OMENative one's mirrors its InferenceReplica's once every pod was seen (read from the
    operator's cache: polling the API would load the process measured)."""
    seen = list(operator.controller.isvcs.values())
    return len(seen) >= expected and all(_settled(i.get("status") or {}) for i in seen)


def _settled(status: dict[str, Any]) -> bool:
    engine = (status.get("components") or {}).get("engine") or {}
    if "runtime" not in status:
        return False
    return engine.get("deploymentMode") != "OMENative" or "updatedReplicas" in (
        engine.get("lifecycle") or {}
    )


def _owned(api: KubeApi) -> list[dict[str, Any]]:
    found = []
    for path in (
        "/apis/apps/v1/deployments",
        "/api/v1/services",
        "/apis/policy/v1/poddisruptionbudgets",
        "/apis/ome.io/v1beta1/inferencereplicas",
        "/apis/autoscaling/v2/horizontalpodautoscalers",
        "/api/v1/pods",
    ):
        for item in _all(api, path):
            if "ome.io/inferenceservice" in (item["metadata"].get("labels") or {}):
                found.append(_plain(item))
    return found


def _plain(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as a client would write it anew: no status, no owner (whose uid is another
    server's: a real garbage collector would delete it), no allocated cluster IP."""
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k in ("name", "namespace", "labels", "annotations")
    }
    plain = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    if "spec" in plain:
        drop = ("clusterIP", "clusterIPs")
        plain["spec"] = {k: v for k, v in plain["spec"].items() if k not in drop}
    return {**plain, "metadata": meta}


def _server(options: argparse.Namespace, tmp: pathlib.Path) -> _Emulator | _ControlPlane:
    return _ControlPlane(tmp) if options.controlplane else _Emulator(tmp)


async def _operator_phase(
    options: argparse.Namespace, tmp: pathlib.Path
) -> tuple[float, dict[str, Any]]:
    async with _server(options, tmp) as emulator:
        api = emulator.api
        seeds = [_model(), *_runtimes(options.runtimes)]
        await asyncio.to_thread(_create_all, api, seeds, options.workers)
        isvcs = _isvcs(options.isvcs)
        async with running_operator(workers=options.workers) as operator:
            await operator.settled(timeout=30)
            before = await emulator.counts()
            cpu_before = time.process_time()
            started = time.perf_counter()
            await asyncio.to_thread(_create_all, api, isvcs, options.workers)
            while not _converged(operator, len(isvcs)):
                await asyncio.sleep(0.05)
            converge = time.perf_counter() - started
            print(
                f"operator process cpu while converging: {time.process_time() - cpu_before:.1f} s"
            )
            await operator.settled(timeout=60)
            window = await emulator.counts()
            window.subtract(before)
            reconciles = sum(
                operator.metric("ome_inferenceservice_reconcile_total", result=r)
                for r in ("success", "error", "parked")
            )
            replica_passes = sum(
                operator.metric("ome_inferencereplica_reconcile_total", result=r)
                for r in ("success", "error")
            )
        objects = await asyncio.to_thread(_owned, api)
        replica_statuses = [
            (_plain(r), r.get("status") or {})
            for r in await asyncio.to_thread(_all, api, "/apis/ome.io/v1beta1/inferencereplicas")
        ]
        statuses = {
            (i["metadata"]["namespace"], i["metadata"]["name"]): i.get("status") or {}
            for i in await asyncio.to_thread(_all, api, "/apis/ome.io/v1beta1/inferenceservices")
        }
    print(f"api server cpu (operator phase, incl. seeding): {emulator.cpu_seconds:.1f} s")
    requests = sum(n for key, n in window.items() if not key.startswith("WATCH"))
    lists = sum(n for key, n in window.items() if key.startswith("LIST"))
    writes = sum(n for key, n in window.items() if key.split()[0] in ("CREATE", "UPDATE", "DELETE"))
    by_kind = {
        k: n for k, n in sorted(window.items()) if k.split()[0] in ("CREATE", "UPDATE", "DELETE")
    }
    print("operator writes: " + ", ".join(f"{k} {n}" for k, n in by_kind.items()))
    stats = {
        "requests": requests,
        "lists": lists,
        "writes": writes,
        "reconciles": reconciles,
        "replica_passes": replica_passes,
        "objects": objects,
        "statuses": statuses,
        "replica_statuses": replica_statuses,
    }
    return converge, stats


async def _bare_phase(
    options: argparse.Namespace, tmp: pathlib.Path, stats: dict[str, Any]
) -> float:
    async with _server(options, tmp) as emulator:
        api = emulator.api
        seeds = [_model(), *_runtimes(options.runtimes)]
        await asyncio.to_thread(_create_all, api, seeds, options.workers)
        isvcs = _isvcs(options.isvcs)
        statuses = [
            (i, stats["statuses"][(i["metadata"]["namespace"], i["metadata"]["name"])])
            for i in isvcs
        ]
        started = time.perf_counter()
        await asyncio.to_thread(_create_all, api, isvcs, options.workers)
        await asyncio.to_thread(_create_all, api, stats["objects"], options.workers)
        await asyncio.to_thread(_patch_statuses, api, statuses, options.workers)
        await asyncio.to_thread(_patch_statuses, api, stats["replica_statuses"], options.workers)
        bare = time.perf_counter() - started
    print(f"api server cpu (bare phase, incl. seeding): {emulator.cpu_seconds:.1f} s")
    return bare


async def _main(options: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        converge, stats = await _operator_phase(options, pathlib.Path(tmp))
        bare = await _bare_phase(options, pathlib.Path(tmp), stats)
    reconciles = max(stats["reconciles"] + stats["replica_passes"], 1)
    replicas = len(stats["replica_statuses"])
    # Every object created once; a status per InferenceService and one more per OMENative one
    # (when its InferenceReplica's counts arrive); an InferenceReplica's status per phase its
    # Instance goes through here (Creating, then Pending: no kubelet makes a pod ready).
    minimum = len(stats["objects"]) + len(stats["statuses"]) + replicas + 2 * replicas
    server = "real control plane" if options.controlplane else "emulator"
    print(
        f"isvcs: {options.isvcs}, runtimes: {options.runtimes}, workers: {options.workers}, "
        f"api server: {server}"
    )
    print(
        f"reconciles: {int(stats['reconciles'])} InferenceService, "
        f"{int(stats['replica_passes'])} InferenceReplica; operator requests: "
        f"{stats['requests']} (writes: {stats['writes']}, watches not counted)"
    )
    print(
        f"writes: {stats['writes']}, physical minimum: {minimum} ({len(stats['objects'])} objects"
        f" created, {len(stats['statuses']) + replicas} InferenceService and {2 * replicas}"
        " InferenceReplica statuses)"
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
    parser.add_argument(
        "--controlplane", action="store_true", help="against the real control plane"
    )
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
