"""Writes by server-side apply on a real API server (docs/architecture.md): only apply patches
from the operator, a field another manager sets stays theirs, a field the operator renders is
taken back, and an object the previous release wrote (its ``ome.io/applied`` record, owned by an
``Update`` entry) is taken over with one write."""

from __future__ import annotations

import pytest

from tests.controlplane.scenarios import converged, isvc, seed
from tests.support.installed_cluster import DEPLOYMENT, ISVC, eventually, path

pytestmark = pytest.mark.controlplane

JSON_PATCH = "application/json-patch+json"


def _managers(obj: dict) -> list[tuple[str, str]]:
    entries = obj["metadata"].get("managedFields") or []
    return sorted((e["manager"], e["operation"]) for e in entries if e["manager"] == "ome-operator")


def _template_labels(cluster, namespace: str) -> dict:
    deployment = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
    return deployment["spec"]["template"]["metadata"]["labels"]


def _engine_image(obj: dict) -> str:
    return obj["spec"]["template"]["spec"]["containers"][0]["image"]


def test_the_operator_applies_and_leaves_other_managers_fields_alone(cluster, namespace, operator):
    mark = cluster.plane.audit_mark()
    seed(cluster, namespace, isvc(namespace))
    eventually(lambda: cluster.get(DEPLOYMENT, namespace, "chat-engine"))
    converged(cluster, namespace)
    sent = cluster.operator_requests(mark, ("create", "update", "patch"))
    verbs = {(r["verb"], r["objectRef"]["resource"]) for r in sent}
    # Creates (a name taken by someone else's object fails), then applies and the JSON patch
    # that makes a create's fields the apply record: never an update.
    workloads = ("deployments", "services", "poddisruptionbudgets")
    allowed = {(verb, kind) for verb in ("create", "patch") for kind in workloads}
    assert verbs <= allowed | {("patch", "inferenceservices"), ("create", "events")}
    deployment = cluster.stored(DEPLOYMENT, namespace, "chat-engine")
    assert _managers(deployment) == [("ome-operator", "Update")]  # its create's

    # Another manager's field, which the operator does not render, survives a pass.
    cluster.patch(DEPLOYMENT, namespace, "chat-engine", {"spec": {"minReadySeconds": 7}})
    mark = cluster.plane.audit_mark()
    cluster.patch(ISVC, namespace, "chat", {"metadata": {"labels": {"pass": "1"}}})
    eventually(
        lambda: (
            cluster.stored(DEPLOYMENT, namespace, "chat-engine")["spec"]["template"]["metadata"][
                "labels"
            ].get("pass")
            == "1"
        )
    )
    converged(cluster, namespace)
    assert cluster.stored(DEPLOYMENT, namespace, "chat-engine")["spec"]["minReadySeconds"] == 7

    # A field no longer rendered leaves: the create's record is taken over, then applied.
    cluster.patch(ISVC, namespace, "chat", {"metadata": {"labels": {"pass": None}}})
    eventually(lambda: "pass" not in _template_labels(cluster, namespace))
    converged(cluster, namespace)
    assert _managers(cluster.stored(DEPLOYMENT, namespace, "chat-engine")) == [
        ("ome-operator", "Apply")
    ]

    # A field the operator renders, changed by someone else, is taken back.
    image = _engine_image(deployment)
    container = {"name": deployment["spec"]["template"]["spec"]["containers"][0]["name"]}
    cluster.patch(
        DEPLOYMENT,
        namespace,
        "chat-engine",
        {"spec": {"template": {"spec": {"containers": [{**container, "image": "other:1"}]}}}},
        strategic=True,
    )
    eventually(lambda: _engine_image(cluster.stored(DEPLOYMENT, namespace, "chat-engine")) == image)


def test_an_object_the_previous_release_wrote_is_taken_over_with_one_write(
    cluster, namespace, operator
):
    seed(cluster, namespace, isvc(namespace))
    deployment = eventually(lambda: cluster.get(DEPLOYMENT, namespace, "chat-engine"))
    converged(cluster, namespace)

    # As the previous release left it: its fields owned by an Update entry of the same manager,
    # and its record annotation.
    entries = cluster.stored(DEPLOYMENT, namespace, "chat-engine")["metadata"]["managedFields"]
    legacy = [
        {**e, "operation": "Update"} if e["manager"] == "ome-operator" else e for e in entries
    ]
    where = path(DEPLOYMENT, namespace, "chat-engine")
    cluster.plane.request(
        "PATCH",
        where,
        [{"op": "add", "path": "/metadata/managedFields", "value": legacy}],
        content_type=JSON_PATCH,
    )
    mark = cluster.plane.audit_mark()
    cluster.plane.request(
        "PATCH",
        where + "?fieldManager=ome-operator",
        {"metadata": {"annotations": {"ome.io/applied": '{"digest":"0","keys":{}}'}}},
        content_type="application/merge-patch+json",
    )

    taken = eventually(
        lambda: (
            found
            if "ome.io/applied"
            not in (found := cluster.stored(DEPLOYMENT, namespace, "chat-engine"))["metadata"].get(
                "annotations", {}
            )
            else None
        )
    )
    converged(cluster, namespace)
    assert _managers(taken) == [("ome-operator", "Apply")]
    assert cluster.operator_writes(mark, namespace) == [
        f"patch deployments {namespace}/chat-engine"
    ]
    assert _engine_image(taken) == _engine_image(deployment)
