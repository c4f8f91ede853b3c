"""The emulator answers as an API server would, through the real clients (kubernetes, kopf).

The sync ``kubernetes`` client runs in a thread (``asyncio.to_thread``): this event loop
serves the emulator (testing-stack.md pitfall 15).
"""

import asyncio
import json
from typing import Any
from unittest import mock

import kopf
import kubernetes
import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from tests.support.kube_access import apply_object, eventually
from tests.support.kube_emulator import ApiServerLikeEmulator

ISVC = "ome.io/v1beta1/inferenceservices"
ISVC_PATH = "/apis/ome.io/v1beta1/namespaces/default/inferenceservices"
CSR_PATH = "/apis/ome.io/v1beta1/clusterservingruntimes"
OME = ("ome.io", "v1beta1")


def make_isvc(
    name: str, namespace: str = "default", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        metadata["labels"] = labels
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": metadata,
        "spec": {"model": {"name": "llama"}},
    }


@pytest.fixture
def api(kubeconfig: str) -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(kubernetes.config.new_client_from_config(kubeconfig))


def call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """Run one sync client call in a thread; never on the loop that serves the emulator."""
    return asyncio.to_thread(method, *args, **kwargs)


async def api_error(method: Any, *args: Any, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ApiException) as raised:
        await call(method, *args, **kwargs)
    return raised.value.status, json.loads(raised.value.body)["message"]


async def read_events(response: Any, count: int, *, wait: float = 2.0) -> list[tuple[str, str]]:
    """The next ``count`` watch events of a streaming response as (type, name) pairs."""
    events = []
    async with asyncio.timeout(wait):
        while len(events) < count:
            line = await response.content.readline()
            if line.strip():
                event = json.loads(line)
                events.append((event["type"], event["object"]["metadata"]["name"]))
    return events


# Metadata, resourceVersion and generation.


async def test_create_stamps_server_metadata_and_the_namespace_from_the_url(kube, api):
    body = make_isvc("llama")
    del body["metadata"]["namespace"]
    created = await call(
        api.create_namespaced_custom_object, *OME, "default", "inferenceservices", body
    )
    assert created == {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "llama",
            "namespace": "default",
            "uid": mock.ANY,
            "creationTimestamp": mock.ANY,
            "generation": 1,
            "resourceVersion": "1",
            "managedFields": [
                {
                    "manager": "OpenAPI-Generator",  # the client's User-Agent, up to its "/"
                    "operation": "Update",
                    "apiVersion": "ome.io/v1beta1",
                    "time": mock.ANY,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {".": {}, "f:model": {".": {}, "f:name": {}}}},
                }
            ],
        },
        "spec": {"model": {"name": "llama"}},
    }
    assert kube.objects[ISVC, "default", "llama"] == created


@pytest.mark.parametrize(
    ("write", "body", "expected"),
    [
        pytest.param(
            "patch",
            {"spec": {"model": {"name": "other"}}},
            (2, "2"),
            id="a spec change bumps generation and resourceVersion",
        ),
        pytest.param(
            "patch",
            {"metadata": {"labels": {"a": "b"}}},
            (1, "2"),
            id="a metadata change bumps only resourceVersion",
        ),
        pytest.param(
            "patch",
            {"status": {"phase": "Ready"}},
            (1, "1"),
            id="status written to the main resource is ignored",
        ),
        pytest.param(
            "status",
            {"status": {"phase": "Ready"}},
            (1, "2"),
            id="a status change through /status bumps only resourceVersion",
        ),
        pytest.param(
            "status",
            {"spec": {"model": {"name": "other"}}},
            (1, "1"),
            id="a spec change through /status is ignored",
        ),
        pytest.param(
            "patch",
            {"spec": {"model": {"name": "llama"}}},
            (1, "1"),
            id="a no-op patch bumps nothing",
        ),
        pytest.param(
            "patch",
            {"metadata": {"uid": "x"}},
            (1, "1"),
            id="server-owned metadata cannot be patched",
        ),
    ],
)
async def test_writes_bump_generation_and_resource_version(kube, api, write, body, expected):
    await apply_object(kube, make_isvc("llama"))
    method = {
        "patch": api.patch_namespaced_custom_object,
        "status": api.patch_namespaced_custom_object_status,
    }[write]
    answer = await call(method, *OME, "default", "inferenceservices", "llama", body)
    meta = kube.objects[ISVC, "default", "llama"]["metadata"]
    assert (meta["generation"], meta["resourceVersion"]) == expected
    assert answer == kube.objects[ISVC, "default", "llama"]


