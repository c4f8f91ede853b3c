"""The API-server-like emulator in a process of its own, for benchmarks.

Prints its URL on the first line of stdout. On SIGUSR1 it prints one JSON line of the request
counts so far ("<action> <resource>"), leaving out the requests made with the bench's own token
(``Bearer bench``); on SIGTERM it prints them once more and exits. Keeping the emulator out of
the measured process lets the operator and the bare writer each use their own core, as they
would against a real API server.
"""

from __future__ import annotations

import asyncio
import collections
import json
import pathlib
import resource
import signal
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import kmock  # noqa: E402

from tests.support.kube_emulator import DECLARED_RESOURCES, ApiServerLikeEmulator  # noqa: E402

BENCH_TOKEN = "Bearer bench"


async def main() -> None:
    counts: collections.Counter[str] = collections.Counter()

    class CountingEmulator(ApiServerLikeEmulator):
        async def _handle(self, request):  # type: ignore[no-untyped-def]
            if request.headers.get("Authorization") != BENCH_TOKEN:
                action = request.action.name if request.action is not None else request.method
                plural = request.resource.plural if request.resource is not None else "-"
                counts[f"{action} {plural}"] += 1
            return await super()._handle(request)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, lambda: print(json.dumps(dict(counts)), flush=True))
    async with CountingEmulator() as emulator, kmock.Server(emulator):
        emulator.resources.load_bundled()
        emulator.declare(*DECLARED_RESOURCES)
        print(str(emulator.url), flush=True)
        await stop.wait()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({**counts, "cpu-seconds": cpu.ru_utime + cpu.ru_stime}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
