"""Deletion with the garbage collector running: the operator never reconciles an InferenceService
being deleted, so background and foreground deletion finish, orphans stay orphans, and a deleted
namespace does not make it retry into 403s."""

from __future__ import annotations

import pytest

from tests.controlplane.scenarios import (
    MULTINODE,
    converged,
    isvc,
    operator_statuses,
    owned,
    seed,
)
from tests.support.installed_cluster import ISVC, eventually, owners

pytestmark = pytest.mark.controlplane

ALL_MODES = (
    ("chat", {}),
    ("native", {"deploymentMode": "OMENative"}),
    ("multi", {"engine": MULTINODE}),
)


def _seed_every_mode(cluster, namespace) -> int:
    seed(cluster, namespace, *(isvc(namespace, name, **spec) for name, spec in ALL_MODES))
    for name, count in (("chat", 4), ("native", 5), ("multi", 3)):
        eventually(lambda name=name, count=count: len(owned(cluster, namespace, name)) == count)
    converged(cluster, namespace)
    return cluster.plane.audit_mark()


@pytest.mark.parametrize("cascade", ["background", "foreground"])
def test_deletion_finishes_and_nothing_is_re_created(cluster, namespace, operator, cascade):
    mark = _seed_every_mode(cluster, namespace)

    done = cluster.plane.kubectl(
        "delete", "isvc", "--all", "-n", namespace, f"--cascade={cascade}", "--timeout=60s"
    )

    assert done.stdout.count("deleted") == 3
    for name, _ in ALL_MODES:
        eventually(lambda name=name: owned(cluster, namespace, name) == [], timeout=60)
    assert cluster.list(ISVC, namespace) == []
    assert cluster.quiet_writes(namespace, 3.0) == []
    assert cluster.operator_writes(mark, namespace) == []


def test_orphaned_workloads_are_left_alone(cluster, namespace, operator):
    mark = _seed_every_mode(cluster, namespace)

    cluster.plane.kubectl(
        "delete", "isvc", "chat", "-n", namespace, "--cascade=orphan", "--timeout=60s"
    )

    eventually(lambda: cluster.get(ISVC, namespace, "chat") is None)
    orphans = eventually(
        lambda: (
            (found := owned(cluster, namespace, "chat"))
            and all(owners(o) == [] for o in found)
            and found
        )
    )
    assert len(orphans) == 4
    assert cluster.quiet_writes(namespace, 3.0) == []
    assert cluster.operator_writes(mark, namespace) == []
    assert [owners(o) for o in owned(cluster, namespace, "chat")] == [[]] * 4


def test_deleting_a_namespace_removes_everything_without_a_storm_of_403s(
    cluster, namespace, operator
):
    mark = _seed_every_mode(cluster, namespace)

    cluster.delete("v1/namespaces", None, namespace)

    eventually(lambda: cluster.get("v1/namespaces", None, namespace) is None, timeout=90)
    refused = [code for code in operator_statuses(cluster, mark, namespace) if code == 403]
    # The first refusal parks the namespace: only passes already under way (one per worker, 4)
    # can meet it too, and none is retried.
    assert len(refused) <= 4, refused
    assert operator.alive()
    # No write failure is logged (the models going first may be, as for any missing model).
    assert [
        r
        for r in operator.records()
        if r.get("message") == "Failed to write InferenceService workloads"
        and r.get("namespace") == namespace
    ] == []
