"""Readers answer alike whether objects live in a cluster (the emulator) or in manifests."""

import asyncio
import pathlib
from typing import Any

import kmock
import pytest
import yaml

from ome_operator.cluster.connection import ConnectionFlags
from ome_operator.cluster.manifests import ManifestReader
from ome_operator.cluster.objects import (
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    CLUSTER_SERVING_RUNTIME,
    INFERENCE_SERVICE,
    SERVING_RUNTIME,
    NotFoundError,
    ObjectReader,
    ReadError,
    ReadTimeoutError,
    TooManyObjectsError,
)
from ome_operator.cluster.reading import ClusterReader, api_client_from_flags
from tests.support.kube_access import apply_object


def manifest(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": {"n": name}}


OBJECTS = [
    *(
        manifest("ClusterServingRuntime", name)
        for name in ("vllm-e", "vllm-c", "vllm-a", "vllm-d", "vllm-b")
    ),
    manifest("ServingRuntime", "sr-b", "default"),
    manifest("ServingRuntime", "sr-a", "default"),
    manifest("ServingRuntime", "sr-c", "team-a"),
    manifest("InferenceService", "llama", "team-a"),
    manifest("InferenceService", "llama", "default"),
    manifest("BaseModel", "llama-3-2-3b-instruct", "default"),
    manifest("ClusterBaseModel", "llama-3-2-3b-instruct"),
]


def essence(obj: dict[str, Any]) -> tuple[str, str, str | None, str, dict[str, Any]]:
    """What both readers must agree on; a cluster adds server metadata besides."""
    meta = obj["metadata"]
    return obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"], obj["spec"]


def names(objects: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    return [(obj["metadata"].get("namespace"), obj["metadata"]["name"]) for obj in objects]


@pytest.fixture
def cluster_reader(kubeconfig: str) -> ClusterReader:
    reader, _ = ClusterReader.from_flags(ConnectionFlags(kubeconfig=kubeconfig))
    return reader


@pytest.fixture(params=["cluster", "manifests"])
async def reader(request, kube, cluster_reader) -> ObjectReader:
    if request.param == "manifests":
        return ManifestReader(OBJECTS)
    for obj in OBJECTS:
        await apply_object(kube, obj)
    return cluster_reader


# The same rules, for both readers.


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "expected"),
    [
        pytest.param(
            INFERENCE_SERVICE,
            "team-a",
            "llama",
            OBJECTS[8],
            id="a namespaced object is found in its namespace",
        ),
        pytest.param(
            BASE_MODEL, "default", "llama-3-2-3b-instruct", OBJECTS[10], id="a namespaced model"
        ),
        pytest.param(
            CLUSTER_BASE_MODEL,
            None,
            "llama-3-2-3b-instruct",
            OBJECTS[11],
            id="a cluster-scoped object",
        ),
        pytest.param(
            CLUSTER_BASE_MODEL,
            "team-a",
            "llama-3-2-3b-instruct",
            OBJECTS[11],
            id="a cluster-scoped object ignores the namespace",
        ),
    ],
)
async def test_get_finds_the_object(reader, resource, namespace, name, expected):
    found = await asyncio.to_thread(reader.get, resource, namespace, name)
    assert essence(found) == essence(expected)


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "message"),
    [
        pytest.param(
            CLUSTER_BASE_MODEL,
            None,
            "x",
            'clusterbasemodels.ome.io "x" not found',
            id="a missing cluster-scoped object",
        ),
        pytest.param(
            INFERENCE_SERVICE,
            "team-b",
            "llama",
            'inferenceservices.ome.io "llama" not found',
            id="an object in another namespace",
        ),
        pytest.param(
            SERVING_RUNTIME,
            "default",
            "vllm-a",
            'servingruntimes.ome.io "vllm-a" not found',
            id="an object of another kind",
        ),
    ],
)
async def test_get_raises_the_api_servers_not_found_text(
    reader, resource, namespace, name, message
):
    with pytest.raises(NotFoundError) as raised:
        await asyncio.to_thread(reader.get, resource, namespace, name)
    assert (str(raised.value), raised.value.resource, raised.value.name) == (
        message,
        resource,
        name,
    )


