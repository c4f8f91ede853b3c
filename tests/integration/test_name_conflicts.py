"""The real operator against the emulator: an object of someone else's under a name the
InferenceService renders is never written, the InferenceService says ``NameConflict`` (one
event), no pass retries in a loop, and it converges once the object is gone (docs/workloads.md,
"Whose objects are written"; docs/troubleshooting.md, "NameConflict")."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.controller import name_conflicts
from ome_operator.controller.queue import Backoff
from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.integration.observing import (
    DEPLOYMENT,
    MODEL_STORAGE,
    RUNNER,
    SERVICE,
    condition_of,
    delete,
    event_summary,
    events_for,
    record_passes,
    requests,
    seed,
    stored,
    touch,
)
from tests.support.kube_access import apply_object, eventually

MESSAGE = "{} exists and is not controlled by InferenceService chat"


def _bobs_deployment(labels: dict[str, str]) -> dict[str, Any]:
    """Bob's Deployment ``chat-engine``: his image and replicas, the given labels."""
    selector = {"app": "bobs"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "chat-engine", "namespace": "default", "labels": labels},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "bob", "image": "bob:1"}]},
            },
        },
    }


def _writes_to(kube, since: int, path_end: str) -> list[str]:
    return [
        f"{r.method.name} {r.url.path}"
        for r in requests(kube, since)
        if r.method.name in ("PATCH", "PUT", "DELETE") and r.url.path.endswith(path_end)
    ]


def _ready(kube) -> tuple[str, str, str] | None:
    found = condition_of(kube, "chat", "Ready")
    return None if found is None else (found["status"], found["reason"], found["message"])


async def _seed(kube, operator) -> None:
    runtime = runtime_manifest("vllm", engineConfig={"runner": RUNNER})
    await seed(kube, operator, runtime, model_manifest("llama", storage=MODEL_STORAGE))


async def test_a_labelled_deployment_of_someone_else_is_never_written(kube, operator, monkeypatch):
    await _seed(kube, operator)
    bobs = await apply_object(kube, _bobs_deployment({"ome.io/inferenceservice": "chat"}))
    # Labelled, it is watched: once the operator holds it, no pass tries to create it.
    deployments = operator.controller.caches.objects.caches["Deployment"]
    await eventually(lambda: deployments.named("default", "chat-engine"))
    mark = len(list(kube))
    passes = record_passes(operator, monkeypatch)

    await apply_object(kube, isvc_manifest("chat"))
    conflict = ("False", "NameConflict", MESSAGE.format("Deployment chat-engine"))
    await eventually(lambda: _ready(kube) == conflict)
    before_touch = _writes_to(kube, mark, "/deployments/chat-engine")
    await touch(kube, DEPLOYMENT, "default", "chat-engine")  # bob edits it: a pass, no write
    touched = len(list(kube))
    await eventually(lambda: len(passes) >= 2)

    assert [event_summary(e)["reason"] for e in events_for(kube, "chat")] == ["NameConflict"]
    assert before_touch + _writes_to(kube, touched, "/deployments/chat-engine") == []
    assert [r.url.path for r in requests(kube, mark) if r.method.name == "POST"] == [
        "/apis/ome.io/v1beta1/namespaces/default/inferenceservices",
        "/api/v1/namespaces/default/events",
    ]  # the test's create of the InferenceService, then the event: no object of its own
    now = stored(kube, DEPLOYMENT, "default", "chat-engine")
    assert (now["spec"], now["metadata"].get("ownerReferences")) == (bobs["spec"], None)
    assert "annotations" not in now["metadata"]

    await delete(kube, DEPLOYMENT, "default", "chat-engine")  # its deletion re-queues
    await eventually(lambda: (condition_of(kube, "chat", "EngineReady") or {}).get("reason"))
    ours = stored(kube, DEPLOYMENT, "default", "chat-engine")
    assert [ref["kind"] for ref in ours["metadata"]["ownerReferences"]] == ["InferenceService"]


@pytest.fixture
def quick_recheck(monkeypatch) -> None:
    """Names taken past a fifth of a second (a few retries of the test backoff) are someone
    else's, looked at again within half a second."""
    monkeypatch.setattr(name_conflicts, "GRACE_SECONDS", 0.2)
    monkeypatch.setattr(name_conflicts, "RECHECK", Backoff(first=0.2, limit=0.4))


async def test_an_unlabelled_clash_is_a_name_conflict_not_an_endless_retry(
    kube, operator, quick_recheck
):
    await _seed(kube, operator)
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "chat", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]},
    }
    bobs = await apply_object(kube, service)
    mark = len(list(kube))

    await apply_object(kube, isvc_manifest("chat"))
    conflict = ("False", "NameConflict", MESSAGE.format("Service chat"))
    await eventually(lambda: _ready(kube) == conflict)

    assert [event_summary(e)["reason"] for e in events_for(kube, "chat")] == ["NameConflict"]
    assert _writes_to(kube, mark, "/services/chat") == []
    assert stored(kube, SERVICE, "default", "chat")["spec"] == bobs["spec"]

    await delete(kube, SERVICE, "default", "chat")  # unwatched: the slow recheck finds it gone
    await eventually(lambda: _ready(kube) is not None and _ready(kube)[1] != "NameConflict")
    ours = stored(kube, SERVICE, "default", "chat")
    assert [ref["kind"] for ref in ours["metadata"]["ownerReferences"]] == ["InferenceService"]
