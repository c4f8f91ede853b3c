"""The secure-metrics overlay (`kubectl apply -k overlays/secure-metrics/`), rendered offline by the
machine's kubectl: the base install plus --metrics-secure, the readiness probe over HTTPS, the
two reviews the operator then asks for (and nothing else), and the role a scraper is bound to.
The base install grants neither review: it serves /metrics without them."""

from __future__ import annotations

import kubernetes_validate

from tests.manifests.manifest_files import KUBERNETES_VERSION, MANIFESTS, ROOT
from tests.manifests.test_kustomization import identities, kustomized, one
from tests.support.rbac_rules import grants

SECURE = str(ROOT / "overlays" / "secure-metrics")
REVIEWS = {
    ("authentication.k8s.io", "tokenreviews", "create", None),
    ("authorization.k8s.io", "subjectaccessreviews", "create", None),
}


def test_the_overlay_adds_the_review_grants_and_the_reader_role_to_the_base():
    assert identities(kustomized(SECURE)) == identities(kustomized(str(MANIFESTS))) | {
        ("ClusterRole", "ome-operator-metrics-auth"),
        ("ClusterRoleBinding", "ome-operator-metrics-auth"),
        ("ClusterRole", "ome-operator-metrics-reader"),
    }


def test_the_operator_runs_with_secure_metrics_and_is_probed_over_https():
    base = one(kustomized(str(MANIFESTS)), "Deployment", "ome-operator")
    secure = one(kustomized(SECURE), "Deployment", "ome-operator")
    (before,) = base["spec"]["template"]["spec"]["containers"]
    (after,) = secure["spec"]["template"]["spec"]["containers"]
    assert after["command"] == [*before["command"], "--metrics-secure"]
    assert after["readinessProbe"]["httpGet"] == {
        **before["readinessProbe"]["httpGet"],
        "scheme": "HTTPS",
    }


def test_the_operator_may_ask_for_both_reviews_and_nothing_more():
    objects = kustomized(SECURE)
    role = one(objects, "ClusterRole", "ome-operator-metrics-auth")
    binding = one(objects, "ClusterRoleBinding", "ome-operator-metrics-auth")
    assert grants(role["rules"]) == REVIEWS
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "ome-operator", "namespace": "ome"}
    ]
    base = one(kustomized(str(MANIFESTS)), "ClusterRole", "ome-operator")
    assert grants(base["rules"]) & REVIEWS == set()


def test_a_scraper_role_may_get_metrics_only():
    reader = one(kustomized(SECURE), "ClusterRole", "ome-operator-metrics-reader")
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def test_every_object_of_the_overlay_validates_strictly():
    problems = []
    for obj in kustomized(SECURE):
        if obj["apiVersion"].startswith("ome.io/"):
            continue
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            problems.append(f"{obj['kind']}/{obj['metadata']['name']}: {exc.message}")
    assert problems == []
