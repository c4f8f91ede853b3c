"""Impact benchmark (issue 12): the admission warning of a runtime change (S16.6, S16.7) against
the caches of an operator holding 10,000 InferenceServices and 1,000 runtimes.

The catalog is the memory benchmark's (``memory.py``): ten namespaces of 1,000 InferenceServices
over ten models, 75 ServingRuntimes per namespace (each matches one model size) and 250
ClusterServingRuntimes that match every model. The caches are fed as the watches feed them, and
warmed as a converged operator's are (every InferenceService parsed and decided once). Each
change is then reviewed the way the webhook reviews it: what it reads is gathered
(``controller.runtime_changes.gather``), then the warnings are decided; the time is the median
of ``--repeat`` reviews of that change, both steps.

Prints a line per change, and as its last line (the slowest change; target <= 1,000 ms):

    impact: <ms> ms for 10000 InferenceServices

Not part of the tests:

    python tests/bench/impact.py [--isvcs 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import copy
import pathlib
import statistics
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

from ome_operator.cluster.informing import Relisted  # noqa: E402
from ome_operator.controller.runtime_changes import gather  # noqa: E402
from ome_operator.controller.snapshot import Caches  # noqa: E402
from ome_operator.controller.store import InferenceServiceStore  # noqa: E402
from ome_operator.core.impact import RuntimeChange, runtime_in_use, runtime_key  # noqa: E402
from ome_operator.models import from_manifest  # noqa: E402
from tests.bench.memory import (  # noqa: E402
    cluster_runtime,
    isvcs,
    models,
    runtimes,
    serving_runtime,
)


def _versioned(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for number, obj in enumerate(objects, start=1):
        obj["metadata"]["resourceVersion"] = str(number)
    return objects


def _caches(count: int) -> tuple[Caches, InferenceServiceStore]:
    caches, store = Caches(), InferenceServiceStore()
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in _versioned([*models(), *runtimes()]):
        by_kind.setdefault(obj["kind"], []).append(obj)
    for source in caches.sources:
        source.apply([Relisted(None, tuple(by_kind.get(source.kind, ())))])
    for obj in _versioned(isvcs(0, count)):
        meta = obj["metadata"]
        store.seen((meta["namespace"], meta["name"]), obj)
    return caches, store


def _warm(caches: Caches, store: InferenceServiceStore) -> None:
    """Decide every InferenceService once, as the converged operator has."""
    everything = RuntimeChange(deleted=frozenset({(True, "", "")}))  # concerns every namespace
    for isvc, snapshot in gather(everything, store, caches).subjects:
        runtime_in_use(isvc, snapshot)


def _relabelled(manifest: dict[str, Any]) -> Any:
    changed = copy.deepcopy(manifest)
    changed["metadata"]["labels"] = {"team": "platform"}
    return from_manifest(changed)


def _changes() -> list[tuple[str, RuntimeChange, Any]]:
    """(what, the change, the proposed runtime: None for a deletion)."""
    relabelled = _relabelled(cluster_runtime(0))
    higher = from_manifest(serving_runtime("ns-00", 10, priority=9))
    new_cluster = from_manifest(cluster_runtime(999))
    winner = from_manifest(serving_runtime("ns-00", 0))
    cluster = from_manifest(cluster_runtime(1))
    return [
        ("a cluster runtime's labels change", RuntimeChange((relabelled,)), relabelled),
        ("a cluster runtime is created", RuntimeChange((new_cluster,)), new_cluster),
        ("a namespace runtime's priority rises", RuntimeChange((higher,)), higher),
        (
            "the selected namespace runtime is deleted",
            RuntimeChange(deleted=frozenset({runtime_key(winner)})),
            None,
        ),
        (
            "a cluster runtime is deleted",
            RuntimeChange(deleted=frozenset({runtime_key(cluster)})),
            None,
        ),
    ]


def _review(caches: Caches, store: InferenceServiceStore, change, proposed) -> tuple[float, int]:
    started = time.perf_counter()
    inputs = gather(change, store, caches, proposed)
    impact, _ = inputs.warnings()
    return (time.perf_counter() - started) * 1000, impact.changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isvcs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    started = time.perf_counter()
    caches, store = _caches(options.isvcs)
    _warm(caches, store)
    print(f"caches fed and warmed in {time.perf_counter() - started:.1f} s", flush=True)
    slowest = 0.0
    for what, change, proposed in _changes():
        timings = [_review(caches, store, change, proposed) for _ in range(options.repeat)]
        median = statistics.median(ms for ms, _ in timings)
        slowest = max(slowest, median)
        print(f"{what}: {median:.0f} ms, {timings[0][1]} moved", flush=True)
    print(f"impact: {slowest:.0f} ms for {options.isvcs} InferenceServices")


if __name__ == "__main__":
    main()
