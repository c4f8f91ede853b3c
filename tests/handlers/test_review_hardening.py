"""The webhook server refuses what is not a review (docs/webhook.md, "What the webhook refuses to
read"; "Connections and timeouts"): an unknown path is 404; a body that is not an AdmissionReview
is 400 with the sentence that says why, one WARNING line and no traceback; a review nested deeper
than an API server sends is denied (400 when its uid cannot be read); a connection that sends
nothing, trickles its headers or its body, or idles between reviews is closed at its deadline."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import resource
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ome_operator.cluster.serving_certificates import issue_certificate
from ome_operator.handlers.review_server import ConnectionTimeouts, ReviewServer
from tests.handlers.test_review_server import answer, serving
from tests.support.operator_run import free_port

UID = "u-1"
DENIED = 403
LIMIT = 10_002


def review(**request: Any) -> dict[str, Any]:
    """A well-formed review, with ``request`` fields replaced (None: left out)."""
    fields: dict[str, Any] = {
        "uid": UID,
        "operation": "CREATE",
        "resource": {"group": "ome.io", "version": "v1beta1", "resource": "inferenceservices"},
        "userInfo": {"username": "alice"},
        "object": {"metadata": {"name": "a", "namespace": "default"}},
    }
    fields.update(request)
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": fields}
    body["request"] = {k: v for k, v in fields.items() if v is not None}
    return body


def review_answer(response: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview answered to the review ``UID`` with ``response`` fields."""
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": UID, **response},
    }


TOO_DEEP = f"the AdmissionReview is nested more than {LIMIT} levels deep (the limit is {LIMIT})"
DENIED_TOO_DEEP = review_answer({"allowed": False, "status": {"message": TOO_DEEP, "code": DENIED}})


def encoded(body: Any) -> bytes:
    return json.dumps(body).encode()


def deep_text(levels: int) -> bytes:
    """A review whose object nests ``levels`` levels, as text (``json.dumps`` recurses)."""
    head = encoded(review(object="@@"))
    spec = b"[" * (levels - 1) + b"]" * (levels - 1)
    return head.replace(b'"@@"', b'{"metadata": {"name": "deep"}, "spec": ' + spec + b"}")


def request_bytes(path: str, body: bytes, method: str = "POST") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def exchange(port: int, raw: bytes) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        status, _, body = await asyncio.wait_for(answer(reader), 10)
    finally:
        writer.close()
    return status, body


def plain_server(timeouts: ConnectionTimeouts | None = None) -> ReviewServer:
    return ReviewServer(addr="127.0.0.1", port=free_port(), insecure=True, timeouts=timeouts)


# --- paths ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, status",
    [
        pytest.param("POST", "/validate-inferenceservice", 200, id="a handler's path is served"),
        pytest.param("POST", "/validate-servingruntime", 200, id="every handler's path is served"),
        pytest.param("POST", "/does-not-exist", 404, id="an unknown path is not found"),
        pytest.param("POST", "/", 404, id="the root is not found"),
        pytest.param(
            "POST", "/validate-inferenceservice/x", 404, id="a path below a handler's is not found"
        ),
        pytest.param(
            "POST", "/validate-inferenceservices", 404, id="a handler's path is matched whole"
        ),
        pytest.param(
            "GET", "/validate-inferenceservice", 405, id="a handler's path takes only POST"
        ),
    ],
)
async def test_only_the_paths_of_the_validating_handlers_are_served(method, path, status):
    async with serving(plain_server()) as running:
        got, _ = await exchange(running.port, request_bytes(path, encoded(review()), method))
    assert got == status


@pytest.mark.parametrize(
    "handler_ids, served",
    [
        pytest.param(
            None,
            {
                "validate-inferenceservice": 200,
                "validate-clusterservingruntime": 200,
                "validate-servingruntime": 200,
                "validate-other": 404,
            },
            id="by default the paths are the ids of the handlers kopf holds",
        ),
        pytest.param(
            ("validate-other",),
            {
                "validate-inferenceservice": 404,
                "validate-clusterservingruntime": 404,
                "validate-servingruntime": 404,
                "validate-other": 200,
            },
            id="handler ids given are the only paths served",
        ),
    ],
)
async def test_the_paths_served_are_the_handler_ids(handler_ids, served):
    server = ReviewServer(
        addr="127.0.0.1", port=free_port(), insecure=True, handler_ids=handler_ids
    )
    async with serving(server) as running:
        found = {
            name: (await exchange(running.port, request_bytes(f"/{name}", encoded(review()))))[0]
            for name in served
        }
    assert found == served


