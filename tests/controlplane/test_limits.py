"""Objects at the limits of what the operator reads, on a real API server (issue 8): one nested
deeper than the operator reads is denied at admission, and written with the webhook bypassed
it stops nothing; one over aiohttp's default 1 MiB body is still reviewed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ome_operator.handlers.startup import allow_deep_objects
from tests.builders import nested
from tests.controlplane.scenarios import converged, isvc, seed, status
from tests.support.installed_cluster import ISVC, VWC, Cluster, eventually

pytestmark = pytest.mark.controlplane


@pytest.fixture(autouse=True)
def deep_json() -> None:
    """This process encodes and decodes the deep objects too."""
    allow_deep_objects()


DENIED = (
    'Error from server: error when creating "STDIN": admission webhook '
    '"inferenceservice.ome-webhook-server.validator" denied the request: {message}\n'
)
BYPASS = "ome-test/webhook"


def deep(namespace: str, name: str, levels: int) -> dict[str, Any]:
    manifest = isvc(namespace, name)
    manifest["spec"]["engine"] = {"runner": {"name": "ome-container", "x": nested(levels)}}
    return manifest


def create(cluster: Cluster, manifest: dict[str, Any]) -> tuple[int, str]:
    """``kubectl create -f -`` of the JSON (YAML tools recurse; kubectl reads JSON as is)."""
    done = cluster.plane.kubectl("create", "-f", "-", stdin=json.dumps(manifest), check=False)
    return done.returncode, done.stderr


def test_an_object_nested_deeper_than_the_limit_is_denied_with_the_path(
    cluster, namespace, operator
):
    seed(cluster, namespace)

    assert create(cluster, deep(namespace, "deep", 1_500)) == (
        1,
        DENIED.format(
            message=f'InferenceService "{namespace}/deep" is invalid: spec.engine.runner.x'
            + ".a" * 96
            + ": nested more than 100 levels deep (the limit is 100)"
        ),
    )
    assert cluster.get(ISVC, namespace, "deep") is None
    assert operator.alive()


@pytest.fixture
def webhook_bypassed(cluster: Cluster, namespace: str):
    """The InferenceService webhook skips this namespace: objects reach etcd unreviewed."""
    cluster.patch("v1/namespaces", None, namespace, {"metadata": {"labels": {BYPASS: "off"}}})
    config = cluster.stored(VWC, None, "ome-webhook-server")
    skip = {"matchExpressions": [{"key": BYPASS, "operator": "NotIn", "values": ["off"]}]}
    hooks = [{**hook, "namespaceSelector": skip} for hook in config["webhooks"]]
    cluster.patch(VWC, None, "ome-webhook-server", {"webhooks": hooks})
    yield
    restored = [{**hook, "namespaceSelector": {}} for hook in config["webhooks"]]
    cluster.patch(VWC, None, "ome-webhook-server", {"webhooks": restored})


def test_an_object_too_deep_to_read_written_past_the_webhook_stops_nothing(
    cluster, namespace, webhook_bypassed, operator
):
    seed(cluster, namespace)
    assert create(cluster, deep(namespace, "deep", 1_500))[0] == 0
    assert create(cluster, isvc(namespace, "after"))[0] == 0

    eventually(lambda: status(cluster, namespace, "after").get("runtime"), timeout=60)
    ready = eventually(
        lambda: next(
            (
                c
                for c in status(cluster, namespace, "deep").get("conditions", [])
                if c["type"] == "Ready"
            ),
            None,
        ),
        timeout=60,
    )
    converged(cluster, namespace)

    message = (
        f'InferenceService "{namespace}/deep" is invalid: spec.engine.runner.x'
        + ".a" * 96
        + ": nested more than 100 levels deep (the limit is 100)"
    )
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "ReconcileFailed",
        message,
    )
    events = [
        (e["type"], e["reason"], e["message"])
        for e in cluster.list("v1/events", namespace)
        if e["involvedObject"]["name"] == "deep"
    ]
    assert events == [("Warning", "ReconcileFailed", message)]
    assert operator.alive()


def test_an_object_over_one_mebibyte_is_still_reviewed(cluster, namespace, operator):
    seed(cluster, namespace)
    manifest = isvc(namespace, "big")
    manifest["spec"]["engine"] = {"runner": {"name": "ome-container", "x": "y" * 1_200_000}}

    done = cluster.plane.kubectl("create", "-f", "-", stdin=json.dumps(manifest), check=False)

    assert (done.returncode, done.stdout) == (0, "inferenceservice.ome.io/big created\n")
