"""Scale benchmark (issue 13): one operator with 4 workers, 10,000 InferenceServices and 1,000
runtimes; every cost proportional to what changed.

The emulator and the operator (``ome-operator run``, this checkout's code) run in processes of
their own, as in ``memory.py``, whose catalog this is: ten namespaces of InferenceServices over
ten models, three quarters of the runtimes ServingRuntimes spread over the namespaces (each
matches one model size), a quarter ClusterServingRuntimes matching every model (never chosen:
a namespace runtime comes first). The InferenceServices are created in two halves; the RSS slope
between the halves is the memory per InferenceService. Then two runtime changes:

* a label-only change of a ClusterServingRuntime: no pass reads it (target: 0 reconciles);
* a priority raise of a ServingRuntime of ``ns-00`` that then wins for every InferenceService
  of that namespace (10%): only those are reconciled, and written once each (the engine
  Deployment, its status).

Prints, as its last lines:

    converge: <s> s for <n> InferenceServices, <ms> ms operator CPU per InferenceService
    memory: <x> MiB converged, <k> KiB per InferenceService
    api requests per reconcile: <r>
    label-only runtime change: <s> s, <n> reconciles, <w> writes
    runtime change moving <m> InferenceServices: <s> s, <n> reconciles, <w> writes

Targets: 0 reconciles and <= 0.5 s for the label-only change; <= 2.5 ms CPU and <= 20 KiB per
InferenceService. Not part of the tests; takes several minutes:

    python tests/bench/scale.py [--isvcs 10000] [--runtimes 1000] [--workers 4]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import sys
import tempfile
import threading
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

from tests.bench import memory  # noqa: E402
from tests.bench.memory import (  # noqa: E402
    NAMESPACES,
    STARTED,
    Bench,
    cluster_runtime,
    isvcs,
    models,
    serving_runtime,
)

#: Seconds of no reconcile and no write that end a wait (the memory benchmark's quiet).
QUIET = 3.0
_CSR = "/apis/ome.io/v1beta1/clusterservingruntimes"


def _runtimes(count: int) -> list[dict[str, Any]]:
    cluster = count // 4
    per_namespace = (count - cluster) // len(NAMESPACES)
    namespaced = [serving_runtime(ns, j) for ns in NAMESPACES for j in range(per_namespace)]
    return [*(cluster_runtime(c) for c in range(cluster)), *namespaced]


class _Progress:
    """Reconciles and writes from a mark on, and when they last moved."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.reconciles, self.writes, _ = bench.progress()

    def until_quiet(self, timeout: float, components: int = 0) -> tuple[float, float, int]:
        """(seconds from the mark to the last reconcile or write, reconciles, writes)."""
        started = time.monotonic()
        last, moved_at = (self.reconciles, self.writes), started
        while True:
            time.sleep(0.25)
            reconciles, writes, found = self.bench.progress()
            now = time.monotonic()
            if (reconciles, writes) != last:
                last, moved_at = (reconciles, writes), now
            if found >= components and now - moved_at >= QUIET:
                return moved_at - started, reconciles - self.reconciles, writes - self.writes
            if now - started > timeout:
                raise SystemExit(f"scale: not quiet within {timeout:.0f} s")


def _patch(bench: Bench, path: str, body: dict[str, Any]) -> None:
    bench.send([("PATCH", path, body)])


def measure(options: argparse.Namespace) -> None:
    memory.QUIET = QUIET
    half = options.isvcs // 2
    with tempfile.TemporaryDirectory() as folder:
        bench = Bench(pathlib.Path(folder), options)
        try:
            bench.quiet(options.timeout, "the start")
            bench.create([*models(), *_runtimes(options.runtimes)])
            bench.quiet(options.timeout, "reading the runtimes")
            counts, rss = bench.progress(), {}
            took = cpu = 0.0
            for first, count in ((0, half), (half, options.isvcs - half)):
                progress, before = _Progress(bench), bench.cpu_seconds()
                bench.create(isvcs(first, count))
                seconds, _, _ = progress.until_quiet(options.timeout, first + count)
                took, cpu = took + seconds, cpu + bench.cpu_seconds() - before
                rss[first + count] = bench.rss()  # after a collection, not counted in the CPU
                print(f"{first + count} InferenceServices: {seconds:.1f} s", flush=True)
            cpu_ms = cpu * 1000 / options.isvcs
            reconciles, _, _ = bench.progress()
            requests = _requests(bench) / max(reconciles - counts[0], 1)

            label = _Progress(bench)
            _patch(bench, f"{_CSR}/csr-000", {"metadata": {"labels": {"team": "platform"}}})
            label_figures = label.until_quiet(options.timeout)

            moving = _Progress(bench)
            path = "/apis/ome.io/v1beta1/namespaces/ns-00/servingruntimes/sr-10"
            _patch(bench, path, _priority(9))
            moved = sum(1 for i in range(options.isvcs) if i % len(NAMESPACES) == 0)
            move_figures = moving.until_quiet(options.timeout)
        finally:
            bench.close()
    per_isvc = (rss[options.isvcs] - rss[half]) / (options.isvcs - half)
    figures = "{:.2f} s, {:.0f} reconciles, {} writes"
    print(
        f"converge: {took:.1f} s for {options.isvcs} InferenceServices, "
        f"{cpu_ms:.2f} ms operator CPU per InferenceService"
    )
    print(
        f"memory: {rss[options.isvcs] / 1024:.1f} MiB converged, "
        f"{per_isvc:.1f} KiB per InferenceService"
    )
    print(f"api requests per reconcile: {requests:.2f}")
    print("label-only runtime change: " + figures.format(*label_figures))
    print(f"runtime change moving {moved} InferenceServices: " + figures.format(*move_figures))


def _priority(priority: int) -> dict[str, Any]:
    entry = serving_runtime("ns-00", 10)["spec"]["supportedModelFormats"][0]
    return {"spec": {"supportedModelFormats": [{**entry, "priority": priority}]}}


def _requests(bench: Bench) -> float:
    """The operator's requests so far, every verb (the emulator's counts)."""
    bench.emulator.send_signal(signal.SIGUSR1)
    return float(sum(json.loads(bench.emulator.stdout.readline()).values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isvcs", type=int, default=10_000)
    parser.add_argument("--runtimes", type=int, default=1_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per wait")
    options = parser.parse_args()

    def abort() -> None:
        print("scale: aborted", file=sys.stderr, flush=True)
        for process in STARTED:
            process.kill()
        os._exit(1)

    timer = threading.Timer(options.timeout * 4, abort)
    timer.daemon = True
    timer.start()
    measure(options)


if __name__ == "__main__":
    main()
