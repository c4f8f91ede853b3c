"""Every error of ``kubectl ome runtime effective`` (SPEC S13): exit 1, nothing on stdout, one
``error:`` line on stderr."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.effective.reports import (
    LLAMA,
    MANAGED,
    MODEL,
    TIMEOUT,
    FailingReader,
    effective,
    service,
)

DNS_DETAIL = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("objects", "name", "output", "kwargs", "message"),
    [
        pytest.param(
            [],
            "chat",
            "xml",
            {},
            'unable to match a printer suitable for the output format "xml", allowed formats '
            "are: json,jsonpath,name,wide,yaml",
            id="an unknown output format",
        ),
        pytest.param(
            [],
            "Chat",
            "table",
            {},
            f'InferenceService name "Chat" is invalid: {DNS_DETAIL}',
            id="a name with capitals is not a DNS-1123 subdomain",
        ),
        pytest.param(
            [],
            "a" * 254 + "-",
            "table",
            {},
            f'InferenceService name "{"a" * 254}-" is invalid: must be no more than 253 '
            f"characters; {DNS_DETAIL}",
            id="a long name that ends in a dash has both problems",
        ),
        pytest.param(
            [LLAMA],
            "chat",
            "table",
            {},
            'get InferenceService: inferenceservices.ome.io "chat" not found',
            id="a missing InferenceService gives the API's NotFound text",
        ),
        pytest.param(
            [service()],
            "chat",
            "table",
            {"reader": FailingReader([service()], "inferenceservices")},
            f"get InferenceService: {TIMEOUT}",
            id="an InferenceService read that fails",
        ),
        pytest.param(
            [service(runtime=MANAGED, status={"pinnedRevisionName": "cr-1"}), LLAMA],
            "chat",
            "table",
            {"ome": ""},
            "collect runtime evidence: an OME namespace is required to read ControllerRevisions",
            id="a pin with an empty --ome-namespace",
        ),
        pytest.param(
            [{**service(), "spec": {"runtime": {"name": 7}}}],
            "chat",
            "table",
            {},
            'InferenceService "default/chat" is invalid: spec.runtime.name: must be a string '
            "(got 7)",
            id="a malformed InferenceService",
        ),
        pytest.param(
            [service(status={"observedGeneration": "1", "conditions": ["x"]}), LLAMA, MODEL],
            "chat",
            "table",
            {},
            'InferenceService "default/chat" is invalid: status.observedGeneration: must be an '
            'integer (got "1"); status.conditions[0]: must be an object (got "x")',
            id="a malformed status",
        ),
    ],
)
def test_errors(
    objects: list[dict], name: str, output: str, kwargs: dict[str, Any], message: str
) -> None:
    assert effective(objects, name, output, **kwargs) == (1, "", f"error: {message}\n")
