"""Fixtures of the control-plane tier: one real control plane per pytest run (with the scheduler,
four KWOK GPU nodes and the real LeaderWorkerSet controller), the operator installed from
``manifests/``, a fresh namespace per test, the real ``ome-operator run``, and the nodes.

The gang tier (``gang_cluster``, ``gang_nodes``, ``gang_namespace``) is a second control plane,
started only by the tests that use it: the same install and nodes, with Kubernetes' gang
scheduling on (``gang_scheduling``) and no LeaderWorkerSet controller."""

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
from tests.support.control_plane_commands import NO_FEATURES, Features
from tests.support.gang_scheduling import GANG_SCHEDULING
from tests.support.installed_cluster import Cluster
from tests.support.keda_crds import install_keda_crds, keda_crd_folder
from tests.support.kwok_nodes import KwokNodes, running_kwok_nodes
from tests.support.leader_worker_set_controller import running_leader_worker_set_controller
from tests.support.operator_process import OperatorProcess

_counter = itertools.count()


@contextlib.contextmanager
def _installed_cluster(
    folder: pathlib.Path, features: Features = NO_FEATURES, *, leader_worker_set: bool = True
) -> Iterator[Cluster]:
    """A control plane with ``features``, the operator installed, the KWOK GPU nodes and (when
    ``leader_worker_set``) the LeaderWorkerSet controller."""
    with running_control_plane(folder, features) as plane:
        installed = Cluster.install(plane, folder)
        with contextlib.ExitStack() as beside:
            if leader_worker_set:
                beside.enter_context(running_leader_worker_set_controller(plane, folder))
            installed.nodes = beside.enter_context(running_kwok_nodes(plane, folder))
            yield installed
            # The network rule, by construction: nothing in the cluster may make the API
            # server dial a Service (a ClusterIP), whatever the tests installed.
            assert installed.service_references() == []


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with _installed_cluster(tmp_path_factory.mktemp("controlplane")) as installed:
        yield installed


@pytest.fixture(scope="session")
def gang_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The gang tier: PodGroups served and gang-scheduled, no LeaderWorkerSet controller."""
    folder = tmp_path_factory.mktemp("gang-controlplane")
    with _installed_cluster(folder, GANG_SCHEDULING, leader_worker_set=False) as installed:
        yield installed


@pytest.fixture(scope="session")
def keda(cluster: Cluster) -> Iterator[pathlib.Path]:
    """The real KEDA CRDs (keda.sh/v1alpha1 ScaledObject, ...), installed once for the rest of
    the session; yields their cache folder (``crds/`` holds the files)."""
    install_keda_crds(cluster)
    yield keda_crd_folder()


def _released_nodes(cluster: Cluster) -> Iterator[KwokNodes]:
    assert cluster.nodes is not None
    cluster.nodes.wait_released()
    yield cluster.nodes
    cluster.nodes.reset()


@pytest.fixture
def nodes(cluster: Cluster) -> Iterator[KwokNodes]:
    """The four GPU nodes, every GPU free (no earlier test's pod left); after the test, as they
    started (reachable, schedulable, without the labels it added)."""
    yield from _released_nodes(cluster)


@pytest.fixture
def gang_nodes(gang_cluster: Cluster) -> Iterator[KwokNodes]:
    """The gang tier's four GPU nodes, as ``nodes``."""
    yield from _released_nodes(gang_cluster)


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
def no_unexpected_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """No operator a test runs may end a pass in an exception no rule handles: on the tiers the
    test uses (the default one when it uses neither, so a gang test starts no other plane)."""
    tiers = [name for name in ("cluster", "gang_cluster") if name in request.fixturenames]
    folders = [request.getfixturevalue(name).folder for name in tiers or ["cluster"]]
    seen = {log: log.stat().st_size for folder in folders for log in folder.glob("operator-*.log")}
    yield
    assert [line for folder in folders for line in _unexpected_lines(folder, seen)] == []


def _test_namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"t{next(_counter)}-{slug}"
    cluster.namespace(name)
    yield name
    cluster.delete("v1/namespaces", None, name)


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace named after the test."""
    yield from _test_namespace(cluster, request)


@pytest.fixture
def gang_namespace(gang_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace of the gang tier named after the test."""
    yield from _test_namespace(gang_cluster, request)


def start_operator(cluster: Cluster, name: str, *extra_args: str) -> OperatorProcess:
    process = OperatorProcess(
        cluster.operator_kubeconfig,
        cluster.folder / f"operator-{name}.log",
        cluster.webhook_port,
        extra_args,
    )
    process.start()
    return process


def _operator(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[OperatorProcess]:
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:60]
    process = start_operator(cluster, f"{next(_counter)}-{slug}")
    yield process
    code = process.stop()
    assert code == 0, f"ome-operator exited {code}\n{process.tail()}"


@pytest.fixture
def operator(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[OperatorProcess]:
    """``ome-operator run`` with the ServiceAccount's token; it must stop cleanly (exit 0)."""
    yield from _operator(cluster, request)


@pytest.fixture
def gang_operator(
    gang_cluster: Cluster, request: pytest.FixtureRequest
) -> Iterator[OperatorProcess]:
    """``ome-operator run`` on the gang tier, as ``operator``."""
    yield from _operator(gang_cluster, request)
