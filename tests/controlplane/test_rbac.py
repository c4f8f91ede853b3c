"""Least privilege, proven on the audit log: a full run (start-up with no certificate, every mode,
changes, removed components, events, adoptions, a renewal) is refused nothing, and uses every
grant of the shipped ClusterRole and Role."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import pytest
import yaml

from ome_operator.cluster.serving_certificates import issue_certificate
from ome_operator.handlers.certificates import webhook_hosts
from ome_operator.settings import RunOptions
from tests.builders import entry
from tests.controlplane.conftest import start_operator
from tests.controlplane.scenarios import MULTINODE, RUNNER, converged, isvc, owned, runtime, seed
from tests.support.installed_cluster import (
    DEPLOYMENT,
    EVENT,
    ISVC,
    REPLICA,
    ROOT,
    SECRET,
    Cluster,
    eventually,
    owners,
)
from tests.support.rbac_rules import Grant, allows, grants

pytestmark = pytest.mark.controlplane

SECRET_NAME = "ome-webhook-server-cert"
#: Checked by the OwnerReferencesPermissionEnforcement admission plugin on each create that sets
#: blockOwnerDeletion, not sent as a request: the absence of 403s on those creates proves it.
AUTHORIZED_NOT_REQUESTED = {
    ("ome.io", "inferenceservices/finalizers", "update", None),
    ("ome.io", "inferencereplicas/finalizers", "update", None),
}
#: PodGroups are served only on the gang tier, where test_gang_placement proves each grant used.
GANG_TIER_ONLY = {
    ("scheduling.k8s.io", "podgroups", verb, None) for verb in ("list", "watch", "create", "delete")
}


def _shipped_grants() -> set[Grant]:
    found: set[Grant] = set()
    for name in ("cluster-role.yaml", "role.yaml"):
        role = yaml.safe_load((ROOT / "manifests" / "rbac" / name).read_text(encoding="utf-8"))
        found |= grants(role["rules"])
    return found


def _request_grant(record: dict[str, Any]) -> Grant | None:
    ref = record.get("objectRef")
    if not ref or "resource" not in ref:
        return None  # discovery and other non-resource URLs
    resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
    return (ref.get("apiGroup", ""), resource, record["verb"], ref.get("name"))


def _component_specs(namespace: str) -> list[dict[str, Any]]:
    """Each workload kind, for an engine and a decoder that is removed later."""
    return [
        isvc(namespace, "raw", decoder={"runner": RUNNER}),
        isvc(namespace, "native", deploymentMode="OMENative", decoder={"runner": RUNNER}),
        isvc(namespace, "multi", decoder=MULTINODE),
        # A named runtime that does not declare the model's format: admitted with a warning,
        # and the controller posts its RuntimeCompatibilityAdvisory event.
        isvc(namespace, "advised", runtime={"name": "onnx", "kind": "ServingRuntime"}),
        # Scaled by an HPA, then by KEDA: each autoscaler is created, patched, read and deleted.
        isvc(namespace, "scaled", engine={"minReplicas": 1, "maxReplicas": 2}),
    ]


POD = "v1/pods"
#: What a pod's (serving gate, incarnation) becomes after the kubelet reports a phase.
PROGRESS = {"Running": ("True", "1"), "Failed": (None, "2")}


def _pod_progress(cluster: Cluster, namespace: str, name: str) -> tuple[str | None, str] | None:
    pod = cluster.get(POD, namespace, name)
    if pod is None or pod["metadata"].get("deletionTimestamp"):
        return None
    conditions = (pod.get("status") or {}).get("conditions") or []
    gate = next((c["status"] for c in conditions if c["type"] == "ome.io/serving"), None)
    return gate, pod["metadata"]["labels"]["ome.io/instance-incarnation"]


def _adopted(cluster: Cluster, namespace: str, pod: str, old_owner: str) -> bool:
    replica = cluster.get(REPLICA, namespace, "native-engine")
    found = cluster.get(POD, namespace, pod)
    if replica is None or found is None or replica["metadata"]["uid"] == old_owner:
        return False
    refs = found["metadata"].get("ownerReferences") or []
    return [ref["uid"] for ref in refs] == [replica["metadata"]["uid"]]


LABELLED = ("raw", "native", "multi", "scaled")
HPA = "autoscaling/v2/horizontalpodautoscalers"
SCALED_OBJECT = "keda.sh/v1alpha1/scaledobjects"


def _objects(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    found = [o for name in LABELLED for o in owned(cluster, namespace, name)]
    return found + [o for kind in (HPA, SCALED_OBJECT) for o in cluster.list(kind, namespace)]


def _relabel(cluster: Cluster, namespace: str) -> None:
    """A label on each InferenceService patches each of its objects; taken off again, it
    leaves each of them: the create's record is read and taken over first (docs/workloads.md,
    "How objects are written")."""
    for name in LABELLED:
        cluster.plane.kubectl("label", "isvc", name, "-n", namespace, "team=a")
    eventually(lambda: all("team" in _labels(o) for o in _objects(cluster, namespace)))
    for name in LABELLED:
        cluster.plane.kubectl("label", "isvc", name, "-n", namespace, "team-")
    eventually(lambda: all("team" not in _labels(o) for o in _objects(cluster, namespace)))


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return obj["metadata"].get("labels") or {}


def _expire_the_certificate(cluster: Cluster) -> None:
    old = issue_certificate(
        webhook_hosts(RunOptions()),
        datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=350),
    )
    cert, key = base64.b64encode(old.cert).decode(), base64.b64encode(old.key).decode()
    cluster.patch(
        SECRET, "ome", SECRET_NAME, {"data": {"tls.crt": cert, "tls.key": key, "ca.crt": cert}}
    )


def test_a_full_run_is_refused_nothing_and_uses_every_grant(cluster, namespace, keda):
    mark = cluster.plane.audit_mark()
    cluster.delete(SECRET, "ome", SECRET_NAME)  # the first start issues the certificate
    cluster.delete("coordination.k8s.io/v1/leases", "ome", "ome-operator")  # and the Lease

    first = start_operator(cluster, "rbac-first", "--leader-elect")  # the Lease grants too
    try:
        onnx = runtime(namespace, "onnx")
        onnx["spec"]["supportedModelFormats"] = [entry("onnx")]
        cluster.apply(onnx)
        seed(cluster, namespace, *_component_specs(namespace))
        eventually(
            lambda: [
                e
                for e in cluster.list(EVENT, namespace)
                if e["involvedObject"]["name"] == "advised"
            ]
        )
        for name, count in (("raw", 7), ("native", 9), ("multi", 6)):
            eventually(lambda name=name, count=count: len(owned(cluster, namespace, name)) == count)
        converged(cluster, namespace)
        # The kubelet's part: a ready pod gets its serving gate, a failed one is replaced.
        pod = "native-engine-0-default-0"
        ready = {"type": "ContainersReady", "status": "True"}
        for phase, conditions in (("Running", [ready]), ("Failed", [])):
            body = {"status": {"phase": phase, "conditions": conditions}}
            cluster.patch(POD, namespace, pod, body, subresource="status", strategic=True)
            eventually(lambda p=phase: _pod_progress(cluster, namespace, pod) == PROGRESS[p])
        # An object without its owner reference is adopted, after a read of the owner.
        cluster.patch(DEPLOYMENT, namespace, "raw-engine", {"metadata": {"ownerReferences": None}})
        eventually(lambda: owners(cluster.stored(DEPLOYMENT, namespace, "raw-engine")) != [])
        # So are the pods of an InferenceReplica deleted with --cascade=orphan, by the one the
        # InferenceService controller makes again (after a read of it).
        old = cluster.stored(REPLICA, namespace, "native-engine")["metadata"]["uid"]
        cluster.plane.kubectl(
            "delete",
            "inferencereplica",
            "native-engine",
            "-n",
            namespace,
            "--cascade=orphan",
            "--wait=false",  # the orphaning is waited for below, bounded
        )
        eventually(lambda: _adopted(cluster, namespace, pod, old))
        eventually(lambda: cluster.get(HPA, namespace, "scaled-engine"))
        _relabel(cluster, namespace)
        keda_class = {"metadata": {"annotations": {"ome.io/autoscalerClass": "keda"}}}
        cluster.patch(ISVC, namespace, "scaled", keda_class)  # the HPA goes, KEDA comes
        eventually(lambda: cluster.get(HPA, namespace, "scaled-engine") is None)
        eventually(lambda: cluster.get(SCALED_OBJECT, namespace, "scaledobject-scaled-engine"))
        _relabel(cluster, namespace)
        hpa_class = {"metadata": {"annotations": {"ome.io/autoscalerClass": "hpa"}}}
        cluster.patch(ISVC, namespace, "scaled", hpa_class)  # and back
        eventually(
            lambda: cluster.get(SCALED_OBJECT, namespace, "scaledobject-scaled-engine") is None
        )
        for name in ("raw", "native", "multi"):  # the decoder goes
            cluster.patch(ISVC, namespace, name, {"spec": {"decoder": None}})
        for name, count in (("raw", 4), ("native", 5), ("multi", 4)):
            eventually(lambda name=name, count=count: len(owned(cluster, namespace, name)) == count)
    finally:
        assert first.stop() == 0
    _expire_the_certificate(cluster)
    second = start_operator(cluster, "rbac-renewal", "--leader-elect")
    assert second.stop() == 0

    records = cluster.operator_requests(mark)
    refused = [  # by RBAC: a namespace another test is deleting refuses content, and says so
        f"{r['verb']} {r['requestURI']}"
        for r in records
        if (r.get("annotations") or {}).get("authorization.k8s.io/decision") != "allow"
    ]
    assert refused == []
    used = {g for g in map(_request_grant, records) if g is not None}
    shipped = _shipped_grants()
    unused = {
        grant
        for grant in shipped - AUTHORIZED_NOT_REQUESTED - GANG_TIER_ONLY
        if not any(allows({grant}, *request) for request in used)
    }
    assert unused == set()
