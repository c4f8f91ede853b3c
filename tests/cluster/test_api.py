"""The one transport (``KubeApi``) against the API-server-like emulator: every failure is a typed
error, chosen by the answer's status, carrying the server's message, reason and details; no
answer at all is ``Unreachable`` (``TimedOut`` past the request timeout). Each request is sent
once; a client with a fence asks it before every write and sends none it refuses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    FieldConflict,
    Gone,
    NamespaceTerminating,
    NotFound,
    Refused,
    TimedOut,
    Unreachable,
    api_error,
)
from ome_operator.cluster.leases import NotLeading

CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "default"},
    "data": {"a": "1"},
}


def client(kubeconfig: str) -> k8s_client.ApiClient:
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config(kubeconfig, client_configuration=configuration)
    configuration.retries = False
    return k8s_client.ApiClient(configuration)


def failure(error: ApiError) -> dict[str, Any]:
    return {
        "class": type(error),
        "status": error.status,
        "message": error.message,
        "reason": error.reason,
        "name": error.name,
        "from_server": error.from_server,
    }


async def test_a_missing_object_is_not_found_with_its_name(kubeconfig):
    api = KubeApi(client(kubeconfig))
    with pytest.raises(ApiError) as raised:
        await asyncio.to_thread(api.get, CONFIG_MAP)
    assert failure(raised.value) == {
        "class": NotFound,
        "status": 404,
        "message": 'configmaps "settings" not found',
        "reason": "NotFound",
        "name": "settings",
        "from_server": True,
    }


async def test_a_second_create_is_a_conflict_already_exists(kubeconfig):
    api = KubeApi(client(kubeconfig))
    await asyncio.to_thread(api.create, CONFIG_MAP)
    with pytest.raises(ApiError) as raised:
        await asyncio.to_thread(api.create, CONFIG_MAP)
    assert (type(raised.value), raised.value.status, raised.value.reason) == (
        AlreadyExists,
        409,
        "AlreadyExists",
    )


@pytest.mark.parametrize(
    ("status", "reason", "causes", "kind"),
    [
        pytest.param(409, "AlreadyExists", (), AlreadyExists, id="a create finding the name taken"),
        pytest.param(
            409, "Conflict", (), Conflict, id="a stale resourceVersion is a plain conflict"
        ),
        pytest.param(
            409,
            "Conflict",
            ("FieldManagerConflict",),
            FieldConflict,
            id="an apply changing another manager's fields",
        ),
        pytest.param(
            403,
            "Forbidden",
            ("NamespaceTerminating",),
            NamespaceTerminating,
            id="a create in a namespace being deleted",
        ),
        pytest.param(403, "Forbidden", (), Refused, id="any other refusal"),
    ],
)
def test_answers_are_typed_by_their_reason_and_causes(status, reason, causes, kind):
    error = api_error(status, "m", reason, causes)
    assert type(error) is kind


async def test_deleting_what_is_gone_is_no_failure(kubeconfig):
    api = KubeApi(client(kubeconfig))
    assert await asyncio.to_thread(api.delete, CONFIG_MAP) is None


@pytest.mark.parametrize(
    ("status", "kind", "retriable"),
    [
        pytest.param(400, Refused, False, id="400 bad request is refused"),
        pytest.param(403, Refused, False, id="403 forbidden is refused"),
        pytest.param(413, Refused, False, id="413 too large is refused"),
        pytest.param(422, Refused, False, id="422 invalid is refused"),
        pytest.param(409, Conflict, False, id="409 is a conflict"),
        pytest.param(410, Gone, False, id="410 is gone"),
        pytest.param(429, ApiError, True, id="429 is retriable"),
        pytest.param(500, ApiError, True, id="500 is retriable"),
        pytest.param(503, ApiError, True, id="503 is retriable"),
    ],
)
async def test_each_status_gets_its_class_and_the_servers_message(
    kube, kubeconfig, status, kind, retriable
):
    api = KubeApi(client(kubeconfig))
    kube.inject_fault(status, resource="v1/configmaps", message="said the server")
    with pytest.raises(ApiError) as raised:
        await asyncio.to_thread(api.get, CONFIG_MAP)
    error = raised.value
    assert (type(error), error.status, error.message, error.retriable) == (
        kind,
        status,
        "said the server",
        retriable,
    )


async def test_a_refused_connection_is_unreachable_with_method_and_path():
    configuration = k8s_client.Configuration(host="http://127.0.0.1:9")
    configuration.retries = False
    api = KubeApi(k8s_client.ApiClient(configuration))
    with pytest.raises(ApiError) as raised:
        await asyncio.to_thread(api.get, CONFIG_MAP)
    error = raised.value
    assert (type(error), error.status, error.retriable) == (Unreachable, 0, True)
    assert error.message.startswith("GET /api/v1/namespaces/default/configmaps/settings: ")


async def test_no_answer_within_the_timeout_is_timed_out(kube, kubeconfig):
    api = KubeApi(client(kubeconfig), 0.1)
    kube.inject_fault(None, resource="v1/configmaps", delay=0.5)
    with pytest.raises(TimedOut) as raised:
        await asyncio.to_thread(api.get, CONFIG_MAP)
    assert raised.value.status == 0


@pytest.mark.parametrize(
    ("message", "expected", "from_server"),
    [
        pytest.param("quota exceeded", "quota exceeded", True, id="the server's message"),
        pytest.param(None, "GET /x: HTTP 403", False, id="no message: the fallback"),
        pytest.param("", "GET /x: HTTP 403", False, id="an empty message: the fallback"),
    ],
)
def test_api_error_keeps_the_servers_message_or_says_it_has_none(message, expected, from_server):
    error = api_error(403, message, "Forbidden", fallback="GET /x: HTTP 403")
    assert (type(error), error.message, error.from_server) == (Refused, expected, from_server)


def test_reworded_keeps_the_class_and_every_field():
    error = api_error(422, "spec.x: Invalid", "Invalid", ("FieldValueInvalid",), name="chat")
    copy = error.reworded("cannot write Deployment chat: spec.x: Invalid")
    assert failure(copy) | {"causes": copy.causes} == {
        "class": Refused,
        "status": 422,
        "message": "cannot write Deployment chat: spec.x: Invalid",
        "reason": "Invalid",
        "name": "chat",
        "from_server": True,
        "causes": ("FieldValueInvalid",),
    }


def default_client(kubeconfig: str) -> k8s_client.ApiClient:
    """A client as the operator makes it: the library's default retries left on."""
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config(kubeconfig, client_configuration=configuration)
    return k8s_client.ApiClient(configuration)


