"""Memory benchmark (issue 8): the operator's resident memory with 10,000 InferenceServices and
1,000 runtimes, converged, and again after 1,000 runtime changes.

The emulator runs in a process of its own (``emulator_process.py``), and so does the operator:
``ome-operator run`` (this checkout's code) against it, started by a wrapper that calls
``gc.collect()`` on SIGUSR2. Its RSS is ``VmRSS`` of ``/proc/<pid>/status``, read once the
operator is quiet (no reconcile and no write for a few seconds) and a collection has run.

Ten namespaces hold 1,000 InferenceServices each (ten models of 1B to 10B, a hundred of each);
each namespace has 75 ServingRuntimes (each matches one model size; the first match of a
model wins), and 250 ClusterServingRuntimes match every model (never chosen: a namespace
runtime comes first, S2). The figures:

* baseline: the operator started, nothing to watch;
* per runtime: (with 1,000 runtimes - baseline) / 1,000, before any InferenceService;
* per InferenceService: (at 10,000 - at 5,000) / 5,000, the steady slope;
* converged: at 10,000; then 1,000 runtime changes (250 cluster-runtime label changes and 250
  image changes, each re-queueing all 10,000; 450 image changes of namespace runtimes that are
  not chosen; 50 priority changes that move the choice for 100 InferenceServices each),
  converged again, and checked: every InferenceService's status names the runtime the core
  chooses.

Prints, as its last lines:

    memory per InferenceService: <x> KiB
    memory per runtime: <y> KiB
    memory baseline: <z> MiB
    memory: <a> MiB converged, <b> MiB after <1000 x rounds> runtime changes

(target: b <= 1.1 a). Not part of the tests; takes several minutes:

    python tests/bench/memory.py [--isvcs 10000] [--workers 4] [--rounds 1] [--timeout 3600]

``--rounds N`` repeats the changes (even rounds move the choices back, every round sets new
images and labels) and prints the memory after each round: bounded memory levels off.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import kubernetes.config  # noqa: E402
from kubernetes import client as k8s_client  # noqa: E402

from ome_operator.cli.render import render_report  # noqa: E402
from ome_operator.cluster.api import KubeApi  # noqa: E402
from tests.bench.processes import operator_env, stop  # noqa: E402
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest  # noqa: E402
from tests.support.kube_access import write_kubeconfig  # noqa: E402
from tests.support.operator_run import free_port  # noqa: E402

NAMESPACES = tuple(f"ns-{n:02d}" for n in range(10))
MODELS = 10
SERVING_RUNTIMES = 75  # per namespace
CLUSTER_RUNTIMES = 250
#: Seconds without a reconcile, a write or more than a little CPU that make the operator quiet.
QUIET = 5.0
#: Processes this bench started: ended on an abort too.
STARTED: list[subprocess.Popen[Any]] = []
#: The operator, with a collection on SIGUSR2 (measured after one).
OPERATOR = (
    "import gc, signal, sys\n"
    "signal.signal(signal.SIGUSR2, lambda *_: gc.collect())\n"
    "from ome_operator.operator_command import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _runner(image: str) -> dict[str, Any]:
    return {"name": "ome-container", "image": image, "ports": [{"containerPort": 8080}]}


def serving_runtime(namespace: str, j: int, priority: int | None = None) -> dict[str, Any]:
    """Matches the model of size ``1 + j % 10`` B; of a model's matches the first (``j`` below
    10) wins, unless another has a higher priority."""
    size = f"{1 + j % MODELS}B"
    return runtime_manifest(
        f"sr-{j:02d}",
        cluster=False,
        namespace=namespace,
        formats=[entry(autoSelect=True, priority=priority or 1 + j % 5)],
        size_range=(size, size),
        engineConfig={"runner": _runner(f"sr-{j}:1")},
    )


def cluster_runtime(c: int) -> dict[str, Any]:
    return runtime_manifest(
        f"csr-{c:03d}",
        formats=[entry(autoSelect=True, priority=1 + c % 5)],
        size_range=("1B", f"{MODELS}B"),
        engineConfig={"runner": _runner(f"csr-{c}:1")},
    )


def models() -> list[dict[str, Any]]:
    return [
        model_manifest(
            f"model-{k}",
            modelParameterSize=f"{k + 1}B",
            storage={"storageUri": f"hf://models/{k}", "path": f"/models/{k}"},
        )
        for k in range(MODELS)
    ]


def runtimes() -> list[dict[str, Any]]:
    namespaced = [serving_runtime(ns, j) for ns in NAMESPACES for j in range(SERVING_RUNTIMES)]
    return [*(cluster_runtime(c) for c in range(CLUSTER_RUNTIMES)), *namespaced]


def isvcs(first: int, count: int) -> list[dict[str, Any]]:
    return [
        isvc_manifest(
            f"isvc-{i:05d}", namespace=NAMESPACES[i % len(NAMESPACES)], model=f"model-{i % MODELS}"
        )
        for i in range(first, first + count)
    ]


#: (method, path, body) of a write.
Write = tuple[str, str, dict[str, Any] | None]


def runtime_changes(round: int = 1) -> list[Write]:
    """The 1,000 changes of one round: what they move is in the module docstring; an even
    round moves the choices back."""
    csr = "/apis/ome.io/v1beta1/clusterservingruntimes"

    def sr(namespace: str, j: int) -> str:
        return f"/apis/ome.io/v1beta1/namespaces/{namespace}/servingruntimes/sr-{j:02d}"

    labels = [
        ("PATCH", f"{csr}/csr-{c:03d}", {"metadata": {"labels": {"touched": str(round)}}})
        for c in range(CLUSTER_RUNTIMES)
    ]
    images = [
        ("PATCH", f"{csr}/csr-{c:03d}", _image(f"csr-{c}:{round + 1}"))
        for c in range(CLUSTER_RUNTIMES)
    ]
    losers = [  # j >= 10: never the first match of a model
        ("PATCH", sr(ns, j), _image(f"sr-{j}:{round + 1}"))
        for ns in NAMESPACES
        for j in range(10, 55)
    ]
    moves = [  # sr-1k outranks sr-0k: models 0-4 move, in every namespace
        ("PATCH", sr(ns, 10 + k), {"spec": _moved(ns, 10 + k, round)["spec"]})
        for ns in NAMESPACES
        for k in range(5)
    ]
    return [*labels, *images, *losers, *moves]


def _moved(namespace: str, j: int, round: int) -> dict[str, Any]:
    moved = serving_runtime(namespace, j, priority=9 if round % 2 else None)
    moved["spec"]["engineConfig"] = _image(f"sr-{j}:{round + 1}")["spec"]["engineConfig"]
    return moved


def _image(image: str) -> dict[str, Any]:
    return {"spec": {"engineConfig": {"runner": {"image": image}}}}


def chosen_runtimes(current: list[dict[str, Any]]) -> dict[tuple[str, int], str]:
    """(namespace, model) -> the runtime the pure core chooses, for the runtimes as they are."""
    sample = [
        isvc_manifest(f"probe-{k}", namespace=ns, model=f"model-{k}")
        for ns in NAMESPACES
        for k in range(MODELS)
    ]
    report = render_report([*current, *models(), *sample], now="2026-01-01T00:00:00Z")
    return {
        (item["inferenceService"]["namespace"], int(item["inferenceService"]["name"][6:])): (
            item["status"]["runtime"]["name"]
        )
        for item in report["items"]
    }


# -- the processes ---------------------------------------------------------------------------------


class Bench:
    def __init__(self, tmp: pathlib.Path, options: argparse.Namespace) -> None:
        self.tmp, self.options = tmp, options
        script = pathlib.Path(__file__).with_name("emulator_process.py")
        self.emulator = subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, text=True
        )
        STARTED.append(self.emulator)
        url = self.emulator.stdout.readline().strip()
        kubeconfig = write_kubeconfig(tmp / "operator", url)
        bench = write_kubeconfig(tmp / "bench", url)
        bench.write_text(bench.read_text().replace("test-token", "bench"))
        configuration = k8s_client.Configuration()
        kubernetes.config.load_kube_config(str(bench), client_configuration=configuration)
        configuration.connection_pool_maxsize = 16
        self.api = KubeApi(k8s_client.ApiClient(configuration))
        self.metrics, health = free_port(), free_port()
        argv = [sys.executable, "-c", OPERATOR, "run", "--operator-namespace=ome"]
        argv += [f"--metrics-bind-address=127.0.0.1:{self.metrics}"]
        argv += [f"--health-probe-bind-address=127.0.0.1:{health}"]
        argv += ["--webhook-bind-address=127.0.0.1", f"--webhook-port={free_port()}"]
        argv += [f"--workers={options.workers}", "--log-format=json"]
        env = operator_env(kubeconfig)
        self.log = (tmp / "operator.log").open("wb")
        self.operator = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        STARTED.append(self.operator)
        self._wait(lambda: _get(f"http://127.0.0.1:{health}/healthz") is not None, 60, "start")

    def close(self) -> None:
        for process in (self.operator, self.emulator):
            stop(process)
        self.log.close()

    def _wait(self, probe: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not probe():
            if self.operator.poll() is not None:
                tail = (self.tmp / "operator.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"memory: the operator exited ({what}):\n{tail}")
            if time.monotonic() > deadline:
                raise SystemExit(f"memory: aborted, {what} took longer than {timeout:.0f} s")
            time.sleep(0.5)

    def send(self, writes: Iterable[Write]) -> None:
        def one(write: Write) -> None:
            method, path, body = write
            content = "application/merge-patch+json" if method == "PATCH" else "application/json"
            self.api.request(method, path, body, content_type=content)

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(one, writes))

    def create(self, manifests: Iterable[dict[str, Any]]) -> None:
        self.send(("POST", _collection(m), m) for m in manifests)

    def progress(self) -> tuple[float, int, float]:
        """(reconciles, the operator's writes, components in a mode) so far."""
        text = _get(f"http://127.0.0.1:{self.metrics}/metrics") or ""
        reconciles = _sum(text, "ome_inferenceservice_reconcile_total")
        components = _sum(text, "ome_components_by_mode")
        self.emulator.send_signal(signal.SIGUSR1)
        counts = json.loads(self.emulator.stdout.readline())
        writes = sum(n for key, n in counts.items() if key.split()[0] in _WRITE_ACTIONS)
        return reconciles, writes, components

    def quiet(self, timeout: float, what: str, components: int | None = None) -> None:
        """Wait until no reconcile and no write for ``QUIET`` seconds (and, if given, that many
        components are in a mode: every InferenceService reconciled)."""
        state: dict[str, Any] = {"last": None, "since": 0.0, "cpu": 0.0}

        def probe() -> bool:
            reconciles, writes, found = self.progress()
            now, cpu = time.monotonic(), self.cpu_seconds()
            busy = cpu - state["cpu"] > 0.05 * (now - state["since"]) + 0.1  # 5%, and a bit
            if (reconciles, writes) != state["last"] or busy:
                state.update(last=(reconciles, writes), since=now, cpu=cpu)
            done = components is None or found >= components
            return done and now - state["since"] >= QUIET

        self._wait(probe, timeout, what)

    def cpu_seconds(self) -> float:
        stat = pathlib.Path(f"/proc/{self.operator.pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self) -> int:
        """The operator's VmRSS in KiB, after a collection: the median of three readings."""
        readings = []
        for _ in range(3):
            self.operator.send_signal(signal.SIGUSR2)
            time.sleep(1.0)
            status = pathlib.Path(f"/proc/{self.operator.pid}/status").read_text()
            readings.append(int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1)))
        return sorted(readings)[1]

    def listed(self, path: str) -> list[dict[str, Any]]:
        found = self.api.request("GET", path)
        kind = {"apiVersion": found.get("apiVersion"), "kind": found["kind"][: -len("List")]}
        return [{**kind, **item} for item in found.get("items") or []]


