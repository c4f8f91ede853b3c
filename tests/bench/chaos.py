"""Chaos benchmark (issue 8): the scenario of tests/integration/test_chaos.py at 1,000
InferenceServices, with the emulator in a process of its own (as in ``reconcile.py``).

Two runs of the same fleet and changes, each against a fresh emulator: a calm one, then one that
answers the operator's writes with 500s and 409s, cuts and refuses its watches (410s in the
stream and on the request), and restarts the operator mid-flight. The faulty run is compared
with the calm one (objects, statuses, events) and both runs' statuses with the pure core's.
Prints, as its last line:

    chaos: duplicates <d>, missing <m>, status mismatches <s>, writes <w> (fault-free <f>)

where ``w`` and ``f`` count the operator's write requests (failed ones included) in the faulty
and the calm run. Not part of the tests:

    python tests/bench/chaos.py [--isvcs 1000] [--seed 8] [--workers 4] [--timeout 900]
                                [--no-input-watch-gone]

``--no-input-watch-gone`` leaves out the 410 answered to a watch request of InferenceServices
and runtimes (up to 473ba4a kopf watched them, and such a 410 made it, and the operator with
it, exit: the run then stops with ``chaos: aborted, the operator exited: ...``). The run aborts
with a message once ``--timeout`` seconds have passed.

``python tests/bench/chaos.py --serve [--faults] ...`` is the emulator's side: it prints its
URL, then answers each ``report`` line on stdin with one JSON line (the operator's writes, how
often each owned object was created, the faults answered) and ends on ``stop``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import pathlib
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import kmock  # noqa: E402
import kubernetes.config  # noqa: E402
import kubernetes.config.kube_config  # noqa: E402
from kubernetes import client as k8s_client  # noqa: E402

from ome_operator.cluster.api import KubeApi  # noqa: E402
from tests.integration import test_chaos as chaos  # noqa: E402
from tests.support.kube_access import write_kubeconfig  # noqa: E402
from tests.support.kube_emulator import DECLARED_RESOURCES, ApiServerLikeEmulator  # noqa: E402

BENCH_TOKEN = "Bearer bench"
#: Every watch ends after this long (see ``test_chaos.WATCH_SECONDS``).
WATCH_SECONDS = 10


# -- the emulator's process ------------------------------------------------------------------------


async def serve(options: argparse.Namespace) -> None:
    writes: list[str] = []

    class CountingEmulator(ApiServerLikeEmulator):
        async def _handle(self, request):  # type: ignore[no-untyped-def]
            if request.headers.get("Authorization") != BENCH_TOKEN:
                if request.method in chaos.WRITES:
                    writes.append(f"{request.method.name} {request.url.path}")
            return await super()._handle(request)

    emulator = CountingEmulator(seed=options.seed, watch_seconds=WATCH_SECONDS)
    async with emulator, kmock.Server(emulator):
        emulator.resources.load_bundled()
        emulator.declare(*DECLARED_RESOURCES)
        table = chaos.fault_table(input_watch_gone=options.input_watch_gone)
        injected = chaos.inject(emulator, table) if options.faults else []
        print(str(emulator.url), flush=True)
        while (await asyncio.to_thread(sys.stdin.readline)).strip() not in ("", "stop"):
            created = [[*key, n] for key, n in chaos.creations(emulator).items()]
            report = {"writes": writes, "created": created, "hits": chaos.hits(injected)}
            print(json.dumps(report), flush=True)


# -- the bench's side ------------------------------------------------------------------------------


class RemoteCluster:
    """The emulator process, through the official client with the bench's token (its requests
    are neither counted nor faulted: the faults are on the operator's kinds and watches)."""

    def __init__(self, process: asyncio.subprocess.Process, api: KubeApi) -> None:
        self.process = process
        self.api = api
        self.pool = concurrent.futures.ThreadPoolExecutor(8)

    async def send(self, changes: Iterable[chaos.Change]) -> None:
        def one(change: chaos.Change) -> None:
            if change.method == "PATCH":
                content = "application/merge-patch+json"
                self.api.request("PATCH", change.path, change.body, content_type=content)
            else:
                self.api.request(change.method, change.path, change.body)

        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self.pool, one, c) for c in changes))

    async def live(self, *resources: str) -> list[dict[str, Any]]:
        def listed(resource: str) -> list[dict[str, Any]]:
            found = self.api.request("GET", chaos.api_path(resource, None))
            kind = {"apiVersion": found.get("apiVersion"), "kind": found["kind"][: -len("List")]}
            return [{**kind, **item} for item in found.get("items") or []]

        lists = await asyncio.gather(*(asyncio.to_thread(listed, r) for r in resources))
        return [obj for found in lists for obj in found]

    async def report(self) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(b"report\n")
        await self.process.stdin.drain()
        return json.loads(await self.process.stdout.readline())

    async def creations(self) -> dict[chaos.Key, int]:
        return {(kind, ns, name): n for kind, ns, name, n in (await self.report())["created"]}

    async def writes(self) -> list[str]:
        return (await self.report())["writes"]


