"""Lifecycle benchmark (issue: a status that tells the serving truth): InferenceServices across
the three modes on the test tier's nodes, from ``kubectl apply`` to ``Ready``.

The tier's control plane with its nodes (kube-scheduler, four KWOK GPU nodes acting as kubelets,
the real LeaderWorkerSet controller with its webhooks), the operator installed from
``manifests/`` and run as ``ome-operator run`` with its ServiceAccount's token. One namespace
holds a BaseModel, a runtime and the InferenceServices (RawDeployment, OMENative, and MultiNode
with a leader and one worker, in turn), applied in one ``kubectl apply`` once the nodes carry
the model's label. Every pod is scheduled and made Ready by the scheduler and KWOK. Prints, as
its last line:

    ready: p50 <s> s, p99 <s> s from apply; operator writes <w>

where the times run from the start of the apply (one ``kubectl apply`` of the whole fleet, its
admission included) to each InferenceService's ``Ready=True`` (the list is read every 0.2 s),
and ``w`` counts the operator's write requests in the audit log from the apply until all are
Ready. Not part of the tests:

    python tests/bench/lifecycle.py [--isvcs 100] [--timeout 600]

The run stops with ``lifecycle: not ready after <t> s: <n> of <m>`` once ``--timeout`` passed.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any
from urllib.parse import quote

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "operator")]

import yaml  # noqa: E402

from ome_operator.controller.owned import OwnedObjects  # noqa: E402
from ome_operator.controller.packing import pack  # noqa: E402
from tests.controlplane.scenarios import RUNNER, WORKER, isvc, model, runtime  # noqa: E402
from tests.support.control_plane import running_control_plane  # noqa: E402
from tests.support.installed_cluster import ISVC, Cluster, path  # noqa: E402
from tests.support.kwok_nodes import running_kwok_nodes  # noqa: E402
from tests.support.leader_worker_set_controller import (  # noqa: E402
    running_leader_worker_set_controller,
)
from tests.support.operator_process import OperatorProcess  # noqa: E402

NAMESPACE = "bench"
POD = "v1/pods"
#: Small requests, so that 100 InferenceServices fit the four nodes without GPUs.
SMALL = {"requests": {"cpu": "100m", "memory": "128Mi"}}


def fleet(count: int) -> list[dict[str, Any]]:
    """``count`` InferenceServices, the three modes in turn."""
    leader = {**copy.deepcopy(RUNNER), "resources": SMALL}
    worker = {**copy.deepcopy(WORKER), "resources": SMALL}
    shapes = (
        ("raw", {}),
        ("native", {"deploymentMode": "OMENative"}),
        (
            "multi",
            {
                "engine": {
                    "annotations": {"ome.io/deploymentMode": "MultiNode"},
                    "leader": {"runner": leader},
                    "worker": {"size": 1, "runner": worker},
                }
            },
        ),
    )
    found = []
    for n in range(count):
        shape, spec = shapes[n % len(shapes)]
        found.append(isvc(NAMESPACE, f"{shape}-{n}", **copy.deepcopy(spec)))
    return found


def states(cluster: Cluster) -> dict[str, bool]:
    """Each InferenceService of the namespace: whether it is ``Ready=True``."""
    listed = cluster.plane.request("GET", path(ISVC, NAMESPACE))
    return {
        item["metadata"]["name"]: any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (item.get("status") or {}).get("conditions") or []
        )
        for item in listed["items"]
    }


def held_pods(cluster: Cluster) -> str:
    """How many pods the InferenceService controller's cache holds (those of Deployments and
    LeaderWorkerSets) and their mean size as it holds them (packed, without managedFields)."""
    listed = cluster.plane.request(
        "GET", path(POD, NAMESPACE) + "?labelSelector=" + quote(OwnedObjects.POD_SELECTOR)
    )
    sizes = []
    for item in listed["items"]:
        item["metadata"].pop("managedFields", None)
        sizes.append(len(pack(item)))
    return f"{len(sizes)}, {statistics.mean(sizes) / 1024:.1f} KiB each" if sizes else "none"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run(options: argparse.Namespace, folder: pathlib.Path) -> str:
    with contextlib.ExitStack() as stack:
        plane = stack.enter_context(running_control_plane(folder))
        cluster = Cluster.install(plane, folder)
        stack.enter_context(running_leader_worker_set_controller(plane, folder))
        nodes = stack.enter_context(running_kwok_nodes(plane, folder))
        operator = OperatorProcess(
            cluster.operator_kubeconfig, folder / "operator.log", cluster.webhook_port, ()
        )
        operator.start()
        stack.callback(operator.stop)
        cluster.namespace(NAMESPACE)
        small = {**copy.deepcopy(RUNNER), "resources": SMALL}
        cluster.apply(model(NAMESPACE), runtime(NAMESPACE, runner=small))
        nodes.label_for_model("llama", NAMESPACE)
        manifests = fleet(options.isvcs)
        written = folder / "fleet.yaml"
        written.write_text(yaml.safe_dump_all(manifests), encoding="utf-8")
        # The webhook's caches may not hold the runtime yet: a server-side dry run is repeated
        # until the whole fleet would be admitted; then one apply makes it.
        deadline = time.monotonic() + 60
        dry_run = ("apply", "--dry-run=server", "-f", str(written))
        while plane.kubectl(*dry_run, check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise SystemExit("lifecycle: the InferenceServices were not admitted in 60 s")
            time.sleep(0.5)
        mark = plane.audit_mark()
        applied = time.monotonic()
        # The apply runs beside the polling: kubectl creates the objects one by one.
        applying = subprocess.Popen(
            ["kubectl", f"--kubeconfig={plane.admin_kubeconfig}", "apply", "-f", str(written)],
            stdout=subprocess.DEVNULL,
        )
        stack.callback(applying.kill)
        names = {m["metadata"]["name"] for m in manifests}
        created: dict[str, float] = {}
        ready: dict[str, float] = {}
        apply_took = None
        while len(ready) < len(names):
            now = time.monotonic() - applied
            for name, is_ready in states(cluster).items():
                created.setdefault(name, now)
                if is_ready:
                    ready.setdefault(name, now)
            if apply_took is None and applying.poll() is not None:
                apply_took = now
            if now > options.timeout:
                return (
                    f"lifecycle: not ready after {options.timeout} s: {len(ready)} of {len(names)}"
                )
            time.sleep(0.2)
        writes = len(cluster.operator_writes(mark, NAMESPACE))
        times = list(ready.values())
        own = [ready[name] - created[name] for name in ready]
        print(
            f"isvcs {len(names)}; the apply took {apply_took or 0:.2f} s; from each one's "
            f"creation (as first listed): p50 {percentile(own, 0.5):.2f} s, "
            f"p99 {percentile(own, 0.99):.2f} s"
        )
        print(f"pods held by the InferenceService controller: {held_pods(cluster)}")
        p50, p99 = percentile(times, 0.5), percentile(times, 0.99)
        return f"ready: p50 {p50:.2f} s, p99 {p99:.2f} s from apply; operator writes {writes}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--isvcs", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=600.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ome-lifecycle-") as folder:
        print(run(options, pathlib.Path(folder)))


if __name__ == "__main__":
    main()