_WRITE_ACTIONS = ("CREATE", "UPDATE", "DELETE", "PATCH", "POST", "PUT")


def _sum(metrics: str, name: str) -> float:
    pattern = re.compile(rf"^{name}(?:{{[^}}]*}})? (\S+)$", re.M)
    return sum(float(value) for value in pattern.findall(metrics))


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.read().decode()
    except OSError:
        return None


def _collection(obj: dict[str, Any]) -> str:
    plural = {
        "ServingRuntime": "servingruntimes",
        "ClusterServingRuntime": "clusterservingruntimes",
        "ClusterBaseModel": "clusterbasemodels",
        "InferenceService": "inferenceservices",
    }[obj["kind"]]
    namespace = obj["metadata"].get("namespace")
    scope = f"/namespaces/{namespace}" if namespace else ""
    return f"/apis/{obj['apiVersion']}{scope}/{plural}"


def _mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


def measure(options: argparse.Namespace) -> None:
    started = time.monotonic()
    left = lambda: max(options.timeout - (time.monotonic() - started), 1.0)  # noqa: E731
    half = options.isvcs // 2
    with tempfile.TemporaryDirectory() as folder:
        bench = Bench(pathlib.Path(folder), options)
        try:
            bench.quiet(left(), "the start")
            baseline = bench.rss()
            print(f"started: {_mib(baseline)} MiB", flush=True)
            bench.create([*models(), *runtimes()])
            bench.quiet(left(), "reading the runtimes")
            with_runtimes = bench.rss()
            count = CLUSTER_RUNTIMES + SERVING_RUNTIMES * len(NAMESPACES)
            print(f"{count} runtimes: {_mib(with_runtimes)} MiB", flush=True)
            measured = {}
            for first in (0, half):
                bench.create(isvcs(first, options.isvcs - half if first else half))
                total = options.isvcs if first else half
                bench.quiet(left(), f"converging {total} InferenceServices", components=total)
                measured[total] = bench.rss()
                elapsed = time.monotonic() - started
                print(
                    f"{total} InferenceServices: {_mib(measured[total])} MiB ({elapsed:.0f} s)",
                    flush=True,
                )
            converged = measured[options.isvcs]
            changed = 0
            for round in range(1, options.rounds + 1):
                changes = runtime_changes(round)
                bench.send(changes)
                changed += len(changes)
                bench.quiet(left(), f"converging after {changed} runtime changes")
                after = bench.rss()
                current = [
                    *bench.listed("/apis/ome.io/v1beta1/clusterservingruntimes"),
                    *bench.listed("/apis/ome.io/v1beta1/servingruntimes"),
                ]
                chosen = chosen_runtimes(current)
                services = bench.listed("/apis/ome.io/v1beta1/inferenceservices")
                wrong = sum(
                    1
                    for i in services
                    if ((i.get("status") or {}).get("runtime") or {}).get("name")
                    != chosen[i["metadata"]["namespace"], int(i["spec"]["model"]["name"][6:])]
                )
                print(
                    f"after {changed} runtime changes: {_mib(after)} MiB; "
                    f"{len(services)} statuses checked, not as the core chooses: {wrong} "
                    f"({time.monotonic() - started:.0f} s in all)",
                    flush=True,
                )
        finally:
            bench.close()
    per_isvc = (converged - measured[half]) / (options.isvcs - half)
    per_runtime = (with_runtimes - baseline) / count
    print(f"memory per InferenceService: {per_isvc:.1f} KiB")
    print(f"memory per runtime: {per_runtime:.1f} KiB")
    print(f"memory baseline: {_mib(baseline)} MiB")
    print(
        f"memory: {_mib(converged)} MiB converged, {_mib(after)} MiB after "
        f"{1000 * options.rounds} runtime changes"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isvcs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds of the 1,000 runtime changes (1..10)"
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds in all")
    options = parser.parse_args()

    def abort() -> None:
        print(f"memory: aborted after {options.timeout + 300:.0f} s", file=sys.stderr, flush=True)
        for process in STARTED:
            process.kill()
        os._exit(1)

    timer = threading.Timer(options.timeout + 300, abort)
    timer.daemon = True
    timer.start()
    measure(options)


if __name__ == "__main__":
    main()
