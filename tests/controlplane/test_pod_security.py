"""Pod Security ``baseline`` namespaces, on nodes (docs/troubleshooting.md, ``PodsRefused``;
docs/configuration.md, ``modelVolumes``): a model read from a PersistentVolumeClaim runs to
Ready; the node's ``hostPath`` (the default) is refused, and the InferenceService says so once,
with the API server's text, while the operator tries again only after a growing delay."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from tests.controlplane.scenarios import isvc, seed
from tests.support.installed_cluster import EVENT, ISVC, Cluster, eventually
from tests.support.kwok_nodes import KwokNodes, condition

pytestmark = pytest.mark.controlplane

CONFIG_MAP = "v1/configmaps"
PV = "v1/persistentvolumes"
PVC = "v1/persistentvolumeclaims"
ENFORCE = "pod-security.kubernetes.io/enforce"
#: The API server's answer to the operator's create of an OMENative pod with the model's
#: hostPath volume (model ``llama``: volume ``llama``).
FORBIDDEN = (
    'pods "chat-engine-0-default-0" is forbidden: violates PodSecurity "baseline:latest": '
    'hostPath volumes (volume "llama")'
)
#: The same for a pod the ReplicaSet controller creates (its name is generated).
FORBIDDEN_GENERATED = re.compile(
    r'pods cannot be created: pods "chat-engine-[a-z0-9]+-[a-z0-9]+" is forbidden: violates '
    r'PodSecurity "baseline:latest": hostPath volumes \(volume "llama"\)'
)
#: Refused creates of one pod the operator may send in ``WINDOW`` seconds: at 0, 5, 15 and 35 s
#: (docs/troubleshooting.md, ``PodsRefused``), where it sent 66 in 2 minutes before.
WINDOW, MOST_CREATES = 45.0, 4


def baseline(cluster: Cluster, namespace: str) -> None:
    labels = {ENFORCE: "baseline", f"{ENFORCE}-version": "latest"}
    cluster.patch("v1/namespaces", None, namespace, {"metadata": {"labels": labels}})


@pytest.fixture
def baseline_namespace(cluster: Cluster, namespace: str) -> str:
    baseline(cluster, namespace)
    return namespace


@pytest.fixture
def models_claim(cluster: Cluster, baseline_namespace: str) -> Iterator[str]:
    """In a ``baseline`` namespace: the claim ``models``, bound to a volume made for it, and
    ``modelVolumes`` reading that namespace's models from it (set before the operator starts,
    put back as it was after the test)."""
    namespace = baseline_namespace
    volume = f"models-{namespace}"[:63]
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": volume},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadOnlyMany"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "hostPath": {"path": "/models"},
                "claimRef": {"namespace": namespace, "name": "models"},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "models", "namespace": namespace},
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "",
                "volumeName": volume,
            },
        },
    )
    eventually(
        lambda: (
            (cluster.stored(PVC, namespace, "models").get("status") or {}).get("phase") == "Bound"
        ),
        timeout=30,
    )
    entry = {"namespaces": {namespace: {"persistentVolumeClaim": {"claimName": "models"}}}}
    shipped = cluster.stored(CONFIG_MAP, "ome", "inferenceservice-config").get("data") or {}
    set_model_volumes(cluster, json.dumps(entry))
    yield namespace
    set_model_volumes(cluster, shipped.get("modelVolumes"))
    cluster.delete(PV, None, volume)


def set_model_volumes(cluster: Cluster, text: str | None) -> None:
    body = {"data": {"modelVolumes": text}}
    cluster.patch(CONFIG_MAP, "ome", "inferenceservice-config", body)


def isvc_ready(cluster: Cluster, namespace: str) -> bool:
    return condition(cluster.stored(ISVC, namespace, "chat"), "Ready").get("status") == "True"


def running(nodes: KwokNodes, namespace: str) -> list[dict[str, Any]]:
    """The namespace's one pod, once it is Ready on a KWOK node."""
    found = nodes.pods(namespace)
    ok = len(found) == 1 and all(
        condition(p, "Ready").get("status") == "True" and p["spec"].get("nodeName") in nodes.names
        for p in found
    )
    return found if ok else []


