"""The webhook server's stop refuses no review: a review half sent when the stop begins is
answered, as is one sent meanwhile on an idle connection or a new one; every answer from then on
closes its connection; the port stays open for the grace and closes after it; reviews in flight
finish first. A renewed certificate moves the port to a new listener without closing it."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import pathlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from ome_operator.cluster.serving_certificates import issue_certificate
from ome_operator.handlers.review_server import REVIEW_TIMEOUT, ReviewServer
from tests.support.operator_run import free_port

REVIEW = json.dumps(
    {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "operation": "CREATE",
            "resource": {"group": "ome.io", "version": "v1beta1", "resource": "inferenceservices"},
            "userInfo": {"username": "alice"},
            "object": {"metadata": {"name": "a"}},
        },
    }
).encode()


def head(length: int = len(REVIEW)) -> bytes:
    return (
        f"POST /validate-inferenceservice HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


async def answering(request: Any, **_: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": request["request"]["uid"], "allowed": True},
    }


@dataclass
class Serving:
    server: ReviewServer
    port: int
    task: asyncio.Task[Any]

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


@contextlib.asynccontextmanager
async def serving(server: ReviewServer, fn: Any = answering) -> AsyncIterator[Serving]:
    """The server as kopf runs it: the first client config, then waiting for the next one."""
    configs = server(fn)
    await configs.__anext__()
    running = Serving(server, server.port, asyncio.create_task(configs.__anext__()))
    try:
        yield running
    finally:
        await running.stop()


async def answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    status_line = await reader.readline()
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return int(status_line.split()[1]), headers, body


def closes(headers: dict[str, str]) -> bool:
    return headers.get("connection", "").lower() == "close"


async def until(check: Any, timeout: float = 3.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def plain(grace: float = 0.0) -> ReviewServer:
    return ReviewServer(grace=grace, addr="127.0.0.1", port=free_port(), insecure=True)


async def test_a_review_half_sent_when_the_stop_begins_is_answered_and_its_connection_closed():
    async with serving(plain()) as running:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        writer.write(head() + REVIEW[:10])
        await writer.drain()
        await asyncio.sleep(0.1)  # the headers are read: the review is under way
        stopping = asyncio.create_task(running.stop())
        await until(lambda: running.server.stopping)
        writer.write(REVIEW[10:])
        status, headers, body = await asyncio.wait_for(answer(reader), 3)
        assert (status, closes(headers), json.loads(body)["response"]["allowed"]) == (
            200,
            True,
            True,
        )
        assert await asyncio.wait_for(reader.read(), 3) == b""  # then the server closes it
        await asyncio.wait_for(stopping, 5)
        writer.close()


async def test_an_idle_connection_and_a_new_one_are_answered_during_the_grace():
    async with serving(plain(grace=1.0)) as running:
        idle_reader, idle = await asyncio.open_connection("127.0.0.1", running.port)
        idle.write(head() + REVIEW)
        first = await answer(idle_reader)
        stopping = asyncio.create_task(running.stop())
        await until(lambda: running.server.stopping)
        idle.write(head() + REVIEW)
        again = await asyncio.wait_for(answer(idle_reader), 3)
        new_reader, new = await asyncio.open_connection("127.0.0.1", running.port)
        new.write(head() + REVIEW)
        fresh = await asyncio.wait_for(answer(new_reader), 3)
        assert [(s, closes(h)) for s, h, _ in (first, again, fresh)] == [
            (200, False),
            (200, True),
            (200, True),
        ]
        await asyncio.wait_for(stopping, 5)
        for writer in (idle, new):
            writer.close()


async def test_the_port_stays_open_for_the_grace_and_closes_after_it():
    async with serving(plain(grace=1.0)) as running:
        stopping = asyncio.create_task(running.stop())
        await until(lambda: running.server.stopping)
        _, during = await asyncio.open_connection("127.0.0.1", running.port)
        during.close()
        await asyncio.wait_for(stopping, 5)
        assert running.server.listening is False
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", running.port)


async def test_the_stop_waits_for_a_review_in_flight():
    async def slow(request: Any, **kwargs: Any) -> dict[str, Any]:
        await asyncio.sleep(0.3)
        return await answering(request, **kwargs)

    async with serving(plain(), slow) as running:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        writer.write(head() + REVIEW)
        await asyncio.sleep(0.05)
        stopping = asyncio.create_task(running.stop())
        status, headers, _ = await asyncio.wait_for(answer(reader), 3)
        assert (status, closes(headers), stopping.done()) == (200, True, False)
        await asyncio.wait_for(stopping, 5)
        writer.close()


async def test_a_renewed_certificate_moves_the_port_to_a_new_listener_without_closing_it(
    tmp_path,
):
    certfile, keyfile = tmp_path / "tls.crt", tmp_path / "tls.key"

    def issue() -> None:
        issued = issue_certificate(["127.0.0.1"], datetime.datetime.now(datetime.UTC))
        keyfile.write_bytes(issued.key)
        certfile.write_bytes(issued.cert)

    issue()
    server = ReviewServer(
        grace=2.0,  # the old connection is answered within it
        addr="127.0.0.1",
        port=free_port(),
        certfile=str(certfile),
        pkeyfile=str(keyfile),
        file_check_interval=0.05,
    )
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    async with serving(server) as running:
        old_reader, old = await asyncio.open_connection("127.0.0.1", running.port, ssl=client)
        issue()
        await asyncio.wait_for(running.task, 3)  # the next client config: the new listener
        refused = 0
        for _ in range(10):
            try:
                _, probe = await asyncio.open_connection("127.0.0.1", running.port, ssl=client)
                probe.close()
            except ConnectionRefusedError:
                refused += 1
        old.write(head() + REVIEW)
        status, headers, _ = await asyncio.wait_for(answer(old_reader), 3)
        assert (refused, status, closes(headers), server.stopping) == (0, 200, True, False)
        old.close()


def test_the_wait_for_reviews_in_flight_is_the_shipped_webhooks_timeout():
    path = (
        pathlib.Path(__file__).parents[2]
        / "manifests/webhook/validating-webhook-configuration.yaml"
    )
    (configuration,) = yaml.safe_load_all(path.read_text())
    timeouts = {w["name"]: w["timeoutSeconds"] for w in configuration["webhooks"]}
    assert timeouts == dict.fromkeys(timeouts, REVIEW_TIMEOUT) and len(timeouts) == 5
