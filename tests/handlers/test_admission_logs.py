"""What the admission module makes of log lines: kopf's line for a refused review is logged at
INFO (WARNING while the caches fill), every other line as it was; an access-log line of the
liveness endpoint is dropped, every other one kept."""

from __future__ import annotations

import logging

import pytest

from ome_operator.handlers.admission import denial_level, is_probe_line

STARTING = (
    "the ome-operator is still reading the cluster's runtimes and models; try again in a moment"
)


@pytest.mark.parametrize(
    ("message", "level"),
    [
        pytest.param(
            "Webhook 'validate-inferenceservice' failed permanently: "
            "at least one of spec.model or spec.runtime must be set",
            logging.INFO,
            id="an InferenceService denied is logged at info",
        ),
        pytest.param(
            "Webhook 'validate-servingruntime' failed permanently: runtime rt is disabled",
            logging.INFO,
            id="a ServingRuntime denied is logged at info",
        ),
        pytest.param(
            "Webhook 'validate-clusterservingruntime' failed permanently: unknown classes",
            logging.INFO,
            id="a ClusterServingRuntime denied is logged at info",
        ),
        pytest.param(
            f"Webhook 'validate-inferenceservice' failed permanently: {STARTING}",
            logging.WARNING,
            id="a review refused while the caches fill is logged at warning",
        ),
        pytest.param(
            "Webhook 'validate-inferenceservice' failed with an exception and will stop now: boom",
            None,
            id="a handler that crashed keeps kopf's level",
        ),
        pytest.param(
            "Webhook 'mutate-something' failed permanently: no",
            None,
            id="another webhook's failure keeps kopf's level",
        ),
        pytest.param(
            "Handler 'validate-inferenceservice' failed permanently: no",
            None,
            id="a line that only looks alike keeps its level",
        ),
    ],
)
def test_a_refused_review_is_logged_below_error(message: str, level: int | None) -> None:
    assert denial_level(message) == level


def access_line(first_request_line: str | None) -> logging.LogRecord:
    record = logging.LogRecord("aiohttp.access", logging.INFO, __file__, 1, "line", (), None)
    if first_request_line is not None:
        record.first_request_line = first_request_line
    return record


@pytest.mark.parametrize(
    ("first_request_line", "probe"),
    [
        pytest.param("GET /healthz HTTP/1.1", True, id="the liveness probe"),
        pytest.param("GET /healthz?verbose=1 HTTP/1.1", True, id="the probe with a query"),
        pytest.param(
            "POST /validate-inferenceservice?timeout=10s HTTP/1.1",
            False,
            id="an admission review",
        ),
        pytest.param("GET /healthzz HTTP/1.1", False, id="another path that starts alike"),
        pytest.param("GET /metrics HTTP/1.1", False, id="another path"),
        pytest.param("garbage", False, id="a malformed request line"),
        pytest.param(None, False, id="a line with no request line"),
    ],
)
def test_only_the_liveness_probe_leaves_no_access_line(
    first_request_line: str | None, probe: bool
) -> None:
    assert is_probe_line(access_line(first_request_line)) is probe