@pytest.mark.parametrize(
    ("resource", "namespace", "page_size", "expected"),
    [
        pytest.param(
            CLUSTER_SERVING_RUNTIME,
            None,
            500,
            [(None, f"vllm-{c}") for c in "abcde"],
            id="cluster-scoped, sorted by name",
        ),
        pytest.param(
            CLUSTER_SERVING_RUNTIME,
            None,
            2,
            [(None, f"vllm-{c}") for c in "abcde"],
            id="three pages of two read as one list",
        ),
        pytest.param(
            CLUSTER_SERVING_RUNTIME,
            "default",
            500,
            [(None, f"vllm-{c}") for c in "abcde"],
            id="cluster-scoped ignores the namespace",
        ),
        pytest.param(
            SERVING_RUNTIME,
            "default",
            500,
            [("default", "sr-a"), ("default", "sr-b")],
            id="namespaced, one namespace",
        ),
        pytest.param(
            SERVING_RUNTIME,
            None,
            1,
            [("default", "sr-a"), ("default", "sr-b"), ("team-a", "sr-c")],
            id="namespaced, all namespaces by namespace then name",
        ),
        pytest.param(BASE_MODEL, "team-a", 500, [], id="no objects"),
    ],
)
async def test_list_returns_objects_in_api_order(reader, resource, namespace, page_size, expected):
    found = await asyncio.to_thread(reader.list, resource, namespace, page_size=page_size)
    assert names(found) == expected


@pytest.mark.parametrize(
    ("limit", "page_size", "outcome"),
    [
        pytest.param(5, 2, 5, id="exactly the limit is fine"),
        pytest.param(5, 500, 5, id="exactly the limit in one page is fine"),
        pytest.param(
            4,
            2,
            "more than 4 clusterservingruntimes.ome.io objects",
            id="one over the limit across pages",
        ),
        pytest.param(
            4,
            500,
            "more than 4 clusterservingruntimes.ome.io objects",
            id="one over the limit in one page",
        ),
    ],
)
async def test_list_refuses_more_than_the_limit(reader, limit, page_size, outcome):
    args = (CLUSTER_SERVING_RUNTIME, None)
    try:
        result: int | str = len(
            await asyncio.to_thread(reader.list, *args, page_size=page_size, limit=limit)
        )
    except TooManyObjectsError as exc:
        assert (exc.resource, exc.limit) == (CLUSTER_SERVING_RUNTIME, limit)
        result = str(exc)
    assert result == outcome


async def test_get_of_a_namespaced_object_needs_a_namespace(reader):
    with pytest.raises(ValueError) as raised:
        await asyncio.to_thread(reader.get, INFERENCE_SERVICE, None, "llama")
    assert str(raised.value) == "a namespace is required to get inferenceservices.ome.io"


# The cluster reader's requests and failures.


async def test_list_pages_with_continue_and_stops_at_the_limit(kube, cluster_reader):
    for obj in OBJECTS[:5]:
        await apply_object(kube, obj)
    lists = kube[kube.action.LIST, kube.resource("ome.io/v1beta1/clusterservingruntimes")]
    await asyncio.to_thread(cluster_reader.list, CLUSTER_SERVING_RUNTIME, None, page_size=2)
    assert [request.params for request in lists] == [
        {"limit": "2"},
        {"limit": "2", "continue": lists[1].params["continue"]},
        {"limit": "2", "continue": lists[2].params["continue"]},
    ]
    with pytest.raises(TooManyObjectsError):
        await asyncio.to_thread(
            cluster_reader.list, CLUSTER_SERVING_RUNTIME, None, page_size=2, limit=3
        )
    assert len(lists) == 5  # two more pages: the second one's continue token proves the excess


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        pytest.param(
            {"status": 500, "message": "etcdserver: leader changed"},
            "etcdserver: leader changed",
            id="the API server's message",
        ),
        pytest.param(
            {
                "status": 403,
                "message": 'clusterbasemodels.ome.io "x" is forbidden: User "jane" cannot get',
            },
            'clusterbasemodels.ome.io "x" is forbidden: User "jane" cannot get',
            id="a forbidden get keeps the API server's text",
        ),
        pytest.param(
            {"status": 500}, "injected fault: HTTP 500", id="a 500 with the default message"
        ),
    ],
)
async def test_api_failures_become_read_errors_with_the_api_servers_message(
    kube, cluster_reader, fault, message
):
    kube.inject_fault(**fault, resource="ome.io/v1beta1/clusterbasemodels")
    with pytest.raises(ReadError) as raised:
        await asyncio.to_thread(cluster_reader.get, CLUSTER_BASE_MODEL, None, "x")
    assert (type(raised.value), str(raised.value)) == (ReadError, message)


async def test_an_unserved_resource_is_a_read_error_not_a_missing_object(kube, cluster_reader):
    del kube.resources["ome.io/v1beta1/clusterbasemodels"]
    with pytest.raises(ReadError) as raised:
        await asyncio.to_thread(cluster_reader.get, CLUSTER_BASE_MODEL, None, "x")
    assert (type(raised.value), str(raised.value)) == (
        ReadError,
        "the server could not find the requested resource",
    )


async def test_a_slow_answer_is_a_read_timeout(kube, kubeconfig):
    flags = ConnectionFlags(kubeconfig=kubeconfig, request_timeout="100ms")
    reader, _ = ClusterReader.from_flags(flags)
    kube.inject_fault(None, action="list", delay=0.5)
    with pytest.raises(ReadTimeoutError) as raised:
        await asyncio.to_thread(reader.list, SERVING_RUNTIME, "default")
    assert str(raised.value) == f"Unable to connect to the server: {kube.url.authority} timed out"


async def test_a_refused_connection_is_a_read_error(kubeconfig):
    reader, _ = ClusterReader.from_flags(
        ConnectionFlags(kubeconfig=kubeconfig, server="http://127.0.0.1:9")
    )
    with pytest.raises(ReadError) as raised:
        await asyncio.to_thread(reader.list, SERVING_RUNTIME, "default")
    assert str(raised.value) == (
        "The connection to the server 127.0.0.1:9 was refused - did you specify the right host "
        "or port?"
    )


async def test_flags_set_credentials_and_impersonation_headers(kube, kubeconfig):
    flags = ConnectionFlags(
        kubeconfig=kubeconfig,
        token="override",
        as_user="jane",
        as_uid="42",
        as_groups=("devs", "ops"),
        as_user_extra=("scopes=view", "scopes=edit", "team name=ml"),
    )
    reader, _ = ClusterReader.from_flags(flags)
    await asyncio.to_thread(reader.list, SERVING_RUNTIME, "default")
    headers = list(kube)[-1]._raw_request.headers
    sent = {name: headers.getall(name) for name in sorted({*headers} - {"Host", "User-Agent"})}
    assert sent == {
        "Accept": ["application/json"],
        "Accept-Encoding": ["identity"],
        "Authorization": ["Bearer override"],
        "Impersonate-Extra-scopes": ["view", "edit"],
        "Impersonate-Extra-team%20name": ["ml"],
        "Impersonate-Group": ["devs", "ops"],
        "Impersonate-Uid": ["42"],
        "Impersonate-User": ["jane"],
    }


# Which cluster and namespace the flags select.