@contextlib.asynccontextmanager
async def emulator_process(options: argparse.Namespace, tmp: pathlib.Path, *, faults: bool):
    """A fresh emulator process, made the operator's cluster; its ``RemoteCluster``."""
    argv = [sys.executable, __file__, "--serve", f"--seed={options.seed}"]
    argv += ["--faults"] if faults else []
    argv += [] if options.input_watch_gone else ["--no-input-watch-gone"]
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**26
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        url = (await process.stdout.readline()).decode().strip()
        operator = write_kubeconfig(tmp / f"operator-{process.pid}", url)
        kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(operator)
        os.environ["KUBECONFIG"] = str(operator)
        bench = write_kubeconfig(tmp / f"bench-{process.pid}", url)
        bench.write_text(bench.read_text().replace("test-token", "bench"))
        configuration = k8s_client.Configuration()
        kubernetes.config.load_kube_config(str(bench), client_configuration=configuration)
        configuration.connection_pool_maxsize = 16
        yield RemoteCluster(process, KubeApi(k8s_client.ApiClient(configuration)))
        process.stdin.write(b"stop\n")
        await process.stdin.drain()
        await asyncio.wait_for(process.wait(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def run(
    options: argparse.Namespace, tmp: pathlib.Path, isvcs: list[dict[str, Any]], *, faults: bool
) -> tuple[chaos.Run, dict[str, int]]:
    async with emulator_process(options, tmp, faults=faults) as cluster:
        found = await chaos.scenario(
            cluster,
            isvcs,
            restart=faults,
            timeout=options.timeout / 2,
            poll=1.0,
            workers=options.workers,
        )
        hits = (await cluster.report())["hits"]
    return found, hits


async def bench(options: argparse.Namespace) -> None:
    isvcs = chaos.fleet(options.isvcs, options.seed)
    with tempfile.TemporaryDirectory() as folder:
        tmp = pathlib.Path(folder)
        started = time.monotonic()
        calm, _ = await run(options, tmp, isvcs, faults=False)
        print(f"fault-free run: converged in {calm.seconds:.1f} s, {len(calm.writes)} writes")
        try:
            faulty, hits = await run(options, tmp, isvcs, faults=True)
        except Exception as exc:  # kopf failed, and the operator with it
            sys.exit(f"chaos: aborted, the operator exited: {type(exc).__name__}: {exc}")
        print(
            f"faulty run: converged in {faulty.seconds:.1f} s, {len(faulty.writes)} writes, "
            f"{faulty.in_flight} InferenceServices queued at the restart"
        )
        print("faults answered: " + ", ".join(f"{what} {n}" for what, n in hits.items()))
    doomed = chaos.doomed_deployments(isvcs[: len(isvcs) // 2])
    found = chaos.differences(faulty, calm, doomed)
    lost_events = [m for m in found.missing if len(m) == 4 and m[2] == "RuntimeNotFound"]
    print(
        f"missing objects {len(found.missing) - len(lost_events)}, missing events "
        f"{len(lost_events)}, unexpected objects {len(found.unexpected)}, differing objects "
        f"{len(found.objects)}, writes after convergence {len(faulty.late)} "
        f"(fault-free {len(calm.late)}), fault-free statuses as the core's: "
        f"{calm.outcome.statuses == calm.core_statuses}"
    )
    for label, items in (("missing", found.missing), ("differing", found.objects)):
        if items:
            print(f"first {label}: {items[:3]}")
    print(f"isvcs: {options.isvcs}, seed: {options.seed}, took {time.monotonic() - started:.0f} s")
    print(
        f"chaos: duplicates {len(found.duplicates)}, missing {len(found.missing)}, status "
        f"mismatches {len(found.statuses)}, writes {len(faulty.writes)} "
        f"(fault-free {len(calm.writes)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isvcs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=chaos.SEED)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for both runs")
    parser.add_argument(
        "--no-input-watch-gone",
        dest="input_watch_gone",
        action="store_false",
        help="no 410 answered to a watch request of InferenceServices or runtimes",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--faults", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        asyncio.run(serve(options))
        return
    limit = options.timeout + 120  # both runs' waits, and the comparison

    def abort() -> None:
        print(f"chaos: aborted, not finished within {limit:.0f} s", file=sys.stderr, flush=True)
        os._exit(1)

    timer = threading.Timer(limit, abort)
    timer.daemon = True
    timer.start()
    asyncio.run(bench(options))


if __name__ == "__main__":
    main()