async def test_generate_name_gives_each_object_a_unique_suffix(kube, api):
    body = make_isvc("")
    body["metadata"] = {"generateName": "llama-"}
    args = (*OME, "default", "inferenceservices", body)
    first = await call(api.create_namespaced_custom_object, *args)
    second = await call(api.create_namespaced_custom_object, *args)
    names = [first["metadata"]["name"], second["metadata"]["name"]]
    assert [name[: -len("xxxxx")] for name in names] == ["llama-", "llama-"]
    assert names[0] != names[1]


async def test_create_without_name_or_generate_name_is_invalid(kube, api):
    body = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "metadata": {}}
    status, message = await api_error(
        api.create_namespaced_custom_object, *OME, "default", "inferenceservices", body
    )
    assert (status, message) == (
        422,
        "metadata.name: Required value: name or generateName is required",
    )


async def test_a_duplicate_create_is_a_conflict(kube, api):
    await apply_object(kube, make_isvc("llama"))
    status, message = await api_error(
        api.create_namespaced_custom_object,
        *OME,
        "default",
        "inferenceservices",
        make_isvc("llama"),
    )
    assert (status, message) == (409, 'inferenceservices.ome.io "llama" already exists')


# JSON patch and PUT.


async def test_a_failed_json_patch_test_is_422_and_changes_nothing(kube, api):
    await apply_object(kube, make_isvc("llama"))
    patch = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "999"},
        {"op": "add", "path": "/metadata/finalizers", "value": ["ome.io/finalizer"]},
    ]
    status, _ = await api_error(
        api.patch_namespaced_custom_object, *OME, "default", "inferenceservices", "llama", patch
    )
    assert status == 422
    assert len(kube.objects[ISVC, "default", "llama"].history) == 1


async def test_a_passing_json_patch_test_applies_the_patch(kube, api):
    await apply_object(kube, make_isvc("llama"))
    patch = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
        {"op": "add", "path": "/metadata/finalizers", "value": ["ome.io/finalizer"]},
    ]
    await call(
        api.patch_namespaced_custom_object, *OME, "default", "inferenceservices", "llama", patch
    )
    assert kube.objects[ISVC, "default", "llama"]["metadata"] >= {
        "finalizers": ["ome.io/finalizer"],
        "resourceVersion": "2",
    }


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}
POD_PATH = "/api/v1/namespaces/default/pods/p"


@pytest.mark.parametrize(
    ("version", "status"),
    [
        pytest.param("1", 200, id="the stored version: applied"),
        pytest.param("7", 409, id="another version: a conflict, nothing changed"),
    ],
)
async def test_a_patch_naming_a_resource_version_is_a_precondition(kube, version, status):
    await apply_object(kube, POD)
    body = {"metadata": {"resourceVersion": version, "labels": {"a": "b"}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    async with kube.patch(POD_PATH, json=body, headers=headers) as response:
        assert response.status == status
    labels = kube.objects["v1/pods", "default", "p"]["metadata"].get("labels")
    assert labels == ({"a": "b"} if status == 200 else None)


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(
            [{"type": "ome.io/serving", "status": "True"}],
            [
                {"type": "ContainersReady", "status": "True", "reason": "x"},
                {"type": "ome.io/serving", "status": "True"},
            ],
            id="a condition of a new type is appended",
        ),
        pytest.param(
            [{"type": "ContainersReady", "status": "False"}],
            [{"type": "ContainersReady", "status": "False", "reason": "x"}],
            id="a condition of the same type is merged",
        ),
    ],
)
async def test_a_strategic_merge_patch_merges_conditions_by_type(kube, patch, expected):
    await apply_object(kube, POD)
    ready = {"type": "ContainersReady", "status": "True", "reason": "x"}
    headers = {"Content-Type": "application/merge-patch+json"}
    async with kube.patch(
        f"{POD_PATH}/status", json={"status": {"conditions": [ready]}}, headers=headers
    ):
        pass
    headers = {"Content-Type": "application/strategic-merge-patch+json"}
    async with kube.patch(
        f"{POD_PATH}/status", json={"status": {"conditions": patch}}, headers=headers
    ) as response:
        assert response.status == 200
    assert kube.objects["v1/pods", "default", "p"]["status"]["conditions"] == expected


@pytest.mark.parametrize(
    ("uid", "status"),
    [
        pytest.param("the-same", 200, id="the uid of the object: deleted"),
        pytest.param("another", 409, id="another uid: a conflict, nothing deleted"),
    ],
)
async def test_delete_honours_a_uid_precondition(kube, uid, status):
    created = await apply_object(kube, POD)
    sent = created["metadata"]["uid"] if uid == "the-same" else "another"
    async with kube.delete(POD_PATH, json={"preconditions": {"uid": sent}}) as response:
        assert response.status == status
    assert kube.objects["v1/pods", "default", "p"].deleted is (status == 200)


