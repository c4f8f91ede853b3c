"""When the managed webhook certificate must be replaced (the Secret and CA bundle writes are
proven on the real API server, tests/controlplane/test_webhook.py)."""

from __future__ import annotations

import datetime

import pytest

from ome_operator.cluster.serving_certificates import (
    ServingCertificate,
    issue_certificate,
    needs_renewal,
)

NOW = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)
HOSTS = ["ome-webhook-server.ome.svc", "127.0.0.1"]
FRESH = issue_certificate(HOSTS, NOW)
ENDS = (NOW - datetime.timedelta(days=340)) + datetime.timedelta(days=365)


@pytest.mark.parametrize(
    ("found", "hosts", "expected"),
    [
        pytest.param(FRESH, HOSTS, None, id="a fresh certificate for the hosts is kept"),
        pytest.param(
            issue_certificate(HOSTS, NOW - datetime.timedelta(days=334)),
            HOSTS,
            None,
            id="31 days left is enough",
        ),
        pytest.param(
            issue_certificate(HOSTS, NOW - datetime.timedelta(days=340)),
            HOSTS,
            f"it expires at {ENDS:%Y-%m-%dT%H:%M:%SZ}",
            id="25 days left: renewed",
        ),
        pytest.param(
            FRESH,
            [*HOSTS, "webhook.example"],
            "it does not cover webhook.example",
            id="a host it does not cover: renewed",
        ),
        pytest.param(
            ServingCertificate(b"", b""), HOSTS, "it is not a PEM certificate and key", id="empty"
        ),
        pytest.param(
            ServingCertificate(FRESH.cert, b"not a key"),
            HOSTS,
            "it is not a PEM certificate and key",
            id="a certificate without its key",
        ),
    ],
)
def test_a_certificate_is_renewed_when_it_cannot_serve_for_long(
    found: ServingCertificate, hosts: list[str], expected: str | None
) -> None:
    assert needs_renewal(found, hosts, NOW) == expected