def refused_creates(cluster: Cluster, mark: int, namespace: str) -> list[dict[str, Any]]:
    """The operator's pod creates in ``namespace`` the API server refused (403), since ``mark``."""
    return [
        r
        for r in cluster.operator_requests(mark, ["create"])
        if (r.get("objectRef") or {}).get("resource") == "pods"
        and (r.get("objectRef") or {}).get("namespace") == namespace
        and (r.get("responseStatus") or {}).get("code") == 403
    ]


def warnings(cluster: Cluster, namespace: str) -> list[tuple[str, str]]:
    return sorted(
        (e["reason"], e["message"])
        for e in cluster.list(EVENT, namespace)
        if e["involvedObject"]["name"] == "chat" and e["type"] == "Warning"
    )


def engine_ready(cluster: Cluster, namespace: str) -> tuple[str, str, str]:
    """(status, reason, message) of ``EngineReady``; ``Ready`` says the same when False."""
    stored = cluster.stored(ISVC, namespace, "chat")
    engine, ready = condition(stored, "EngineReady"), condition(stored, "Ready")
    said = (engine.get("status", ""), engine.get("reason", ""), engine.get("message", ""))
    if said[0] == "False":
        assert (ready.get("status"), ready.get("reason"), ready.get("message")) == said
    return said


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="RawDeployment"),
        pytest.param({"deploymentMode": "OMENative"}, id="OMENative"),
    ],
)
def test_a_baseline_namespace_runs_a_model_read_from_a_claim_to_ready(
    cluster, models_claim, operator, nodes, spec
):
    namespace = models_claim
    mark = cluster.plane.audit_mark()
    nodes.label_for_model("llama", namespace)
    seed(cluster, namespace, isvc(namespace, **spec))

    pods = eventually(lambda: running(nodes, namespace), timeout=60)
    eventually(lambda: isvc_ready(cluster, namespace), timeout=60)
    spec = pods[0]["spec"]
    mounts = spec["containers"][0]["volumeMounts"]
    assert (
        [v for v in spec["volumes"] if v["name"] == "llama"],
        [m for m in mounts if m["name"] == "llama"],
    ) == (
        [{"name": "llama", "persistentVolumeClaim": {"claimName": "models", "readOnly": True}}],
        [{"name": "llama", "mountPath": "/models/llama", "readOnly": True}],
    )
    assert (refused_creates(cluster, mark, namespace), warnings(cluster, namespace)) == ([], [])


def _received(record: dict[str, Any]) -> float:
    return datetime.fromisoformat(record["requestReceivedTimestamp"]).timestamp()


def test_an_omenative_pod_refused_by_pod_security_is_told_once_and_tried_again_slowly(
    cluster, baseline_namespace, operator, nodes
):
    namespace = baseline_namespace
    mark = cluster.plane.audit_mark()
    nodes.label_for_model("llama", namespace)
    seed(cluster, namespace, isvc(namespace, deploymentMode="OMENative"))
    said = ("False", "PodsRefused", f"pods cannot be created: {FORBIDDEN}")

    eventually(lambda: engine_ready(cluster, namespace) == said, timeout=60)
    first = _received(refused_creates(cluster, mark, namespace)[0])
    time.sleep(max(first + WINDOW - time.time(), 0.0))  # the measured window
    times = [_received(r) - first for r in refused_creates(cluster, mark, namespace)]
    within = [round(t) for t in times if t <= WINDOW]
    assert 2 <= len(within) <= MOST_CREATES, within
    assert engine_ready(cluster, namespace) == said
    assert warnings(cluster, namespace) == [("PodsRefused", f"engine component: {said[2]}")]

    # Pod Security lifted: the next attempt (at most 5 minutes away; here 40 s) creates it.
    cluster.patch("v1/namespaces", None, namespace, {"metadata": {"labels": {ENFORCE: None}}})
    eventually(lambda: running(nodes, namespace), timeout=60)
    eventually(lambda: isvc_ready(cluster, namespace), timeout=60)


def test_a_deployment_whose_pods_pod_security_refuses_tells_the_replica_set_s_answer_once(
    cluster, baseline_namespace, operator
):
    namespace = baseline_namespace
    seed(cluster, namespace, isvc(namespace))

    def refused() -> str:
        status, reason, message = engine_ready(cluster, namespace)
        assert (status, reason) == ("False", "PodsRefused"), (status, reason, message)
        assert FORBIDDEN_GENERATED.fullmatch(message), message
        return message

    message = eventually(refused, timeout=60)
    assert warnings(cluster, namespace) == [("PodsRefused", f"engine component: {message}")]
