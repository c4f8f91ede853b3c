"""Restarts: of the API server under a running operator (watches resume or relist), and of the
operator over a converged cluster (it writes nothing)."""

from __future__ import annotations

import pytest

from tests.builders import entry
from tests.controlplane.conftest import start_operator
from tests.controlplane.scenarios import admitted, converged, isvc, owned, runtime, seed, status
from tests.support.installed_cluster import EVENT, ISVC, WRITE_VERBS, eventually

pytestmark = pytest.mark.controlplane


def test_the_operator_carries_on_after_an_api_server_restart(cluster, namespace, operator):
    seed(cluster, namespace, isvc(namespace))
    eventually(lambda: len(owned(cluster, namespace, "chat")) == 4)
    converged(cluster, namespace)

    cluster.plane.restart_apiserver(grace=5)

    # A change made after the restart reaches the operator through its resumed watches...
    cluster.patch(ISVC, namespace, "chat", {"spec": {"engine": {"minReplicas": 2}}})
    eventually(lambda: status(cluster, namespace, "chat").get("observedGeneration") == 2, 60)
    # ...and so does a new InferenceService, admitted by its webhook.
    admitted(cluster, isvc(namespace, "after"), timeout=60)
    eventually(lambda: len(owned(cluster, namespace, "after")) == 4, 60)
    assert operator.alive()
    converged(cluster, namespace)
    assert cluster.quiet_writes(namespace, 3.0) == []


def _advisories(cluster, namespace: str) -> list[dict]:
    return [
        e
        for e in cluster.list(EVENT, namespace)
        if e["involvedObject"]["name"] == "advised"
        and e["reason"] == "RuntimeCompatibilityAdvisory"
    ]


def test_a_restarted_operator_writes_nothing_over_a_converged_cluster(cluster, namespace):
    onnx = runtime(namespace, "onnx")
    onnx["spec"]["supportedModelFormats"] = [entry("onnx")]
    first = start_operator(cluster, "before-restart")
    try:
        cluster.apply(onnx)
        seed(
            cluster,
            namespace,
            isvc(namespace),
            isvc(namespace, "native", deploymentMode="OMENative"),
            # A named runtime that does not declare the model's format: an advisory event.
            isvc(namespace, "advised", runtime={"name": "onnx", "kind": "ServingRuntime"}),
        )
        eventually(lambda: len(owned(cluster, namespace, "native")) == 5)
        eventually(lambda: _advisories(cluster, namespace))
        converged(cluster, namespace)
    finally:
        assert first.stop() == 0
    mark = cluster.plane.audit_mark()

    def written() -> list[tuple[str, str, int]]:
        return [
            (r["verb"], r["objectRef"]["resource"], r["responseStatus"]["code"])
            for r in cluster.operator_requests(mark, WRITE_VERBS)
            if (r.get("objectRef") or {}).get("namespace") == namespace
        ]

    second = start_operator(cluster, "after-restart")
    try:
        # The restarted operator remembers no event it posted: it posts the advisory of that
        # generation again, under the same name, and the server refuses it as a duplicate (as
        # its first passes run: before or after it reports ready). Then nothing more.
        eventually(lambda: written() == [("create", "events", 409)])
        assert cluster.quiet_writes(namespace, 5.0) == []
        assert written() == [("create", "events", 409)]
        assert len(_advisories(cluster, namespace)) == 1
    finally:
        assert second.stop() == 0