# --- bodies ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        pytest.param(
            bytes(range(200, 256)),
            "the AdmissionReview is not JSON: invalid UTF-8 at byte 0",
            id="random bytes are not JSON",
        ),
        pytest.param(
            b"<xml/>",
            "the AdmissionReview is not JSON: Expecting value: line 1 column 1 (char 0)",
            id="text that is not JSON says where it stops being JSON",
        ),
        pytest.param(
            b"",
            "the AdmissionReview is not JSON: Expecting value: line 1 column 1 (char 0)",
            id="an empty body is not JSON",
        ),
        pytest.param(
            b'{"request": {"uid": "u-1"',
            "the AdmissionReview is not JSON: Expecting ',' delimiter: line 1 column 26 (char 25)",
            id="a body cut short is not JSON",
        ),
        pytest.param(
            b"[1, 2]",
            "the AdmissionReview must be an object (got [1, 2])",
            id="a review that is not an object",
        ),
        pytest.param(
            encoded({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
            "request: is required but not set",
            id="a review without a request",
        ),
        pytest.param(
            encoded(review(object="abc")),
            'request.object: must be an object or null (got "abc")',
            id="an object that is a string",
        ),
        pytest.param(
            encoded(review(object=None)),
            "request.object: is required but not set (nor is oldObject)",
            id="a review of no object",
        ),
        pytest.param(
            encoded(review(uid=7)),
            "request.uid: must be a string (got 7)",
            id="a uid that is a number",
        ),
        pytest.param(
            encoded(review(resource={"group": "ome.io", "version": "v1beta1"})),
            "request.resource.resource: must be a string (got null)",
            id="a resource without its plural",
        ),
        pytest.param(
            encoded(review(userInfo=None)),
            "request.userInfo: is required but not set",
            id="a review without userInfo",
        ),
        pytest.param(
            encoded(review(dryRun="yes")),
            'request.dryRun: must be a boolean (got "yes")',
            id="a dryRun that is a string",
        ),
        pytest.param(
            encoded(review(object={"metadata": "x"})),
            'request.object.metadata: must be an object (got "x")',
            id="metadata that is a string",
        ),
        pytest.param(
            encoded(review(oldObject={"metadata": {"uid": ["a"]}})),
            'request.oldObject.metadata.uid: must be a string (got ["a"])',
            id="an old object whose uid is a list",
        ),
        pytest.param(
            encoded({"kind": 1, "request": review()["request"]}),
            "kind: must be a string (got 1)",
            id="a review kind that is a number",
        ),
    ],
)
async def test_a_body_that_is_not_a_review_is_refused_with_why_and_no_traceback(
    caplog, body, message
):
    caplog.set_level(logging.DEBUG)
    async with serving(plain_server()) as running:
        status, text = await exchange(
            running.port, request_bytes("/validate-inferenceservice", body)
        )
    lines = [
        (r.name, r.levelname, r.getMessage(), getattr(r, "error", None), r.exc_info)
        for r in caplog.records
        if r.levelno >= logging.WARNING
    ]
    assert (status, text.decode()) == (400, message + "\n")
    assert lines == [
        ("ome_operator.admission", "WARNING", "Refused an admission review", message, None)
    ]


@pytest.mark.parametrize(
    "body, status, answered",
    [
        pytest.param(
            deep_text(20_000),
            200,
            DENIED_TOO_DEEP,
            id="a review nested 20,000 levels is denied in an answer to its uid",
        ),
        pytest.param(
            b"[" * 20_000 + b"]" * 20_000,
            400,
            TOO_DEEP + "\n",
            id="a body nested 20,000 levels without a uid is refused",
        ),
        pytest.param(
            deep_text(20_000).replace(b'"uid": "u-1"', b'"uid": 1'),
            400,
            TOO_DEEP + "\n",
            id="a deep review whose uid is no string is refused",
        ),
        pytest.param(
            deep_text(10_000),
            200,
            review_answer({"allowed": True}),
            id="a review of an object as deep as an API server stores is answered by kopf",
        ),
        pytest.param(
            deep_text(10_001).replace(b'"spec"', b'"text": "[[[[]]]]", "spec"'),
            200,
            DENIED_TOO_DEEP,
            id="one level over the limit is denied, brackets in strings not counted",
        ),
    ],
)
async def test_a_review_nested_deeper_than_an_api_server_sends_is_denied(
    caplog, body, status, answered
):
    async with serving(plain_server()) as running:
        got, text = await exchange(running.port, request_bytes("/validate-inferenceservice", body))
    assert (got, json.loads(text) if got == 200 else text.decode()) == (status, answered)
    assert [r.exc_info for r in caplog.records if r.levelno >= logging.WARNING] in ([], [None])


# --- connections ----------------------------------------------------------------------------


def enough_descriptors(count: int) -> None:
    """Raise the soft limit of open files to ``count`` if it is lower (never above the hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < count:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(count, hard), hard))


async def closed_after(reader: asyncio.StreamReader, started: float, timeout: float) -> float:
    """Seconds from ``started`` until the server closed the connection (read to the end)."""
    with contextlib.suppress(ConnectionError):
        while await asyncio.wait_for(reader.read(65536), timeout):
            pass
    return time.monotonic() - started


@contextlib.asynccontextmanager
async def opened(port: int, count: int, **kwargs: Any) -> AsyncIterator[list[Any]]:
    """``count`` connections, opened 100 at a time (the listen backlog stays short)."""
    connections: list[Any] = []
    try:
        for first in range(0, count, 100):
            batch = range(first, min(first + 100, count))
            connections += await asyncio.gather(
                *(asyncio.open_connection("127.0.0.1", port, **kwargs) for _ in batch)
            )
        yield connections
    finally:
        for _, writer in connections:
            writer.close()


async def test_a_thousand_idle_connections_are_closed_within_the_idle_timeout():
    enough_descriptors(2 * 1000 + 200)  # both ends of each connection are in this process
    idle = 1.5
    async with serving(plain_server(ConnectionTimeouts(idle=idle))) as running:
        started = time.monotonic()
        async with opened(running.port, 1000) as connections:
            opened_in = time.monotonic() - started
            closed = await asyncio.gather(
                *(closed_after(reader, started, idle + 5) for reader, _ in connections)
            )
    assert opened_in < idle  # else the bound below says little
    assert (len(closed), min(closed) >= idle * 0.9, max(closed) < idle + opened_in + 1.0) == (
        1000,
        True,
        True,
    ), (min(closed), max(closed))


async def test_a_connection_idle_after_an_answer_is_closed_after_the_idle_timeout():
    idle = 0.5
    async with serving(plain_server(ConnectionTimeouts(idle=idle))) as running:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        writer.write(request_bytes("/validate-inferenceservice", encoded(review())))
        status, headers, _ = await asyncio.wait_for(answer(reader), 5)
        answered = time.monotonic()
        after = await closed_after(reader, answered, 5)
        writer.close()
    assert (status, headers.get("connection"), idle * 0.9 <= after < idle + 1.0) == (
        200,
        None,
        True,
    ), after


@pytest.mark.parametrize(
    "timeouts, head, trickled, limit",
    [
        pytest.param(
            ConnectionTimeouts(header=0.5, idle=10.0),
            b"",
            request_bytes("/validate-inferenceservice", encoded(review())),
            0.5,
            id="headers trickled a byte at a time are cut off at the header timeout",
        ),
        pytest.param(
            ConnectionTimeouts(body=0.5, idle=10.0),
            request_bytes("/validate-inferenceservice", b"")[:-2].replace(
                b"Content-Length: 0", f"Content-Length: {len(encoded(review()))}".encode()
            )
            + b"\r\n",
            encoded(review()),
            0.5,
            id="a body trickled a byte at a time is cut off at the body timeout",
        ),
    ],
)
async def test_a_slow_client_is_closed_after_its_timeout(timeouts, head, trickled, limit):
    async with serving(plain_server(timeouts)) as running:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        writer.write(head)

        async def trickle() -> None:
            for byte in trickled[: int(limit * 3 / 0.05)]:  # bounded: three limits' worth
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)

        started = time.monotonic()
        trickling = asyncio.create_task(trickle())
        after = await closed_after(reader, started, 5)
        stopped_early = trickling.done()
        trickling.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await trickling
        writer.close()
    assert (stopped_early, limit * 0.9 <= after < limit + 1.0) == (False, True), after


def tls_server(tmp_path: Any, timeouts: ConnectionTimeouts) -> ReviewServer:
    issued = issue_certificate(["127.0.0.1"], datetime.datetime.now(datetime.UTC))
    (tmp_path / "tls.key").write_bytes(issued.key)
    (tmp_path / "tls.crt").write_bytes(issued.cert)
    return ReviewServer(
        addr="127.0.0.1",
        port=free_port(),
        certfile=str(tmp_path / "tls.crt"),
        pkeyfile=str(tmp_path / "tls.key"),
        timeouts=timeouts,
    )


async def test_tls_connections_that_never_handshake_or_idle_after_it_are_closed(tmp_path):
    timeouts = ConnectionTimeouts(header=0.5, idle=1.0)
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    async with serving(tls_server(tmp_path, timeouts)) as running:
        started = time.monotonic()
        async with (
            opened(running.port, 50) as silent,
            opened(running.port, 50, ssl=client) as idle,
        ):
            closed = await asyncio.gather(
                *(closed_after(reader, started, 5) for reader, _ in [*silent, *idle])
            )
    silent_closed, idle_closed = closed[:50], closed[50:]
    assert (
        max(silent_closed) < timeouts.header + 1.0,
        min(idle_closed) >= timeouts.idle * 0.9,
    ) == (
        True,
        True,
    ), (max(silent_closed), min(idle_closed))
    assert max(idle_closed) < timeouts.idle + 1.5, max(idle_closed)
