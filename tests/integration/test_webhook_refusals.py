"""The running operator's webhook (kopf's registry, the real handlers) serves only the paths of
its validating handlers, refuses a body kopf could not read with 400 and no traceback, and
denies a review nested deeper than an API server sends (docs/webhook.md, "What the webhook
refuses to read"); none of them is counted as a review. An object as deep as an API server
stores is a review: the handler denies it with the path where it goes over 100 levels."""

from __future__ import annotations

import json
import logging
from typing import Any

import aiohttp
import pytest

from tests.builders import isvc_manifest
from tests.integration.test_webhook_http import UID, admission_review, answered

LIMIT = 10_002


async def _post(url: str, body: bytes) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=body, headers=headers) as answer:
            return answer.status, await answer.text()


def _counted(operator: Any) -> float:
    """Every review counted so far."""
    return sum(
        sample.value
        for family in operator.registry.collect()
        for sample in family.samples
        if sample.name == "ome_webhook_requests_total"
    )


def _deep_review(levels: int) -> bytes:
    text = str.encode(
        '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": '
        f'{{"uid": "{UID}", "object": '
    )
    return text + b"[" * levels + b"]" * levels + b"}}"


def _deep_object_review(levels: int) -> bytes:
    """A real InferenceService review whose object nests ``levels`` levels (in engine.x)."""
    review = admission_review(isvc_manifest("deep", engine={"x": "@@"}))
    lists = levels - 3  # the object, spec and engine are the first three levels
    return json.dumps(review).encode().replace(b'"@@"', b"[" * lists + b"]" * lists)


@pytest.mark.parametrize(
    "path, body, status, text, counted",
    [
        pytest.param(
            "does-not-exist",
            b"{}",
            404,
            "404: Not Found",
            0,
            id="an unknown path is not found, not admitted",
        ),
        pytest.param(
            "validate-inferenceservice",
            b"\x93\x01\xff",
            400,
            "the AdmissionReview is not JSON: invalid UTF-8 at byte 0\n",
            0,
            id="random bytes are refused",
        ),
        pytest.param(
            "validate-inferenceservice",
            b'{"apiVersion": "admission.k8s.io/v1", "request": {"uid": "u", "object": "x"}}',
            400,
            "request.operation: is required but not set\n",
            0,
            id="a review kopf could not read is refused with the first problem",
        ),
        pytest.param(
            "validate-inferenceservice",
            _deep_review(20_000),
            200,
            '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": '
            f'{{"uid": "{UID}", "allowed": false, "status": {{"message": "the AdmissionReview '
            f'is nested more than {LIMIT} levels deep (the limit is {LIMIT})", "code": 403}}}}}}',
            0,
            id="a review nested 20,000 levels is denied",
        ),
        pytest.param(
            "validate-inferenceservice",
            _deep_object_review(10_000),
            200,
            '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": '
            f'{{"uid": "{UID}", "allowed": false, "status": {{"message": "InferenceService '
            '\\"default/deep\\" is invalid: spec.engine.x' + "[0]" * 97 + ": nested more than "
            '100 levels deep (the limit is 100)", "code": 403}}}',
            1,
            id="an object as deep as an API server stores reaches the handler, which denies it",
        ),
    ],
)
async def test_what_is_not_a_review_is_refused_and_counted_only_when_it_is_one(
    kube, operator, caplog, path, body, status, text, counted
):
    await answered(operator, admission_review(isvc_manifest("warm-up")))  # the server listens
    before = _counted(operator)
    caplog.set_level(logging.INFO)
    caplog.clear()
    found = await _post(f"{operator.webhook_url}/{path}", body)
    assert (found, _counted(operator)) == ((status, text), before + counted)
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []
