"""Someone else's object under a name an InferenceService renders, on a real API server: the
operator never writes it (the audit log shows no write to it), the InferenceService says
``NameConflict`` with the exact sentence and one event, no pass loops, and the InferenceService
converges once the object is deleted (docs/workloads.md, "Whose objects are written")."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.controlplane.scenarios import isvc, seed, status
from tests.support.installed_cluster import DEPLOYMENT, EVENT, WRITE_VERBS, eventually, owners

pytestmark = pytest.mark.controlplane


def _foreign_deployment(namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A Deployment another user made: their image, five replicas, a selector of ``labels``."""
    selector = labels or {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "theirs", "image": "theirs:1"}]},
            },
        },
    }


def _ready(cluster, namespace: str, name: str) -> tuple[str, str, str] | None:
    conditions = status(cluster, namespace, name).get("conditions") or []
    found = next((c for c in conditions if c["type"] == "Ready"), None)
    return None if found is None else (found["status"], found["reason"], found["message"])


def _operator_requests_to(cluster, mark: int, resource: str, name: str) -> list[tuple[str, int]]:
    """(verb, HTTP code) of every write the operator sent to ``resource`` ``name``."""
    return [
        (r["verb"], (r.get("responseStatus") or {}).get("code", 0))
        for r in cluster.operator_requests(mark, WRITE_VERBS)
        if (r.get("objectRef") or {}).get("resource") == resource
        and (r.get("objectRef") or {}).get("name") == name
    ]


def _conflict_events(cluster, namespace: str, name: str) -> list[tuple[str, str]]:
    return [
        (e["type"], e["message"])
        for e in cluster.list(EVENT, namespace)
        if e["involvedObject"]["name"] == name and e["reason"] == "NameConflict"
    ]


def _revised(deployment: dict[str, Any] | None) -> dict[str, Any] | None:
    """``deployment`` once the Deployment controller has annotated its revision, else None."""
    annotations = ((deployment or {}).get("metadata") or {}).get("annotations") or {}
    return deployment if "deployment.kubernetes.io/revision" in annotations else None


def test_a_foreign_labelled_deployment_is_never_modified(cluster, namespace, operator):
    seed(cluster, namespace)
    labels = {"ome.io/inferenceservice": "victim3", "component": "engine"}
    cluster.apply(_foreign_deployment(namespace, "victim3-engine", labels))
    # As its Deployment controller left it (it adds its revision annotation): what is compared.
    theirs = eventually(lambda: _revised(cluster.stored(DEPLOYMENT, namespace, "victim3-engine")))
    mark = cluster.plane.audit_mark()

    seed(cluster, namespace, isvc(namespace, "victim3"))
    message = "Deployment victim3-engine exists and is not controlled by InferenceService victim3"
    eventually(lambda: _ready(cluster, namespace, "victim3") == ("False", "NameConflict", message))

    assert cluster.quiet_writes(namespace, 3.0) == []
    assert _conflict_events(cluster, namespace, "victim3") == [("Warning", message)]
    assert _operator_requests_to(cluster, mark, "deployments", "victim3-engine") == []
    assert sorted(cluster.operator_writes(mark, namespace)) == [
        f"create events {namespace}",
        f"patch inferenceservices/status {namespace}/victim3",
    ]  # nothing of its own either: a Service would select the other user's pods
    now = cluster.stored(DEPLOYMENT, namespace, "victim3-engine")
    assert (now["spec"]["template"], now["spec"]["replicas"], owners(now)) == (
        theirs["spec"]["template"],
        5,
        [],
    )
    assert (
        now["metadata"].get("annotations", {}).keys()
        == theirs["metadata"].get("annotations", {}).keys()
    )

    cluster.delete(DEPLOYMENT, namespace, "victim3-engine")  # its deletion re-queues the owner

    eventually(
        lambda: (
            (found := cluster.get(DEPLOYMENT, namespace, "victim3-engine")) is not None
            and owners(found) == [("InferenceService", "victim3", True)]
        ),
        timeout=60,
    )
    eventually(lambda: (_ready(cluster, namespace, "victim3") or ("", ""))[1] != "NameConflict")


def test_an_unlabelled_clash_is_a_name_conflict_not_an_endless_retry(cluster, namespace, operator):
    seed(cluster, namespace)
    cluster.apply(_foreign_deployment(namespace, "chat-engine", {}))
    theirs = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
    mark = cluster.plane.audit_mark()

    seed(cluster, namespace, isvc(namespace))
    message = "Deployment chat-engine exists and is not controlled by InferenceService chat"
    started = time.monotonic()
    eventually(
        lambda: _ready(cluster, namespace, "chat") == ("False", "NameConflict", message),
        timeout=60,
    )
    told = time.monotonic() - started

    # Looked at again after 30 s at the earliest: a quiet window, then only refused creates.
    assert cluster.quiet_writes(namespace, 5.0) == []
    assert told < 40, told
    assert _conflict_events(cluster, namespace, "chat") == [("Warning", message)]
    tries = _operator_requests_to(cluster, mark, "deployments", "chat-engine")
    assert tries and set(tries) == {("create", 409)}, tries  # never written
    assert len(tries) <= 8, tries  # the grace's backoff: 0.5, 1, 2, 4, 8 s
    now = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
    assert (now["spec"]["template"], owners(now)) == (theirs["spec"]["template"], [])