@pytest.mark.parametrize(
    ("sent_rv", "outcome"),
    [
        pytest.param("1", (None, "2"), id="a replace at the current resourceVersion is stored"),
        pytest.param(None, (None, "2"), id="a replace without resourceVersion is stored"),
        pytest.param("0", (409, "1"), id="a replace at a stale resourceVersion is a conflict"),
    ],
)
async def test_put_replaces_with_a_resource_version_check(kube, api, sent_rv, outcome):
    await apply_object(kube, make_isvc("llama"))
    body = make_isvc("llama")
    body["spec"] = {"model": {"name": "other"}}
    if sent_rv is not None:
        body["metadata"]["resourceVersion"] = sent_rv
    method = api.replace_namespaced_custom_object
    args = (*OME, "default", "inferenceservices", "llama", body)
    status = None
    try:
        await call(method, *args)
    except ApiException as exc:
        status = exc.status
    assert (
        status,
        kube.objects[ISVC, "default", "llama"]["metadata"]["resourceVersion"],
    ) == outcome


async def test_delete_waits_for_finalizers_then_the_watch_sees_deleted(kube, api):
    body = make_isvc("llama")
    body["metadata"]["finalizers"] = ["ome.io/finalizer"]
    created = await apply_object(kube, body)
    async with kube.get(ISVC_PATH, params={"watch": "true", "resourceVersion": "1"}) as watch:
        await call(
            api.delete_namespaced_custom_object, *OME, "default", "inferenceservices", "llama"
        )
        assert kube.objects[ISVC, "default", "llama"]["metadata"]["deletionTimestamp"]
        unblock = {"metadata": {"finalizers": None}}
        await call(
            api.patch_namespaced_custom_object,
            *OME,
            "default",
            "inferenceservices",
            "llama",
            unblock,
        )
        assert await read_events(watch, 2) == [("MODIFIED", "llama"), ("DELETED", "llama")]
    assert kube.objects[ISVC, "default", "llama"].deleted
    assert kube.objects[ISVC, "default", "llama"].history[:1] == [created]


# Errors.


async def test_a_missing_object_answers_the_api_servers_not_found_text(kube, api):
    status, message = await api_error(
        api.get_cluster_custom_object, *OME, "clusterbasemodels", "llama-3-2-3b-instruct"
    )
    assert (status, message) == (404, 'clusterbasemodels.ome.io "llama-3-2-3b-instruct" not found')


async def test_an_undeclared_resource_is_not_found(kube, api):
    status, message = await api_error(api.list_cluster_custom_object, "ome.io", "v1beta1", "nopes")
    assert (status, message) == (404, "the server could not find the requested resource")


# Selectors, paging.


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        pytest.param({"labelSelector": "tier=gpu"}, ["a", "b"], id="label equality"),
        pytest.param(
            {"labelSelector": "tier==gpu,size=big"}, ["b"], id="label equalities combine with and"
        ),
        pytest.param(
            {"labelSelector": "tier!=gpu"},
            ["c", "d"],
            id="label inequality includes objects without the label",
        ),
        pytest.param({"labelSelector": "size"}, ["b", "c"], id="label exists"),
        pytest.param({"labelSelector": "!size"}, ["a", "d"], id="label does not exist"),
        pytest.param({"labelSelector": "tier in (cpu, gpu)"}, ["a", "b", "c"], id="label in a set"),
        pytest.param({"labelSelector": "tier notin (gpu)"}, ["c", "d"], id="label not in a set"),
        pytest.param({"fieldSelector": "metadata.name=c"}, ["c"], id="field metadata.name"),
        pytest.param(
            {"fieldSelector": "metadata.name!=c"},
            ["a", "b", "d"],
            id="field metadata.name inequality",
        ),
        pytest.param(
            {"fieldSelector": "metadata.namespace=team-a"}, ["d"], id="field metadata.namespace"
        ),
        pytest.param(
            {"labelSelector": "tier=gpu", "fieldSelector": "metadata.name=b"},
            ["b"],
            id="label and field selectors combine",
        ),
    ],
)
async def test_list_applies_label_and_field_selectors(kube, params, expected):
    await apply_object(kube, make_isvc("a", labels={"tier": "gpu"}))
    await apply_object(kube, make_isvc("b", labels={"tier": "gpu", "size": "big"}))
    await apply_object(kube, make_isvc("c", labels={"tier": "cpu", "size": "small"}))
    await apply_object(kube, make_isvc("d", namespace="team-a"))
    async with kube.get("/apis/ome.io/v1beta1/inferenceservices", params=params) as response:
        answer = await response.json()
    assert [item["metadata"]["name"] for item in answer["items"]] == expected


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"fieldSelector": "spec.model=x"},
            "field label not supported: spec.model",
            id="an unsupported field",
        ),
        pytest.param(
            {"labelSelector": "!a=b"},
            "unable to parse requirement: '!a=b'",
            id="a malformed label term",
        ),
        pytest.param(
            {"continue": "garbage"},
            "continue key is not valid: garbage",
            id="a malformed continue token",
        ),
    ],
)
async def test_list_rejects_what_the_api_server_rejects(kube, params, message):
    async with kube.get(ISVC_PATH, params=params) as response:
        assert (response.status, (await response.json())["message"]) == (400, message)


async def test_list_pages_with_limit_and_continue(kube, api):
    for name in "edcba":
        await apply_object(kube, make_isvc(name))
    pages, token = [], None
    while True:
        extra = {"_continue": token} if token else {}
        page = await call(
            api.list_namespaced_custom_object,
            *OME,
            "default",
            "inferenceservices",
            limit=2,
            **extra,
        )
        names = [item["metadata"]["name"] for item in page["items"]]
        pages.append((names, page["metadata"].get("remainingItemCount")))
        token = page["metadata"].get("continue")
        if not token:
            break
    assert pages == [(["a", "b"], 3), (["c", "d"], 1), (["e"], None)]
    assert len(kube[kube.action.LIST, kube.resource(ISVC)]) == 3


# Watch.


async def test_watch_from_a_resource_version_replays_only_newer_events(kube, api):
    await apply_object(kube, make_isvc("old"))
    await apply_object(kube, make_isvc("changed"))
    listed = await call(api.list_namespaced_custom_object, *OME, "default", "inferenceservices")
    await apply_object(kube, make_isvc("new"))
    relabel = {"metadata": {"labels": {"x": "y"}}}
    await call(
        api.patch_namespaced_custom_object, *OME, "default", "inferenceservices", "changed", relabel
    )
    since = listed["metadata"]["resourceVersion"]
    async with kube.get(ISVC_PATH, params={"watch": "true", "resourceVersion": since}) as watch:
        assert await read_events(watch, 2) == [("ADDED", "new"), ("MODIFIED", "changed")]
        await apply_object(kube, make_isvc("later"))
        assert await read_events(watch, 1) == [("ADDED", "later")]


async def test_watch_without_a_resource_version_starts_with_the_current_objects(kube):
    await apply_object(kube, make_isvc("b"))
    await apply_object(kube, make_isvc("a"))
    async with kube.get(ISVC_PATH, params={"watch": "true"}) as watch:
        assert await read_events(watch, 2) == [("ADDED", "a"), ("ADDED", "b")]


async def test_watch_applies_selectors_to_events(kube):
    params = {"watch": "true", "resourceVersion": "0", "labelSelector": "tier=gpu"}
    async with kube.get(ISVC_PATH, params=params) as watch:
        await apply_object(kube, make_isvc("cpu", labels={"tier": "cpu"}))
        await apply_object(kube, make_isvc("gpu", labels={"tier": "gpu"}))
        assert await read_events(watch, 1) == [("ADDED", "gpu")]


async def test_watch_ends_after_timeout_seconds(kube):
    params = {"watch": "true", "timeoutSeconds": "1"}
    async with asyncio.timeout(3), kube.get(ISVC_PATH, params=params) as watch:
        assert await watch.read() == b""


# Namespaces.


async def test_namespaces_are_listed_from_the_objects_that_use_them(kube):
    await apply_object(kube, make_isvc("a", namespace="team-a"))
    async with kube.get("/api/v1/namespaces") as response:
        listed = await response.json()
    async with kube.get("/api/v1/namespaces/team-a") as response:
        fetched = await response.json()
    assert [ns["metadata"]["name"] for ns in listed["items"]] == ["default", "team-a"]
    assert fetched == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "resourceVersion": "1"},
        "status": {"phase": "Active"},
    }


async def test_the_namespace_watch_stays_open_and_quiet(kube):
    params = {"watch": "true", "resourceVersion": "1"}
    async with kube.get("/api/v1/namespaces", params=params) as watch:
        assert watch.status == 200
        with pytest.raises(TimeoutError):
            await read_events(watch, 1, wait=0.2)


# Fault injection.


@pytest.mark.parametrize(
    ("fault", "write"),
    [
        pytest.param({"action": "create"}, "create", id="a failed create stores nothing"),
        pytest.param({"action": "update"}, "patch", id="a failed patch changes nothing"),
        pytest.param({"action": "delete"}, "delete", id="a failed delete deletes nothing"),
        pytest.param({"method": "PUT"}, "replace", id="a failed replace changes nothing"),
        pytest.param(
            {"subresource": "status"}, "status", id="a failed status patch changes nothing"
        ),
    ],
)
async def test_an_injected_fault_answers_before_any_state_change(kube, api, fault, write):
    await apply_object(kube, make_isvc("llama"))
    before = [dict(version) for version in kube.objects[ISVC, "default", "llama"].history]
    injected = kube.inject_fault(503, resource=ISVC, **fault)
    body = make_isvc("llama")
    calls = {
        "create": (api.create_namespaced_custom_object, body),
        "patch": (api.patch_namespaced_custom_object, "llama", {"spec": {"x": 1}}),
        "delete": (api.delete_namespaced_custom_object, "llama"),
        "replace": (api.replace_namespaced_custom_object, "llama", body),
        "status": (api.patch_namespaced_custom_object_status, "llama", {"status": {"x": 1}}),
    }
    method, *args = calls[write]
    status, message = await api_error(method, *OME, "default", "inferenceservices", *args)
    assert (status, message, injected.hits) == (503, "injected fault: HTTP 503", 1)
    assert [dict(version) for version in kube.objects[ISVC, "default", "llama"].history] == before


async def test_a_fault_fires_only_the_given_number_of_times(kube, api):
    kube.inject_fault(500, action="list", resource=ISVC, times=1)
    args = (*OME, "default", "inferenceservices")
    assert (await api_error(api.list_namespaced_custom_object, *args))[0] == 500
    assert (await call(api.list_namespaced_custom_object, *args))["items"] == []


async def test_a_delay_only_fault_slows_the_answer_past_the_client_timeout(kube, kubeconfig):
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(kubeconfig, client_configuration=configuration)
    configuration.retries = False
    api = kubernetes.client.CustomObjectsApi(kubernetes.client.ApiClient(configuration))
    kube.inject_fault(None, action="list", resource=ISVC, delay=0.3)
    args = (*OME, "default", "inferenceservices")
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        await call(api.list_namespaced_custom_object, *args, _request_timeout=0.1)
    assert (await call(api.list_namespaced_custom_object, *args))["items"] == []


# kopf, in-loop, against the emulator (testing-stack.md §6).


class _IgnoreAll(frozenset):
    """kopf's ``run_tasks(ignored=…)`` that ignores every task it did not start itself.

    Without it kopf cancels every task created after the operator started, pytest's and the
    emulator's included (testing-stack.md pitfall 6).
    """

    def __contains__(self, item: object) -> bool:
        return True


def make_test_operator() -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        return kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.create("ome.io", "v1beta1", "inferenceservices", id="created", registry=registry)
    def created(body: kopf.Body, spec: kopf.Spec, patch: kopf.Patch, **_: Any) -> dict[str, Any]:
        kopf.event(body, type="Normal", reason="Seen", message="seen by the test operator")
        patch.status["phase"] = "Seen"
        return {"model": spec["model"]["name"]}

    return registry


def posted_events(kube: ApiServerLikeEmulator) -> list[str]:
    events = kube.resource("v1/events")
    return [name for (res, _, name), obj in kube.objects.items() if res == events and obj]


async def test_a_kopf_operator_runs_against_the_emulator(kube, kubeconfig):
    await apply_object(kube, make_isvc("before"))  # seen by kopf's initial LIST
    settings = kopf.OperatorSettings()
    stop, ready = asyncio.Event(), asyncio.Event()
    tasks = await kopf.spawn_tasks(
        registry=make_test_operator(),
        settings=settings,
        standalone=True,
        clusterwide=True,
        stop_flag=stop,
        ready_flag=ready,
    )
    operator = asyncio.create_task(kopf.run_tasks(tasks, ignored=_IgnoreAll()))
    try:
        await asyncio.wait_for(ready.wait(), 5)
        await apply_object(kube, make_isvc("after"))  # seen by kopf's WATCH
        for name in ("before", "after"):
            isvc = await eventually(lambda n=name: kube.objects[ISVC, "default", n]["status"])
            assert isvc == {"phase": "Seen", "created": {"model": "llama"}}
        events = await eventually(lambda: posted_events(kube))  # kopf posts with generateName
        assert {name[: len("kopf-event-")] for name in events} == {"kopf-event-"}
    finally:
        stop.set()
        await asyncio.wait_for(operator, 10)
