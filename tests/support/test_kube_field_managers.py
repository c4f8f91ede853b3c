"""Field managers and server-side apply in the emulator, over HTTP, as a real API server does.

Each case sends its requests in order and checks the object the last one leaves (or the error
it answers) whole, with the managedFields entries' ``time`` dropped. Entries sort by operation,
then time, then manager: the managers of each case are named in the order they first write, so
a second ticking over between two writes leaves the order as it is.
"""

import asyncio
import json
from typing import Any, NamedTuple
from unittest import mock

import pytest

from tests.support.kube_emulator import ApiServerLikeEmulator

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
ISVCS = "/apis/ome.io/v1beta1/namespaces/default/inferenceservices"
APPLY = "application/apply-patch+yaml"
AGENT = "kubectl-create/v1.36.3 (linux/amd64) kubernetes/2ab2527"


class Call(NamedTuple):
    method: str
    path: str
    body: Any
    content_type: str = "application/json"
    params: dict[str, str] = {}
    agent: str = AGENT


def post(path: str, body: Any, agent: str = AGENT) -> Call:
    return Call("POST", path, body, agent=agent)


def apply(path: str, body: Any, manager: str, *, force: bool = False) -> Call:
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return Call("PATCH", path, json.dumps(body), APPLY, params)


def merge(path: str, body: Any, agent: str) -> Call:
    return Call("PATCH", path, body, "application/merge-patch+json", agent=agent)


def json_patch(path: str, operations: list[dict[str, Any]], agent: str) -> Call:
    return Call("PATCH", path, operations, "application/json-patch+json", agent=agent)


def configmap(data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", **meta}}
    return body if data is None else {**body, "data": data}


def deployment(containers: list[dict[str, Any]], replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": containers}}},
    }


def isvc(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "llama"},
        **fields,
    }


def entry(manager: str, operation: str, fields: dict[str, Any], **extra: str) -> dict[str, Any]:
    """A managedFields entry, ``time`` left out (``apiVersion`` and ``subresource`` in extra)."""
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": extra.pop("apiVersion", "v1"),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        **extra,
    }


def stored(body: dict[str, Any], rv: int, *entries: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """``body`` as the emulator stores it: server metadata, then these entries."""
    server = {"namespace": "default", "uid": mock.ANY, "creationTimestamp": mock.ANY}
    server |= {"generation": meta.pop("generation", 1), "resourceVersion": str(rv)}
    managed = {"managedFields": list(entries)} if entries else {}
    return {**body, "metadata": {**body["metadata"], **server, **meta, **managed}}


CM = f"{CONFIGMAPS}/cm"
WEB = f"{DEPLOYMENTS}/web"
LLAMA = f"{ISVCS}/llama"
C = {"name": "c", "image": "c:1"}
SIDE = {"name": "side", "image": "side:1"}
LABEL_A = {"f:metadata": {"f:labels": {"f:a": {}}}}
C_FIELDS = {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}
SIDE_FIELDS = {'k:{"name":"side"}': {".": {}, "f:image": {}, "f:name": {}}}
C_PORT = {'k:{"containerPort":8080,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}
C_PORT_FIELDS = {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}, "f:ports": C_PORT}}
TEAM = {"team": "ml"}
TEAM_FIELDS = {"f:metadata": {"f:annotations": {"f:team": {}}}}
KEPT = {"f:data": {"f:k": {}, "f:old": {}}}
YAML_CONFIGMAP = "kind: ConfigMap\napiVersion: v1\nmetadata: {name: cm}\ndata: {k: v}\n"


def containers(*items: dict[str, Any]) -> dict[str, Any]:
    return {"f:template": {"f:spec": {"f:containers": {k: v for i in items for k, v in i.items()}}}}


