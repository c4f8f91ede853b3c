"""--metrics-secure on a real API server, with the RBAC of overlays/secure-metrics/: a scraper's
ServiceAccount token is reviewed (TokenReview) and authorized for GET /metrics
(SubjectAccessReview), over HTTPS; /readyz needs no token. The operator, with the shipped
ServiceAccount's token, is refused no review: the overlay's grants are what it uses."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from typing import Any

import pytest
import yaml

from tests.controlplane.conftest import start_operator
from tests.support.installed_cluster import ROOT, Cluster, eventually

pytestmark = pytest.mark.controlplane

OVERLAY = ROOT / "overlays" / "secure-metrics"
SCRAPER, STRANGER = "metrics-scraper", "metrics-stranger"


def _overlay_objects() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for name in ("metrics-auth-role.yaml", "metrics-reader-role.yaml"):
        found += [d for d in yaml.safe_load_all((OVERLAY / name).read_text()) if d]
    return found


def _accounts() -> list[dict[str, Any]]:
    accounts: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": n, "namespace": "ome"}}
        for n in (SCRAPER, STRANGER)
    ]
    accounts.append(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": SCRAPER},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "ome-operator-metrics-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": SCRAPER, "namespace": "ome"}],
        }
    )
    return accounts


def _get(url: str, token: str | None) -> tuple[int, str]:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        request = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_secure_metrics_serve_only_a_scraper_allowed_to_get_them(cluster: Cluster):
    objects = [*_overlay_objects(), *_accounts()]
    cluster.apply(*objects)
    mark = cluster.plane.audit_mark()
    operator = start_operator(cluster, "secure-metrics", "--metrics-secure")
    try:
        base = f"https://127.0.0.1:{operator.metrics_port}"
        eventually(lambda: _get(base + "/readyz", None)[0] == 200, timeout=30)
        scraper, stranger = (cluster.plane.token(n, "ome") for n in (SCRAPER, STRANGER))
        answers = {
            who: (lambda status, text: (status, text if status != 200 else "# TYPE" in text))(
                *_get(base + "/metrics", token)
            )
            for who, token in (
                ("nobody", None),
                ("a forged token", "forged"),
                ("a stranger", stranger),
                ("the scraper", scraper),
            )
        }
    finally:
        assert operator.stop() == 0, operator.tail()
        cluster.plane.kubectl("delete", "-f", "-", stdin=yaml.safe_dump_all(objects), check=False)
    assert answers == {
        "nobody": (401, "Unauthorized: a bearer token is required\n"),
        "a forged token": (401, "Unauthorized: the token is not authenticated\n"),
        "a stranger": (
            403,
            f'Forbidden: user "system:serviceaccount:ome:{STRANGER}" may not get /metrics\n',
        ),
        "the scraper": (200, True),
    }
    reviews = [
        (r["verb"], r["objectRef"]["resource"], r["responseStatus"]["code"])
        for r in cluster.operator_requests(mark)
        if r.get("objectRef", {}).get("resource") in ("tokenreviews", "subjectaccessreviews")
    ]
    # Three tokens reviewed (the forged one is not authenticated), two users authorized.
    assert sorted(reviews) == [
        ("create", "subjectaccessreviews", 201),
        ("create", "subjectaccessreviews", 201),
        ("create", "tokenreviews", 201),
        ("create", "tokenreviews", 201),
        ("create", "tokenreviews", 201),
    ]
