"""The one transport (``KubeApi``) against the API-server-like emulator: every failure is a typed
error, chosen by the answer's status, carrying the server's message, reason and details; no
answer at all is ``Unreachable`` (``TimedOut`` past the request timeout)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.errors import (
    ApiError,
    Conflict,
    Gone,
    NotFound,
    Refused,
    TimedOut,
    Unreachable,
    api_error,
)

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
        Conflict,
        409,
        "AlreadyExists",
    )


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
