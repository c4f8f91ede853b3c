"""The metrics endpoint and the readiness check beside it: /readyz answers 503 until the watches
have listed (reviews would be refused as "still reading"), then 200; /metrics serves the
registry; neither writes an access-log line."""

from __future__ import annotations

import urllib.error
import urllib.request

from ome_operator.metrics import serve_metrics
from tests.support.operator_run import free_port


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_readiness_follows_the_listing_and_metrics_are_served(capfd):
    listed = False
    port = free_port()
    server = serve_metrics("127.0.0.1", port, ready=lambda: listed)
    try:
        before = get(port, "/readyz")
        listed = True
        after = get(port, "/readyz")
        status, text = get(port, "/metrics")
    finally:
        server.shutdown()
        server.server_close()
    assert (before, after) == (
        (503, "not ready: the caches have not listed the cluster yet\n"),
        (200, "ok\n"),
    )
    assert status == 200 and "# TYPE" in text
    assert capfd.readouterr().err == ""  # no access-log line