@pytest.fixture
def two_contexts(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kubeconfig whose current context has namespace team-a; context "bare" has none."""
    cluster = {"server": "https://k8s.example:6443", "insecure-skip-tls-verify": True}
    config = {
        "clusters": [{"name": "main", "cluster": cluster}],
        "users": [{"name": "admin", "user": {"token": "t0k"}}, {"name": "viewer", "user": {}}],
        "contexts": [
            {
                "name": "work",
                "context": {"cluster": "main", "user": "admin", "namespace": "team-a"},
            },
            {"name": "bare", "context": {"cluster": "main", "user": "admin"}},
        ],
        "current-context": "work",
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return str(path)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param(
            {},
            ("https://k8s.example:6443", "team-a", "Bearer t0k"),
            id="the current context's namespace",
        ),
        pytest.param(
            {"namespace": "ns-flag"},
            ("https://k8s.example:6443", "ns-flag", "Bearer t0k"),
            id="-n wins over the context's namespace",
        ),
        pytest.param(
            {"context": "bare"},
            ("https://k8s.example:6443", "default", "Bearer t0k"),
            id="a context without a namespace means default",
        ),
        pytest.param(
            {"server": "http://127.0.0.1:8080/"},
            ("http://127.0.0.1:8080", "team-a", "Bearer t0k"),
            id="--server replaces the cluster's server",
        ),
        pytest.param(
            {"user": "viewer"},
            ("https://k8s.example:6443", "team-a", None),
            id="--user replaces the context's user",
        ),
        pytest.param(
            {"token": "abc"},
            ("https://k8s.example:6443", "team-a", "Bearer abc"),
            id="--token replaces the user's credentials",
        ),
    ],
)
def test_flags_select_server_namespace_and_credentials(two_contexts, flags, expected):
    api_client, namespace = api_client_from_flags(ConnectionFlags(kubeconfig=two_contexts, **flags))
    configuration = api_client.configuration
    token = configuration.auth_settings().get("BearerToken", {}).get("value")
    assert (configuration.host, namespace, token) == expected
    assert configuration.verify_ssl is False


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param({"context": "nope"}, 'context "nope" does not exist', id="an unknown context"),
        pytest.param(
            {"cluster": "nope"}, 'no server found for cluster "nope"', id="an unknown cluster"
        ),
        pytest.param({"user": "nope"}, 'auth info "nope" does not exist', id="an unknown user"),
        pytest.param(
            {"kubeconfig": "/nope/config"},
            "stat /nope/config: no such file or directory",
            id="a missing --kubeconfig",
        ),
        pytest.param(
            {"as_groups": ("devs",)},
            "requesting uid, groups or user-extra without impersonating a user",
            id="groups without a user to impersonate",
        ),
        pytest.param(
            {"as_user": "jane", "as_user_extra": ("novalue",)},
            'invalid --as-user-extra "novalue": expected key=value',
            id="a user extra without a value",
        ),
    ],
)
def test_bad_connection_flags_are_read_errors(two_contexts, flags, message):
    with pytest.raises(ReadError) as raised:
        api_client_from_flags(ConnectionFlags(**{"kubeconfig": two_contexts, **flags}))
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("flags", "outcome"),
    [
        pytest.param(
            {"server": "http://10.0.0.1:6443"},
            ("http://10.0.0.1:6443", "default"),
            id="--server alone is enough",
        ),
        pytest.param(
            {},
            "no cluster to connect to: set a current context in the kubeconfig, "
            "or pass --context, --cluster or --server",
            id="nothing to connect to",
        ),
    ],
)
def test_without_any_kubeconfig(tmp_path, monkeypatch, flags, outcome):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    try:
        api_client, namespace = api_client_from_flags(ConnectionFlags(**flags))
        result: tuple[str, str] | str = (api_client.configuration.host, namespace)
    except ReadError as exc:
        result = str(exc)
    assert result == outcome


def test_an_unparsable_kubeconfig_is_a_read_error(tmp_path):
    path = tmp_path / "config"
    path.write_text("clusters: [unclosed\n")
    with pytest.raises(ReadError, match=r"^invalid kubeconfig: "):
        api_client_from_flags(ConnectionFlags(kubeconfig=str(path)))


# An answer that is not what an API server sends is a read error, never a traceback.

CBM = "ome.io/v1beta1/clusterbasemodels"


def deep_answer(lists: int) -> bytes:
    """A ClusterBaseModel "x" whose spec is that many lists (one level more in all)."""
    body = "[" * lists + "]" * lists
    return (
        '{"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel", "metadata": {"name": "x"},'
        f' "spec": {body}}}'
    ).encode()


@pytest.mark.kmock(strict=False)
@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(
            b"nonsense",
            "the server's answer is not JSON: Expecting value: line 1 column 1 (char 0)",
            id="not JSON",
        ),
        pytest.param(
            b'{"kind": "\xff"}',
            "the server's answer is not JSON: 'utf-8' codec can't decode byte 0xff in position "
            "10: invalid start byte",
            id="not UTF-8",
        ),
        pytest.param(
            deep_answer(10_000),
            "the server's answer is nested more than 10000 levels deep",
            id="nested deeper than an API server stores",
        ),
        pytest.param(b"[1]", "the server's answer is not a mapping", id="a list, not an object"),
        pytest.param(
            b'{"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel",'
            b' "metadata": {"name": [1]}}',
            "the server's answer: metadata.name: must be a string (got [1])",
            id="a name that is not a string",
        ),
        pytest.param(
            b'{"apiVersion": "ome.io/v1beta1", "kind": 5}',
            "the server's answer: kind: must be a string (got 5)",
            id="a kind that is not a string",
        ),
    ],
)
async def test_a_malformed_get_answer_is_a_read_error(kube, cluster_reader, answer, message):
    kube[kmock.action.FETCH, kmock.resource(CBM)] << answer
    with pytest.raises(ReadError) as raised:
        await asyncio.to_thread(cluster_reader.get, CLUSTER_BASE_MODEL, None, "x")
    assert (type(raised.value), str(raised.value)) == (ReadError, message)


@pytest.mark.kmock(strict=False)
async def test_an_answer_as_deep_as_an_api_server_stores_is_read(kube, cluster_reader):
    kube[kmock.action.FETCH, kmock.resource(CBM)] << deep_answer(9_999)
    found = await asyncio.to_thread(cluster_reader.get, CLUSTER_BASE_MODEL, None, "x")
    assert found["metadata"] == {"name": "x"}


@pytest.mark.kmock(strict=False)
@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(
            b'{"items": {}}', "the server's answer: items: must be a list (got {})", id="items"
        ),
        pytest.param(
            b'{"items": [], "metadata": []}',
            "the server's answer: metadata: must be an object (got [])",
            id="list metadata",
        ),
        pytest.param(
            b'{"items": [], "metadata": {"continue": 5}}',
            "the server's answer: metadata.continue: must be a string (got 5)",
            id="a continue token that is not a string",
        ),
        pytest.param(
            b'{"items": [{"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel",'
            b' "metadata": {"name": "a"}}, 7]}',
            "the server's answer item 2 is not a mapping",
            id="an item that is not an object",
        ),
        pytest.param(
            b'{"items": [{"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel",'
            b' "metadata": {"namespace": {}}}]}',
            "the server's answer item 1: metadata.namespace: must be a string (got {})",
            id="an item whose namespace is not a string",
        ),
    ],
)
async def test_a_malformed_list_answer_is_a_read_error(kube, cluster_reader, answer, message):
    kube[kmock.action.LIST, kmock.resource(CBM)] << answer
    with pytest.raises(ReadError) as raised:
        await asyncio.to_thread(cluster_reader.list, CLUSTER_BASE_MODEL, None)
    assert (type(raised.value), str(raised.value)) == (ReadError, message)


@pytest.mark.kmock(strict=False)
async def test_an_error_whose_body_is_too_deep_for_a_status_keeps_the_http_status(
    kube, cluster_reader
):
    kube[kmock.action.FETCH, kmock.resource(CBM)] << kmock.Response(
        status=500, payload=deep_answer(20_000)
    )
    with pytest.raises(ReadError) as raised:
        await asyncio.to_thread(cluster_reader.get, CLUSTER_BASE_MODEL, None, "x")
    assert str(raised.value) == "the server responded with HTTP 500 Internal Server Error"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "- a\n- list\n",
            "invalid kubeconfig: TypeError: list indices must be integers or slices, not str",
            id="a kubeconfig that is a list",
        ),
        pytest.param(
            "contexts: 5\n",
            "invalid kubeconfig: TypeError: 'int' object is not iterable",
            id="contexts that are a number",
        ),
        pytest.param(
            "a:\n" + "- " * 40_000 + "x\n",
            "invalid kubeconfig: RecursionError: maximum recursion depth exceeded",
            id="a kubeconfig nested past the YAML loader's recursion",
        ),
    ],
)
def test_a_kubeconfig_of_the_wrong_shape_is_a_read_error(tmp_path, text, message):
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(ReadError) as raised:
        api_client_from_flags(ConnectionFlags(kubeconfig=str(path)))
    assert str(raised.value) == message
