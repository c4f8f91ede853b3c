"""The metrics endpoint and the readiness check beside it: /readyz answers 503 with the reason a
review sent now would not be answered (the watches have not listed, the webhook is not listening
yet, the operator is stopping), else 200; /metrics serves the registry; neither writes an
access-log line."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest

from ome_operator.handlers.startup import unready_reason
from ome_operator.metrics import serve_metrics
from tests.support.operator_run import free_port
from tests.support.socket_servers import shut


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_readiness_follows_the_listing_and_metrics_are_served(capfd):
    reason: str | None = "the caches have not listed the cluster yet"
    port = free_port()
    server = serve_metrics("127.0.0.1", port, unready=lambda: reason)
    try:
        before = get(port, "/readyz")
        reason = None
        after = get(port, "/readyz")
        status, text = get(port, "/metrics")
    finally:
        shut(server)
    assert (before, after) == (
        (503, "not ready: the caches have not listed the cluster yet\n"),
        (200, "ok\n"),
    )
    assert status == 200 and "# TYPE" in text
    assert capfd.readouterr().err == ""  # no access-log line


def controller(synced: bool) -> Any:
    watches = SimpleNamespace(synced=threading.Event())
    if synced:
        watches.synced.set()
    return SimpleNamespace(watches=watches)


@pytest.mark.parametrize(
    "synced, server, expected",
    [
        pytest.param(True, SimpleNamespace(stopping=False, listening=True), None, id="ready"),
        pytest.param(
            False,
            SimpleNamespace(stopping=False, listening=True),
            "the caches have not listed the cluster yet",
            id="the watches have not listed",
        ),
        pytest.param(
            True,
            SimpleNamespace(stopping=False, listening=False),
            "the webhook is not listening yet",
            id="the webhook has not bound its port",
        ),
        pytest.param(
            True,
            SimpleNamespace(stopping=True, listening=True),
            "the operator is stopping",
            id="a stopping replica leaves the webhook Service's endpoints",
        ),
        pytest.param(
            False,
            SimpleNamespace(stopping=True, listening=False),
            "the operator is stopping",
            id="stopping is said before anything else",
        ),
    ],
)
def test_why_a_replica_is_not_ready(synced, server, expected):
    assert unready_reason(controller(synced), server) == expected