CASES = [
    pytest.param(
        [post(CONFIGMAPS, configmap({"k": "v"}, labels={"a": "b"}))],
        stored(
            configmap({"k": "v"}, labels={"a": "b"}),
            1,
            entry(
                "kubectl-create",
                "Update",
                {
                    "f:data": {".": {}, "f:k": {}},
                    "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                },
            ),
        ),
        id="a create is its manager's update, named by the user agent up to its slash",
    ),
    pytest.param(
        [post(f"{ISVCS}?fieldManager=ome-operator", isvc(spec={"engine": {"minReplicas": 1}}))],
        stored(
            isvc(spec={"engine": {"minReplicas": 1}}),
            1,
            entry(
                "ome-operator",
                "Update",
                {"f:spec": {".": {}, "f:engine": {".": {}, "f:minReplicas": {}}}},
                apiVersion="ome.io/v1beta1",
            ),
        ),
        id="the fieldManager parameter names the manager and a custom resource's maps are owned",
    ),
    pytest.param(
        [apply(CM, configmap({"k": "v"}, labels={"a": "b"}), "ome-operator")],
        stored(
            configmap({"k": "v"}, labels={"a": "b"}),
            1,
            entry("ome-operator", "Apply", {"f:data": {"f:k": {}}, **LABEL_A}),
        ),
        id="an apply creates the object it names and owns exactly what it applied",
    ),
    pytest.param(
        [Call("PATCH", CM, YAML_CONFIGMAP, APPLY, {"fieldManager": "ome-operator"})],
        stored(configmap({"k": "v"}), 1, entry("ome-operator", "Apply", {"f:data": {"f:k": {}}})),
        id="an apply may send YAML",
    ),
    pytest.param(
        [apply(WEB, deployment([{**C, "ports": [{"containerPort": 8080}]}]), "ome-operator")],
        stored(
            deployment([{**C, "ports": [{"containerPort": 8080}]}]),
            1,
            entry(
                "ome-operator",
                "Apply",
                {"f:spec": {"f:replicas": {}, **containers(C_PORT_FIELDS)}},
                apiVersion="apps/v1",
            ),
        ),
        id="a container port is keyed by its port and protocol, TCP when left out",
    ),
    pytest.param(
        [
            apply(CM, configmap({"k": "v", "old": "o"}), "ome-operator"),
            apply(CM, configmap({"k": "v"}), "ome-operator"),
        ],
        stored(
            configmap({"k": "v"}),
            2,
            entry("ome-operator", "Apply", {"f:data": {"f:k": {}}}),
            generation=2,
        ),
        id="an apply removes a field it stopped applying",
    ),
    pytest.param(
        [
            apply(CM, configmap({"k": "v", "shared": "s"}), "ome-operator"),
            apply(CM, configmap({"shared": "s"}), "other"),
            apply(CM, configmap({"k": "v"}), "ome-operator"),
        ],
        stored(
            configmap({"k": "v", "shared": "s"}),
            3,
            entry("other", "Apply", {"f:data": {"f:shared": {}}}),
            entry("ome-operator", "Apply", {"f:data": {"f:k": {}}}),
        ),
        id="a field shared with another manager stays when one stops applying it",
    ),
    pytest.param(
        [
            apply(CM, configmap({"k": "v"}), "ome-operator"),
            apply(CM, configmap({"k": "v"}), "other"),
        ],
        stored(
            configmap({"k": "v"}),
            2,
            entry("other", "Apply", {"f:data": {"f:k": {}}}),
            entry("ome-operator", "Apply", {"f:data": {"f:k": {}}}),
        ),
        id="an apply of the same value shares the field, a write that changes only ownership",
    ),
    pytest.param(
        [
            apply(WEB, deployment([C]), "ome-operator"),
            merge(WEB, {"spec": {"replicas": 3}}, "kubectl-edit/v1.36.3"),
            apply(WEB, deployment([C], replicas=2), "ome-operator"),
        ],
        (
            409,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": 'Apply failed with 1 conflict: conflict with "kubectl-edit" using '
                "apps/v1: .spec.replicas",
                "reason": "Conflict",
                "details": {
                    "causes": [
                        {
                            "reason": "FieldManagerConflict",
                            "message": 'conflict with "kubectl-edit" using apps/v1',
                            "field": ".spec.replicas",
                        }
                    ]
                },
                "code": 409,
            },
        ),
        id="an apply changing a field another manager changed is a conflict",
    ),
    pytest.param(
        [
            apply(WEB, deployment([C]), "ome-operator"),
            merge(WEB, {"spec": {"replicas": 3}}, "kubectl-edit/v1.36.3"),
            apply(WEB, deployment([C], replicas=2), "ome-operator", force=True),
        ],
        stored(
            deployment([C], replicas=2),
            3,
            entry(
                "ome-operator",
                "Apply",
                {"f:spec": {"f:replicas": {}, **containers(C_FIELDS)}},
                apiVersion="apps/v1",
            ),
            generation=3,
        ),
        id="a forced apply takes the field, and an emptied entry goes",
    ),
    pytest.param(
        [
            apply(WEB, deployment([C]), "ome-operator"),
            merge(WEB, {"spec": {"replicas": 3}}, "kubectl-edit/v1.36.3"),
        ],
        stored(
            deployment([C], replicas=3),
            2,
            entry("ome-operator", "Apply", {"f:spec": containers(C_FIELDS)}, apiVersion="apps/v1"),
            entry("kubectl-edit", "Update", {"f:spec": {"f:replicas": {}}}, apiVersion="apps/v1"),
            generation=2,
        ),
        id="an update takes what it changes from every other manager",
    ),
    pytest.param(
        [
            apply(WEB, deployment([C]), "ome-operator"),
            json_patch(
                WEB,
                [{"op": "add", "path": "/spec/template/spec/containers/-", "value": SIDE}],
                "sidecar-injector/v2",
            ),
            apply(WEB, deployment([{**C, "image": "c:2"}]), "ome-operator"),
        ],
        stored(
            deployment([{**C, "image": "c:2"}, SIDE]),
            3,
            entry(
                "ome-operator",
                "Apply",
                {"f:spec": {"f:replicas": {}, **containers(C_FIELDS)}},
                apiVersion="apps/v1",
            ),
            entry(
                "sidecar-injector",
                "Update",
                {"f:spec": containers(SIDE_FIELDS)},
                apiVersion="apps/v1",
            ),
            generation=3,
        ),
        id="a keyed list item another manager added survives an apply",
    ),
    pytest.param(
        [
            apply(CM, configmap({"k": "v", "shared": "s"}), "ome-operator"),
            apply(CM, configmap({"shared": "s"}), "other"),
            json_patch(CM, [{"op": "remove", "path": "/data/shared"}], "kubectl/v1.36.3"),
        ],
        stored(
            configmap({"k": "v"}),
            3,
            entry("ome-operator", "Apply", {"f:data": {"f:k": {}}}),
            generation=2,
        ),
        id="a removed field leaves every manager",
    ),
    pytest.param(
        [
            post(
                f"{CONFIGMAPS}?fieldManager=ome-operator",
                configmap({"k": "v", "old": "o"}, annotations={**TEAM, "ome.io/applied": "{}"}),
            ),
            json_patch(
                CM,
                [
                    {"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
                    {
                        "op": "replace",
                        "path": "/metadata/managedFields",
                        "value": [entry("ome-operator", "Apply", {**KEPT, **TEAM_FIELDS})],
                    },
                    {"op": "remove", "path": "/metadata/annotations/ome.io~1applied"},
                ],
                "ome-operator/v1",
            ),
            apply(CM, configmap({"k": "v"}, annotations=TEAM), "ome-operator"),
        ],
        stored(
            configmap({"k": "v"}, annotations=TEAM),
            3,
            entry("ome-operator", "Apply", {"f:data": {"f:k": {}}, **TEAM_FIELDS}),
            generation=2,
        ),
        id="a JSON patch makes an update entry an apply entry, whose next apply prunes",
    ),
    pytest.param(
        [
            apply(CM, configmap({"k": "v"}), "ome-operator"),
            merge(
                CM,
                {"metadata": {"managedFields": [entry("else", "Update", {"f:data": {"f:k": {}}})]}},
                "kubectl/v1.36.3",
            ),
        ],
        stored(configmap({"k": "v"}), 2, entry("else", "Update", {"f:data": {"f:k": {}}})),
        id="a write of managedFields alone stores them, a change",
    ),
    pytest.param(
        [
            post(ISVCS, isvc(spec={"m": 1})),
            merge(
                f"{LLAMA}/status",
                {
                    "metadata": {"managedFields": [{}]},
                    "spec": {"m": 2},
                    "status": {"phase": "Ready"},
                },
                "reconciler/1.0",
            ),
        ],
        stored(
            isvc(spec={"m": 1}, status={"phase": "Ready"}),
            2,
            entry(
                "kubectl-create",
                "Update",
                {"f:spec": {".": {}, "f:m": {}}},
                apiVersion="ome.io/v1beta1",
            ),
            entry(
                "reconciler",
                "Update",
                {"f:status": {".": {}, "f:phase": {}}},
                apiVersion="ome.io/v1beta1",
                subresource="status",
            ),
        ),
        id="a status write owns only status fields and ignores the managedFields it sends",
    ),
    pytest.param(
        [
            post(ISVCS, isvc(spec={"m": 1})),
            apply(
                f"{LLAMA}/status",
                isvc(spec={"m": 2}, status={"url": "http://llama"}),
                "ome-operator",
            ),
        ],
        stored(
            isvc(spec={"m": 1}, status={"url": "http://llama"}),
            2,
            entry(
                "ome-operator",
                "Apply",
                {"f:status": {"f:url": {}}},
                apiVersion="ome.io/v1beta1",
                subresource="status",
            ),
            entry(
                "kubectl-create",
                "Update",
                {"f:spec": {".": {}, "f:m": {}}},
                apiVersion="ome.io/v1beta1",
            ),
        ),
        id="an apply to the status changes and owns only the status",
    ),
    pytest.param(
        [Call("PATCH", CM, json.dumps(configmap({"k": "v"})), APPLY)],
        (
            422,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required '
                "value: is required for apply patch",
                "reason": "Invalid",
                "details": {
                    "group": "meta.k8s.io",
                    "kind": "PatchOptions",
                    "causes": [
                        {
                            "reason": "FieldValueRequired",
                            "message": "Required value: is required for apply patch",
                            "field": "fieldManager",
                        }
                    ],
                },
                "code": 422,
            },
        ),
        id="an apply without a field manager is invalid",
    ),
    pytest.param(
        [apply(CM, configmap({"k": "v"}, uid="4f1c"), "ome-operator")],
        (
            409,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": 'Operation cannot be fulfilled on configmaps "cm": uid mismatch: the '
                "provided object specified uid 4f1c, and no existing object was found",
                "reason": "Conflict",
                "details": {"name": "cm", "kind": "configmaps"},
                "code": 409,
            },
        ),
        id="an apply naming the uid of an object that does not exist is a conflict",
    ),
    pytest.param(
        [
            apply(CM, configmap({"k": "v"}), "ome-operator"),
            apply(CM, configmap({"k": "v"}, uid="4f1c"), "ome-operator"),
        ],
        (
            422,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": 'ConfigMap "cm" is invalid: metadata.uid: Invalid value: "4f1c": '
                "field is immutable",
                "reason": "Invalid",
                "details": {
                    "name": "cm",
                    "kind": "ConfigMap",
                    "causes": [
                        {
                            "reason": "FieldValueInvalid",
                            "message": 'Invalid value: "4f1c": field is immutable',
                            "field": "metadata.uid",
                        }
                    ]
                    * 2,
                },
                "code": 422,
            },
        ),
        id="an apply naming another uid than the object's is invalid",
    ),
]


