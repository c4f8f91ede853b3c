"""What the flags of the webhook's and the metrics endpoint's hardening become
(docs/configuration.md): ``--webhook-idle-timeout`` (30 s, more than 0) the webhook server's
idle deadline; ``--metrics-secure`` (off) TokenReview and SubjectAccessReview, over HTTPS with
the webhook's certificate files. tests/test_settings.py parses and checks the flags."""

from __future__ import annotations

from ome_operator.handlers.connection_deadlines import ConnectionTimeouts
from ome_operator.handlers.metrics_access import MetricsAccess, ServingContext, secured_serving
from ome_operator.handlers.review_server import ReviewServer


def test_the_webhook_server_keeps_its_deadlines():
    server = ReviewServer(insecure=True, timeouts=ConnectionTimeouts(idle=7.0))
    assert (server.timeouts, ReviewServer(insecure=True).timeouts) == (
        ConnectionTimeouts(header=10.0, body=10.0, idle=7.0),
        ConnectionTimeouts(header=10.0, body=10.0, idle=30.0),
    )


def test_secured_serving_is_nothing_without_the_flag_and_reviews_over_tls_with_it():
    server = ReviewServer(certfile="/c/tls.crt", pkeyfile="/c/tls.key")
    secured = secured_serving(True, server)
    assert (secured_serving(False, server), sorted(secured)) == ({}, ["access", "tls"])
    assert (type(secured["access"]), type(secured["tls"])) == (MetricsAccess, ServingContext)
