"""The metrics endpoint serves only ``/metrics`` and ``/readyz`` (404 elsewhere), and with
``--metrics-secure`` only to a scraper the API server authenticates (TokenReview: else 401) and
allows to get ``/metrics`` (SubjectAccessReview: else 403), over HTTPS, with each verdict kept a
while (docs/metrics-and-alerts.md, "Who can read /metrics"). A connection that never finishes
its request is shut at the deadline; connections over the cap are closed at once. The reviews are
answered by the emulator, as an API server answers them."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s_client

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.serving_certificates import issue_certificate
from ome_operator.handlers.metrics_access import MetricsAccess, ServingContext
from ome_operator.metrics import serve_metrics
from tests.support.installed_cluster import eventually
from tests.support.kube_access_reviews import AccessReviews
from tests.support.operator_run import free_port
from tests.support.socket_servers import shut

ALICE = {"username": "alice", "uid": "u-a", "groups": ["system:authenticated"]}
BOB = {"username": "bob", "uid": "u-b", "groups": ["system:authenticated"]}
TOKENS = {"alice-token": ALICE, "bob-token": BOB}
GRANTS = {("alice", "/metrics", "get")}


def get(url: str, token: str | None = None, method: str = "GET") -> tuple[int, str]:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@contextlib.contextmanager
def serving_metrics(**options: Any) -> Iterator[tuple[str, Any]]:
    """The metrics endpoint (``serve_metrics`` with ``options``) on a free 127.0.0.1 port: its
    URL and its server, shut after the block."""
    port = free_port()
    server = serve_metrics("127.0.0.1", port, **options)
    scheme = "http" if options.get("tls") is None else "https"
    try:
        yield f"{scheme}://127.0.0.1:{port}", server
    finally:
        shut(server)


@pytest.fixture
def plain() -> Iterator[tuple[str, Any]]:
    with serving_metrics() as served:
        yield served


@pytest.mark.parametrize(
    "path, method, status, text",
    [
        pytest.param("/readyz", "GET", 200, "ok\n", id="readiness is served"),
        pytest.param(
            "/",
            "GET",
            404,
            "not found: metrics are served at /metrics\n",
            id="the root is not found",
        ),
        pytest.param(
            "/does-not-exist",
            "GET",
            404,
            "not found: metrics are served at /metrics\n",
            id="an unknown path is not found",
        ),
        pytest.param(
            "/metrics/x",
            "GET",
            404,
            "not found: metrics are served at /metrics\n",
            id="a path below /metrics is not found",
        ),
        pytest.param(
            "/metrics", "POST", 405, "method not allowed: use GET\n", id="metrics take only GET"
        ),
    ],
)
def test_only_metrics_and_readiness_are_served(plain, path, method, status, text):
    assert get(plain[0] + path, method=method) == (status, text)


def test_metrics_are_served_at_metrics(plain):
    status, text = get(plain[0] + "/metrics")
    assert (status, "# TYPE" in text) == (200, True)


def test_a_connection_that_never_finishes_its_request_is_shut_at_the_deadline(plain):
    url, server = plain
    server.deadline = 0.2
    port = int(url.rpartition(":")[2])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /metrics HTTP/1.1\r\n")  # the headers never end
        assert sock.recv(100) == b""
        after = time.monotonic() - started
    assert 0.15 <= after < 2.0, after


def test_connections_over_the_cap_are_closed_at_once(plain):
    url, server = plain
    server.slots = threading.BoundedSemaphore(2)
    server.deadline = 3.0
    port = int(url.rpartition(":")[2])
    held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]

    def full() -> bool:
        if server.slots.acquire(blocking=False):
            server.slots.release()
            return False
        return True

    try:
        eventually(full, timeout=5.0, interval=0.02)  # the two hold their slots
        with socket.create_connection(("127.0.0.1", port), timeout=5) as third:
            started = time.monotonic()
            closed = third.recv(100)
            after = time.monotonic() - started
    finally:
        for sock in held:
            sock.close()
    assert (closed, after < 1.0) == (b"", True), after


# --- --metrics-secure -----------------------------------------------------------------------


@pytest.fixture
def reviews(kube) -> AccessReviews:
    kube.access_reviews = AccessReviews(users=dict(TOKENS), grants=set(GRANTS))
    return kube.access_reviews


@pytest.fixture
def secure(api, reviews, tmp_path) -> Iterator[tuple[str, MetricsAccess]]:
    issued = issue_certificate(["127.0.0.1"], datetime.datetime.now(datetime.UTC))
    (tmp_path / "tls.crt").write_bytes(issued.cert)
    (tmp_path / "tls.key").write_bytes(issued.key)
    access = MetricsAccess(lambda: api)
    tls = ServingContext(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    with serving_metrics(access=access, tls=tls) as (url, _):
        yield url, access


@pytest.mark.parametrize(
    "path, token, status, text, asked",
    [
        pytest.param(
            "/metrics",
            None,
            401,
            "Unauthorized: a bearer token is required\n",
            [],
            id="a scrape without a token is unauthorized and asks nothing",
        ),
        pytest.param(
            "/metrics",
            "forged",
            401,
            "Unauthorized: the token is not authenticated\n",
            [("TokenReview", "forged")],
            id="a token the API server does not authenticate is unauthorized",
        ),
        pytest.param(
            "/metrics",
            "bob-token",
            403,
            'Forbidden: user "bob" may not get /metrics\n',
            [("TokenReview", "bob-token"), ("SubjectAccessReview", "bob", "/metrics", "get")],
            id="a user not allowed to get /metrics is forbidden",
        ),
        pytest.param(
            "/metrics",
            "alice-token",
            200,
            None,
            [("TokenReview", "alice-token"), ("SubjectAccessReview", "alice", "/metrics", "get")],
            id="a user allowed to get /metrics is served",
        ),
        pytest.param(
            "/readyz", None, 200, "ok\n", [], id="readiness needs no token, for the kubelet"
        ),
        pytest.param(
            "/nothing",
            None,
            404,
            "not found: metrics are served at /metrics\n",
            [],
            id="an unknown path is not found before any token is asked for",
        ),
    ],
)
async def test_secure_metrics_serve_only_an_authenticated_and_allowed_scraper(
    secure, reviews, path, token, status, text, asked
):
    url, _ = secure
    got_status, got_text = await asyncio.to_thread(get, url + path, token)
    assert (got_status, got_text if text is not None else text, reviews.asked) == (
        status,
        text,
        asked,
    )
    if status == 200 and path == "/metrics":
        assert "# TYPE" in got_text


async def test_verdicts_are_kept_a_while_per_token(secure, reviews):
    url, _ = secure
    for token in ("alice-token", "alice-token", "bob-token", "bob-token", "forged", "forged"):
        await asyncio.to_thread(get, url + "/metrics", token)
    assert reviews.asked == [
        ("TokenReview", "alice-token"),
        ("SubjectAccessReview", "alice", "/metrics", "get"),
        ("TokenReview", "bob-token"),
        ("SubjectAccessReview", "bob", "/metrics", "get"),
        ("TokenReview", "forged"),
    ]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    "token, later, asked_again",
    [
        pytest.param("alice-token", 59.0, False, id="an allowed token is kept for a minute"),
        pytest.param("alice-token", 61.0, True, id="an allowed token is asked about after it"),
        pytest.param("bob-token", 9.0, False, id="a forbidden token is kept for ten seconds"),
        pytest.param("bob-token", 11.0, True, id="a forbidden token is asked about after them"),
    ],
)
async def test_a_verdict_expires(api, reviews, token, later, asked_again):
    clock = Clock()
    access = MetricsAccess(lambda: api, clock=clock)
    first = await asyncio.to_thread(access, f"Bearer {token}")
    clock.now = later
    second = await asyncio.to_thread(access, f"Bearer {token}")
    assert (first == second, len(reviews.asked) == 4) == (True, asked_again)


async def test_the_kept_verdicts_are_bounded_oldest_first(api, reviews):
    reviews.users.update({f"t{i}": {"username": f"user{i}"} for i in range(3)})
    access = MetricsAccess(lambda: api, size=2)
    for token in ("t0", "t1", "t2", "t0"):
        await asyncio.to_thread(access, f"Bearer {token}")
    assert [asked[1] for asked in reviews.asked if asked[0] == "TokenReview"] == [
        "t0",
        "t1",
        "t2",
        "t0",
    ]


async def test_an_api_server_that_does_not_answer_is_503_and_kept_no_verdict(api, reviews):
    configuration = k8s_client.Configuration()
    configuration.host = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    clients = [KubeApi(k8s_client.ApiClient(configuration), (1, 1)), api]
    access = MetricsAccess(lambda: clients[0])
    first = await asyncio.to_thread(access, "Bearer alice-token")
    clients.pop(0)
    second = await asyncio.to_thread(access, "Bearer alice-token")
    assert (first, second) == (
        (503, "Service Unavailable: the API server did not review the token"),
        (200, ""),
    )