async def send(kube: ApiServerLikeEmulator, call: Call) -> tuple[int, Any]:
    headers = {"Content-Type": call.content_type, "User-Agent": call.agent}
    body = call.body if isinstance(call.body, str) else json.dumps(call.body)
    request = kube.request(call.method, call.path, data=body, headers=headers, params=call.params)
    async with request as response:
        return response.status, await response.json()


def untimed(obj: dict[str, Any]) -> dict[str, Any]:
    entries = obj.get("metadata", {}).get("managedFields")
    if entries is None:
        return obj
    managed = [{k: v for k, v in e.items() if k != "time"} for e in entries]
    return {**obj, "metadata": {**obj["metadata"], "managedFields": managed}}


@pytest.mark.parametrize(("calls", "expected"), CASES)
async def test_writes_record_field_managers_as_the_api_server_does(kube, calls, expected):
    for call in calls[:-1]:
        status, answer = await send(kube, call)
        assert status < 300, answer
    status, answer = await send(kube, calls[-1])
    if isinstance(expected, tuple):
        assert (status, answer) == expected
    else:
        assert (status, untimed(answer)) == (201 if len(calls) == 1 else 200, expected)


async def test_an_apply_that_changes_nothing_writes_nothing(kube):
    assert (await send(kube, apply(CM, configmap({"k": "v"}), "ome-operator")))[0] == 201
    params = {"watch": "true", "resourceVersion": "1"}
    async with kube.get(CONFIGMAPS, params=params) as watch:
        again = await send(kube, apply(CM, configmap({"k": "v"}), "ome-operator"))
        changed = await send(kube, apply(CM, configmap({"k": "w"}), "ome-operator"))
        async with asyncio.timeout(2):
            event = json.loads(await watch.content.readline())
    assert (again[0], again[1]["metadata"]["resourceVersion"]) == (200, "1")
    assert (event["type"], event["object"]) == ("MODIFIED", changed[1])
