"""Fixtures of the control-plane tier: one real control plane per pytest run (with the scheduler,
four KWOK GPU nodes and the real LeaderWorkerSet controller), the operator installed from
``manifests/``, a fresh namespace per test, the real ``ome-operator run``, and the nodes."""

from __future__ import annotations

import contextlib
import itertools
import json
import pathlib
import re
from collections.abc import Iterator

import pytest

from ome_operator.controller.runtime import UNEXPECTED_ERROR
from tests.support.control_plane import running_control_plane
from tests.support.installed_cluster import Cluster
from tests.support.keda_crds import install_keda_crds, keda_crd_folder
from tests.support.kwok_nodes import KwokNodes, running_kwok_nodes
from tests.support.leader_worker_set_controller import running_leader_worker_set_controller
from tests.support.operator_process import OperatorProcess

_counter = itertools.count()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("controlplane")
    with running_control_plane(folder) as plane:
        installed = Cluster.install(plane, folder)
        with (
            running_leader_worker_set_controller(plane, folder),
            running_kwok_nodes(plane, folder) as nodes,
        ):
            installed.nodes = nodes
            yield installed
            # The network rule, by construction: nothing in the cluster may make the API
            # server dial a Service (a ClusterIP), whatever the tests installed.
            assert installed.service_references() == []


@pytest.fixture(scope="session")
def keda(cluster: Cluster) -> Iterator[pathlib.Path]:
    """The real KEDA CRDs (keda.sh/v1alpha1 ScaledObject, ...), installed once for the rest of
    the session; yields their cache folder (``crds/`` holds the files)."""
    install_keda_crds(cluster)
    yield keda_crd_folder()


@pytest.fixture
def nodes(cluster: Cluster) -> Iterator[KwokNodes]:
    """The four GPU nodes, every GPU free (no earlier test's pod left); after the test, as they
    started (reachable, schedulable, without the labels it added)."""
    assert cluster.nodes is not None
    cluster.nodes.wait_released()
    yield cluster.nodes
    cluster.nodes.reset()


def _unexpected_lines(folder: pathlib.Path, seen: dict[pathlib.Path, int]) -> list[str]:
    """The operators' log lines of unexpected errors past ``seen`` (bytes read per log)."""
    found = []
    for log in sorted(folder.glob("operator-*.log")):
        with log.open("rb") as file:
            file.seek(seen.get(log, 0))
            for line in file:
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if str(record.get("message", "")).startswith(UNEXPECTED_ERROR):
                        last = (record.get("exc_info") or "").strip().splitlines()[-1:]
                        found.append(f"{log.name}: {record['message']}: {''.join(last)}")
    return found


@pytest.fixture(autouse=True)
def no_unexpected_errors(cluster: Cluster) -> Iterator[None]:
    """No operator a test runs may end a pass in an exception no rule handles."""
    seen = {log: log.stat().st_size for log in cluster.folder.glob("operator-*.log")}
    yield
    assert _unexpected_lines(cluster.folder, seen) == []


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace named after the test."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"t{next(_counter)}-{slug}"
    cluster.namespace(name)
    yield name
    cluster.delete("v1/namespaces", None, name)


def start_operator(cluster: Cluster, name: str, *extra_args: str) -> OperatorProcess:
    process = OperatorProcess(
        cluster.operator_kubeconfig,
        cluster.folder / f"operator-{name}.log",
        cluster.webhook_port,
        extra_args,
    )
    process.start()
    return process


@pytest.fixture
def operator(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[OperatorProcess]:
    """``ome-operator run`` with the ServiceAccount's token; it must stop cleanly (exit 0)."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:60]
    process = start_operator(cluster, f"{next(_counter)}-{slug}")
    yield process
    code = process.stop()
    assert code == 0, f"ome-operator exited {code}\n{process.tail()}"
