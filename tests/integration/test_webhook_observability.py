"""What the running operator's webhook and probe leave in the metrics and the logs: every review
of CREATE or UPDATE is timed and has one verdict counted; a denial is logged at INFO, not ERROR;
the liveness probe leaves no access-log line, while a review does."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from tests.integration.test_webhook_http import admission_review, answered, isvc, samples
from tests.support.operator_run import RunningOperator

DURATION = "ome_webhook_request_duration_seconds_count"
REQUESTS = "ome_webhook_requests_total"
WEBHOOK_PATH = "/validate-inferenceservice"
NO_MODEL = "at least one of spec.model or spec.runtime must be set"


def operation(name: str) -> tuple[tuple[str, str], ...]:
    return (("kind", "InferenceService"), ("operation", name))


async def test_each_review_is_timed_and_counted_once_and_delete_is_not(
    operator: RunningOperator,
) -> None:
    denied = isvc(model=None)
    await answered(operator, admission_review(denied))
    await answered(operator, admission_review(denied, operation="UPDATE", old=denied))
    await answered(operator, admission_review(None, operation="DELETE", old=denied))

    assert samples(operator, DURATION) == {operation("CREATE"): 1.0, operation("UPDATE"): 1.0}
    assert samples(operator, REQUESTS) == {
        (("allowed", "false"), *operation("CREATE")): 1.0,
        (("allowed", "false"), *operation("UPDATE")): 1.0,
    }


async def test_a_denial_is_logged_at_info(
    operator: RunningOperator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kopf.objects")

    response = await answered(operator, admission_review(isvc(model=None)))

    assert response["allowed"] is False
    assert [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.name == "kopf.objects" and "failed" in r.getMessage()
    ] == [("INFO", f"Webhook 'validate-inferenceservice' failed permanently: {NO_MODEL}")]


async def test_the_liveness_probe_leaves_no_access_line_and_a_review_does(
    operator: RunningOperator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    await answered(operator, admission_review(isvc(model=None)))
    async with aiohttp.ClientSession() as session:
        for _ in range(3):
            async with session.get(operator.liveness_url) as answer:
                assert answer.status == 200

    lines = [r.first_request_line.split() for r in caplog.records if r.name == "aiohttp.access"]
    # The emulator is an aiohttp server too: only the lines of the operator's two servers.
    assert [(method, path) for method, path, _ in lines if path in ("/healthz", WEBHOOK_PATH)] == [
        ("POST", WEBHOOK_PATH)
    ]
