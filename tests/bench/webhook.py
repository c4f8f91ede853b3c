"""Webhook benchmark (issue 20): InferenceService reviews at concurrency 64 over HTTPS.

The emulator (``emulator_process.py``) and the operator (``ome-operator run``, this checkout's
code, with a serving certificate of its own in ``--webhook-cert-dir``) run in processes of their
own; this process sends the reviews (aiohttp, one connection per concurrent client, reused as the
API server reuses its). The cluster holds one model and ``--runtimes`` ClusterServingRuntimes, so
each review auto-selects a runtime from the operator's caches. Bounded: ``--reviews`` reviews,
and no longer than ``--seconds``. Prints, as its last lines:

    reviews: <n> in <t> s at concurrency <c>: <r> reviews/s, p50 <ms> ms, p99 <ms> ms
    answers: <allowed> allowed, <other> other; operator CPU <s> s; <cores> cores

Reference (issue 20, a real control plane): about 830 reviews/s, p99 under 240 ms; the target
is no worse. Not part of the tests:

    python tests/bench/webhook.py [--reviews 5000] [--concurrency 64] [--runtimes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import pathlib
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import aiohttp  # noqa: E402
import kubernetes.config  # noqa: E402
from kubernetes import client as k8s_client  # noqa: E402

from ome_operator.cluster.api import KubeApi  # noqa: E402
from ome_operator.cluster.serving_certificates import issue_certificate  # noqa: E402
from tests.bench.processes import operator_env, stop  # noqa: E402
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest  # noqa: E402
from tests.support.kube_access import write_kubeconfig  # noqa: E402
from tests.support.operator_run import free_port  # noqa: E402

UID = "705ab4f5-6393-11e8-b7cc-42010a800002"
PATH = "validate-inferenceservice"
OPERATOR = (
    "import sys\nfrom ome_operator.operator_command import main\nsys.exit(main(sys.argv[1:]))\n"
)


def review(name: str) -> dict[str, Any]:
    """An InferenceService CREATE review, as the API server sends it."""
    obj = isvc_manifest(name, namespace="default", model="llama")
    resource = {"group": "ome.io", "version": "v1beta1", "resource": "inferenceservices"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": UID,
            "kind": {"group": "ome.io", "version": "v1beta1", "kind": "InferenceService"},
            "resource": resource,
            "requestKind": {"group": "ome.io", "version": "v1beta1", "kind": "InferenceService"},
            "requestResource": resource,
            "name": name,
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "object": obj,
            "oldObject": None,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


def seed(api: KubeApi, runtimes: int) -> None:
    model = model_manifest(
        "llama", modelParameterSize="8B", storage={"path": "/m/llama", "storageUri": "hf://l"}
    )
    api.request("POST", "/apis/ome.io/v1beta1/clusterbasemodels", model)
    for i in range(runtimes):
        runtime = runtime_manifest(
            f"runtime-{i:03d}",
            formats=[entry(autoSelect=True, priority=1 + i % 5)],
            size_range=("1B", f"{10 + i}B"),
            engineConfig={"runner": {"name": "ome-container", "image": f"vllm:{i}"}},
        )
        api.request("POST", "/apis/ome.io/v1beta1/clusterservingruntimes", runtime)


def cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(probe: Any, timeout: float, what: str, operator: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if operator.poll() is not None:
            raise SystemExit(f"webhook: the operator exited while waiting for {what}")
        if time.monotonic() > deadline:
            raise SystemExit(f"webhook: aborted, {what} took longer than {timeout:.0f} s")
        time.sleep(0.2)


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return answer.status == 200
    except (OSError, urllib.error.URLError):
        return False


async def load(url: str, reviews: int, concurrency: int, seconds: float) -> dict[str, Any]:
    """Send ``reviews`` reviews from ``concurrency`` clients (at most ``seconds``)."""
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    latencies: list[float] = []
    answers = {"allowed": 0, "other": 0}
    bodies = [review(f"isvc-{i:05d}") for i in range(reviews)]
    next_index = iter(range(reviews))
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=client)
    async with aiohttp.ClientSession(connector=connector) as session:
        # One warm-up review: the caches are bound to kopf's indexes by the first handler call.
        async with session.post(url, json=review("warm-up")) as answer:
            await answer.read()

        async def worker() -> None:
            for index in next_index:
                if time.monotonic() > deadline:
                    return
                started = time.perf_counter()
                async with session.post(url, json=bodies[index]) as answer:
                    body = await answer.json() if answer.status == 200 else None
                latencies.append(time.perf_counter() - started)
                allowed = body is not None and body["response"]["allowed"]
                answers["allowed" if allowed else "other"] += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "count": len(latencies),
        "elapsed": elapsed,
        "p50": latencies[len(latencies) // 2],
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        **answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runtimes", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120.0, help="the load's time bound")
    options = parser.parse_args()
    started: list[subprocess.Popen[Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = pathlib.Path(folder)
        try:
            emulator = subprocess.Popen(
                [sys.executable, str(pathlib.Path(__file__).with_name("emulator_process.py"))],
                stdout=subprocess.PIPE,
                text=True,
            )
            started.append(emulator)
            url = emulator.stdout.readline().strip()  # type: ignore[union-attr]
            bench = write_kubeconfig(tmp / "bench", url)
            bench.write_text(bench.read_text().replace("test-token", "bench"))
            configuration = k8s_client.Configuration()
            kubernetes.config.load_kube_config(str(bench), client_configuration=configuration)
            seed(KubeApi(k8s_client.ApiClient(configuration)), options.runtimes)
            issued = issue_certificate(["127.0.0.1"], datetime.datetime.now(datetime.UTC))
            (tmp / "tls.crt").write_bytes(issued.cert)
            (tmp / "tls.key").write_bytes(issued.key)
            metrics, health, webhook = free_port(), free_port(), free_port()
            argv = [sys.executable, "-c", OPERATOR, "run", "--operator-namespace=ome"]
            argv += [f"--metrics-bind-address=127.0.0.1:{metrics}"]
            argv += [f"--health-probe-bind-address=127.0.0.1:{health}"]
            argv += ["--webhook-bind-address=127.0.0.1", f"--webhook-port={webhook}"]
            argv += [f"--webhook-cert-dir={tmp}", "--log-format=json"]
            env = operator_env(write_kubeconfig(tmp / "operator", url))
            with (tmp / "operator.log").open("wb") as log:
                operator = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
            started.append(operator)
            wait_until(lambda: ready(metrics), 60, "readiness", operator)
            cpu_before = cpu_seconds(operator.pid)
            found = asyncio.run(
                load(
                    f"https://127.0.0.1:{webhook}/{PATH}",
                    options.reviews,
                    options.concurrency,
                    options.seconds,
                )
            )
            cpu = cpu_seconds(operator.pid) - cpu_before
        finally:
            for process in reversed(started):
                stop(process)
    rate = found["count"] / found["elapsed"]
    print(
        f"reviews: {found['count']} in {found['elapsed']:.1f} s at concurrency "
        f"{options.concurrency}: {rate:.0f} reviews/s, p50 {found['p50'] * 1000:.0f} ms, "
        f"p99 {found['p99'] * 1000:.0f} ms"
    )
    print(
        f"answers: {found['allowed']} allowed, {found['other']} other; operator CPU {cpu:.1f} s;"
        f" {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