def received(kube, method: str) -> list[str]:
    """``METHOD path`` of the requests of ``method`` the server received."""
    return [f"{r.method.name} {r.url.path}" for r in kube if r.method.name == method]


async def test_a_request_that_times_out_is_sent_once(kube, kubeconfig):
    """No retry inside a request (urllib3's default waited three more read timeouts): the
    callers retry with backoff, and a leader must hear of a silent server within its deadline."""
    api = KubeApi(default_client(kubeconfig), 0.2)
    kube.inject_fault(None, resource="v1/configmaps", delay=1.0, times=5)
    with pytest.raises(TimedOut):
        await asyncio.to_thread(api.get, CONFIG_MAP)
    assert received(kube, "GET") == ["GET /api/v1/namespaces/default/configmaps/settings"]


class Fence:
    """Answers the seconds a write may wait, in turn; an exception in turn is raised."""

    def __init__(self, *answers: float | Exception) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    def __call__(self, method: str, path: str) -> float:
        self.asked.append((method, path))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


NOT_LEADING = NotLeading.refusing("POST", "/api/v1/namespaces/default/configmaps", 10.0)
CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"


@pytest.mark.parametrize(
    ("call", "asked"),
    [
        pytest.param(lambda api: api.get(CONFIG_MAP), [], id="a read is not fenced"),
        pytest.param(
            lambda api: api.create(
                {**CONFIG_MAP, "metadata": {**CONFIG_MAP["metadata"], "name": "b"}}
            ),
            [("POST", CONFIG_MAPS)] * 2,
            id="a create is fenced before the request and again at its first send",
        ),
        pytest.param(
            lambda api: api.merge_patch(CONFIG_MAP, {"data": {"a": "2"}}),
            [("PATCH", f"{CONFIG_MAPS}/settings")] * 2,
            id="a patch is fenced",
        ),
        pytest.param(
            lambda api: api.delete(CONFIG_MAP),
            [("DELETE", f"{CONFIG_MAPS}/settings")] * 2,
            id="a delete is fenced",
        ),
    ],
)
async def test_every_write_and_no_read_asks_the_fence(kube, kubeconfig, call, asked):
    await asyncio.to_thread(KubeApi(client(kubeconfig)).create, CONFIG_MAP)
    fence = Fence(30.0)
    await asyncio.to_thread(call, KubeApi(client(kubeconfig), fence=fence))
    assert fence.asked == asked


@pytest.mark.parametrize(
    "answers",
    [
        pytest.param((NOT_LEADING,), id="refused before the request"),
        pytest.param(
            (30.0, NOT_LEADING), id="refused at the first send (the Lease aged in between)"
        ),
    ],
)
async def test_a_write_the_fence_refuses_is_not_sent_nor_counted(kube, kubeconfig, answers):
    counted: list[tuple[str, int]] = []
    api = KubeApi(
        client(kubeconfig), fence=Fence(*answers), on_request=lambda *a: counted.append(a)
    )
    with pytest.raises(NotLeading) as raised:
        await asyncio.to_thread(api.create, CONFIG_MAP)
    assert (str(raised.value), received(kube, "POST"), counted) == (
        "POST /api/v1/namespaces/default/configmaps not sent: "
        "the leader Lease was last renewed 10.0 s ago",
        [],
        [],
    )
    with pytest.raises(NotFound):  # and the client goes on
        await asyncio.to_thread(api.get, CONFIG_MAP)


async def test_a_write_waits_for_its_answer_no_longer_than_the_fence_allows(kube, kubeconfig):
    api = KubeApi(client(kubeconfig), (5, 30), fence=Fence(0.2))
    kube.inject_fault(None, resource="v1/configmaps", method="POST", delay=2.0)
    with pytest.raises(TimedOut):
        await asyncio.to_thread(api.create, CONFIG_MAP)


async def test_every_request_carries_the_user_agent(kube, kubeconfig):
    api = KubeApi(client(kubeconfig), user_agent="ome-operator/0.1.0 (replica-a)")
    await asyncio.to_thread(api.create, CONFIG_MAP)
    await asyncio.to_thread(api.get, CONFIG_MAP)
    assert [r.headers.get("User-Agent") for r in kube] == ["ome-operator/0.1.0 (replica-a)"] * 2
