"""Writing by server-side apply: whether a live object already is what a pass renders (the
comparison that decides between no write and an apply, so it reads the object the way the
server stores it), what the operator's apply record says it no longer renders, taking over what
the previous release wrote, and the requests each case sends."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from ome_operator.cluster.apply_records import (
    FIELD_MANAGER,
    LEGACY_RECORD,
    dropped_since,
    handover_patch,
    stale_fields,
    takeover_patch,
)
from ome_operator.cluster.applying import (
    OWNER_UID_ANNOTATION,
    apply_object,
    apply_status,
    is_subset,
    write_needed,
)
from ome_operator.core.ownership import UID_ANNOTATION


def _resources(**quantities: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"limits": quantities}}]}}


@pytest.mark.parametrize(
    ("desired", "actual", "expected"),
    [
        pytest.param(
            _resources(**{"nvidia.com/gpu": 1}),
            _resources(**{"nvidia.com/gpu": "1"}),
            True,
            id="an integer quantity holds as the server's string",
        ),
        pytest.param(_resources(cpu="1000m"), _resources(cpu="1"), True, id="1000m is stored as 1"),
        pytest.param(
            _resources(memory="1Gi"),
            _resources(memory="1073741824"),
            True,
            id="binary suffixes compare by value",
        ),
        pytest.param(_resources(cpu=0.5), _resources(cpu="500m"), True, id="a float quantity"),
        pytest.param(
            _resources(cpu="2"), _resources(cpu="1"), False, id="a different quantity is drift"
        ),
        pytest.param(
            _resources(cpu="2"), _resources(memory="2"), False, id="a missing resource is drift"
        ),
        pytest.param(
            _resources(cpu=True), _resources(cpu="1"), False, id="a boolean is not a quantity"
        ),
        pytest.param(
            _resources(cpu="1"),
            _resources(cpu="1", **{"nvidia.com/gpu": "1"}),
            True,
            id="a limit not rendered holds: whether it was the operator's is its apply record's",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c"}]}},
            {"spec": {"containers": [{"name": "c", "resources": {}}]}},
            True,
            id="no resources holds as the server's empty resources",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}},
            {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "imagePullPolicy": "IfNotPresent",
                            "resources": {"limits": {"cpu": "1"}, "requests": {}},
                        }
                    ]
                }
            },
            True,
            id="a container's other defaulted fields are not drift",
        ),
        pytest.param(
            {"spec": {"volumes": [{"emptyDir": {"sizeLimit": "1024Mi"}}]}},
            {"spec": {"volumes": [{"emptyDir": {"sizeLimit": "1Gi"}}]}},
            True,
            id="an emptyDir sizeLimit is a quantity",
        ),
        pytest.param(
            {"spec": {"ports": [{"port": 8080}]}},
            {"spec": {"ports": [{"port": "8080"}]}},
            False,
            id="other numbers are not quantities: 8080 and '8080' differ",
        ),
        pytest.param(
            {"spec": {"template": {"metadata": {"labels": {"requests": "1"}}}}},
            {"spec": {"template": {"metadata": {"labels": {"requests": "1.0"}}}}},
            False,
            id="a label named requests is a string, not a quantity map",
        ),
        pytest.param(
            {"spec": {"replicas": 1}},
            {"spec": {"replicas": 1, "revisionHistoryLimit": 10}},
            True,
            id="fields the server defaults are not drift",
        ),
        pytest.param(
            {"spec": {"args": ["a", "b"]}},
            {"spec": {"args": ["a"]}},
            False,
            id="lists compare item by item and by length",
        ),
    ],
)
def test_a_live_object_holds_what_was_rendered(desired: Any, actual: Any, expected: bool) -> None:
    assert is_subset(desired, actual) is expected


# -- the apply record ------------------------------------------------------------------------

CONTAINER = {"name": "engine", "image": "vllm:1", "ports": [{"containerPort": 8080}]}


def _rendered(**spec: Any) -> dict[str, Any]:
    pod = {"containers": [CONTAINER], **spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "m", "namespace": "ns", "labels": {"app": "m"}},
        "spec": {"replicas": 1, "template": {"spec": pod}},
    }


def _fields(obj: Any) -> dict[str, Any]:
    """The fieldsV1 an apply of ``obj`` records (containers and ports keyed as the server
    keys them, the default protocol filled in)."""
    fields: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or (key in ("name", "namespace") and "labels" in obj):
            continue
        if key == "containers":
            fields["f:containers"] = {
                f'k:{{"name":"{c["name"]}"}}': {".": {}, **_fields(c)} for c in value
            }
        elif key == "ports":
            fields["f:ports"] = {
                f'k:{{"containerPort":{p["containerPort"]},"protocol":"TCP"}}': {
                    ".": {},
                    **_fields(p),
                }
                for p in value
            }
        elif isinstance(value, dict) and value:
            fields[f"f:{key}"] = _fields(value)
        else:
            fields[f"f:{key}"] = {}
    return fields


def _record(obj: Any, operation: str = "Apply", **more: Any) -> dict[str, Any]:
    return {
        "manager": FIELD_MANAGER,
        "operation": operation,
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": _fields(obj),
        **more,
    }


def _live(applied: dict[str, Any], *records: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """``applied`` as the server holds it: defaults added, the given records."""
    live = json.loads(json.dumps(applied))
    live["metadata"].update(uid="u1", resourceVersion="7", managedFields=list(records))
    live["spec"].update(revisionHistoryLimit=10, **spec)
    live["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    live["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] = "TCP"
    return live


PINNED = _rendered(nodeSelector={"gpu": "a100"})
PLAIN = _rendered()


@pytest.mark.parametrize(
    ("desired", "live", "needed", "stale"),
    [
        pytest.param(
            PLAIN, _live(PLAIN, _record(PLAIN)), False, [], id="an object applied as rendered"
        ),
        pytest.param(
            PINNED,
            _live(PLAIN, _record(PLAIN)),
            True,
            [],
            id="a field rendered now and not yet there",
        ),
        pytest.param(
            PLAIN,
            _live(PINNED, _record(PINNED)),
            True,
            [("f:spec", "f:template", "f:spec", "f:nodeSelector", "f:gpu")],
            id="a field the operator applied and no longer renders",
        ),
        pytest.param(
            PLAIN,
            _live(PLAIN, _record(PLAIN), minReadySeconds=5),
            False,
            [],
            id="a field another manager set, not rendered, is theirs",
        ),
        pytest.param(
            PLAIN,
            _live(PLAIN, _record(PLAIN), replicas=3),
            True,
            [],
            id="a field the operator renders changed by someone else",
        ),
        pytest.param(
            PLAIN,
            _live(PLAIN, _record(PINNED)),
            True,
            [("f:spec", "f:template", "f:spec", "f:nodeSelector", "f:gpu")],
            id="the record counts, not the object: a field applied and gone meanwhile",
        ),
        pytest.param(
            _rendered(containers=[{**CONTAINER, "ports": []}]),
            _live(PLAIN, _record(PLAIN)),
            True,
            [
                (
                    "f:spec",
                    "f:template",
                    "f:spec",
                    "f:containers",
                    'k:{"name":"engine"}',
                    "f:ports",
                    'k:{"containerPort":8080,"protocol":"TCP"}',
                    "f:containerPort",
                ),
            ],
            id="a list item the operator no longer renders, found by its key",
        ),
        pytest.param(
            PLAIN,
            _live(PLAIN, _record(PLAIN, "Update")),
            False,
            [],
            id="fields in the operator's Update entry (a create's) alone are no reason to write",
        ),
        pytest.param(
            PLAIN,
            _live(PLAIN, {**_record(PINNED), "manager": "kubectl"}),
            False,
            [],
            id="another manager's record is theirs",
        ),
    ],
)
def test_a_write_is_needed_when_the_object_is_not_what_is_rendered(
    desired: dict[str, Any], live: dict[str, Any], needed: bool, stale: list[Any]
) -> None:
    assert (write_needed(desired, live), stale_fields(desired, live)) == (needed, stale)


def test_an_object_the_previous_release_wrote_is_written_once() -> None:
    live = _live(PLAIN, _record(PLAIN, "Update"))
    live["metadata"]["annotations"] = {LEGACY_RECORD: "{}"}
    assert write_needed(PLAIN, live) is True


# -- taking over -----------------------------------------------------------------------------


def _legacy(desired: dict[str, Any], *others: dict[str, Any]) -> dict[str, Any]:
    """``desired`` as the previous release left it: its record (the key tree of what it wrote),
    an Update entry owning what it wrote and what the server defaulted."""
    keys = {"keys": {"spec": {"template": {"spec": {"containers": 1, "nodeSelector": {"gpu": 1}}}}}}
    live = _live(desired, *others)
    live["metadata"]["annotations"] = {LEGACY_RECORD: json.dumps(keys)}
    written = _fields(live)
    live["metadata"]["managedFields"].insert(0, {**_record(desired, "Update"), "fieldsV1": written})
    return live


KCM = {"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {"f:status": {}}}


def test_taking_over_turns_the_update_record_into_an_apply_record_of_what_is_rendered() -> None:
    live = _legacy(PINNED, KCM)
    at = "/metadata/managedFields/0"
    assert takeover_patch(PLAIN, live) == [
        {"op": "test", "path": f"{at}/manager", "value": FIELD_MANAGER},
        {"op": "test", "path": f"{at}/operation", "value": "Update"},
        {"op": "replace", "path": f"{at}/operation", "value": "Apply"},
        {"op": "replace", "path": f"{at}/fieldsV1", "value": _record(PLAIN)["fieldsV1"]},
        {"op": "remove", "path": "/spec/template/spec/nodeSelector"},
        {"op": "remove", "path": "/metadata/annotations/ome.io~1applied"},
    ]


def test_a_status_record_is_taken_over_whole() -> None:
    status = {"manager": FIELD_MANAGER, "operation": "Update", "subresource": "status"}
    status["fieldsV1"] = {"f:status": {"f:conditions": {}, "f:url": {}}}
    body = {"metadata": {"resourceVersion": "3", "managedFields": [KCM, status]}}
    at = "/metadata/managedFields/1"
    assert takeover_patch({"status": {"conditions": []}}, body) == [
        {"op": "test", "path": f"{at}/manager", "value": FIELD_MANAGER},
        {"op": "test", "path": f"{at}/operation", "value": "Update"},
        {"op": "replace", "path": f"{at}/operation", "value": "Apply"},
        {"op": "replace", "path": f"{at}/fieldsV1", "value": status["fieldsV1"]},
    ]


def test_nothing_is_taken_over_from_an_object_the_operator_applied() -> None:
    assert takeover_patch(PLAIN, _live(PLAIN, _record(PLAIN))) is None


# -- the requests each case sends ------------------------------------------------------------


class _Api:
    """A fake of ``KubeApi``'s writes: records each request, answers from ``answers`` (an
    exception is raised), else echoes the body."""

    def __init__(self, *answers: Any, fresh: dict[str, Any] | None = None) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self._answers = list(answers)
        self._fresh = fresh

    def _answer(self, body: Any) -> Any:
        answer = self._answers.pop(0) if self._answers else body
        if isinstance(answer, Exception):
            raise answer
        return answer

    def apply(self, obj: Mapping[str, Any], *, manager: str, force: bool, subresource=None):
        self.sent.append(("apply", manager, force, subresource))
        return self._answer(dict(obj))

    def create(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]:
        self.sent.append(("create", manager))
        return _legacy(PLAIN) | {"metadata": {"managedFields": [_record(PLAIN, "Update")]}}

    def get(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append(("get",))
        assert self._fresh is not None
        return self._fresh

    def json_patch(self, obj: Mapping[str, Any], operations: list[Any]) -> dict[str, Any]:
        self.sent.append(("json-patch", [o["op"] for o in operations]))
        return self._answer(PLAIN)


@pytest.mark.parametrize(
    ("existing", "last", "sent", "taken_back"),
    [
        pytest.param(None, None, [("create", FIELD_MANAGER)], [], id="a new object: one create"),
        pytest.param(_live(PLAIN, _record(PLAIN)), PLAIN, [], [], id="a converged object: nothing"),
        pytest.param(
            _live(PLAIN, _record(PLAIN), replicas=3),
            None,
            [("apply", FIELD_MANAGER, True, None)],
            [],
            id="a drifted object, its last write not known: one apply",
        ),
        pytest.param(
            _live(PLAIN, _record(PLAIN), replicas=3),
            PLAIN,
            [("apply", FIELD_MANAGER, True, None)],
            [[".spec.replicas"]],
            id="a field changed since the operator wrote it as now is taken back, and told",
        ),
        pytest.param(
            _live(PLAIN, _record(PLAIN), replicas=3),
            _rendered(),
            [("apply", FIELD_MANAGER, True, None)],
            [[".spec.replicas"]],
            id="defaults the server added are no change",
        ),
        pytest.param(
            _live(PINNED, _record(PINNED)),
            PINNED,
            [("apply", FIELD_MANAGER, True, None)],
            [],
            id="a field the operator no longer renders is applied away, untold",
        ),
        pytest.param(
            _legacy(PLAIN),
            None,
            [("get",), ("json-patch", ["test", "test", "replace", "replace", "remove"])],
            [],
            id="the previous release's object, rendered alike: taken over in one write",
        ),
    ],
)
def test_the_requests_of_a_write(
    existing: dict[str, Any] | None, last: Any, sent: list[Any], taken_back: list[Any]
) -> None:
    api = _Api(fresh=existing)
    told: list[Any] = []
    apply_object(api, PLAIN, existing, lambda obj, fields: told.append(fields), last)  # type: ignore[arg-type]
    assert (api.sent, told) == (sent, taken_back)


def test_a_field_dropped_since_the_operator_created_the_object_is_removed() -> None:
    """A created object's fields are its create's Update entry, server defaults included: the
    operator's last write tells what it rendered, which is taken over, then applied away."""
    created = _live(PINNED, _record(PINNED, "Update"))
    api = _Api(fresh=created)
    apply_object(api, PLAIN, created, lambda obj, conflict: None, PINNED)  # type: ignore[arg-type]
    assert api.sent == [
        ("get",),
        ("json-patch", ["test", "test", "replace", "replace"]),
        ("apply", FIELD_MANAGER, True, None),
    ]


def test_an_unknown_last_write_and_a_converged_object_send_nothing() -> None:
    created = _live(PLAIN, _record(PLAIN, "Update"))
    api = _Api(fresh=created)
    for last in (None, PLAIN):
        apply_object(api, PLAIN, created, lambda obj, conflict: None, last)  # type: ignore[arg-type]
    assert api.sent == []


def test_a_status_is_applied_whole_to_the_status_only_when_it_differs() -> None:
    body = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService"}
    body |= {"metadata": {"name": "m", "namespace": "ns"}, "status": {"url": "a"}}
    api = _Api()
    unchanged = apply_status(api, body, {"url": "a"})  # type: ignore[arg-type]
    written = apply_status(api, body, {"url": "b"})  # type: ignore[arg-type]
    assert (unchanged, written, api.sent) == (
        None,
        {**body, "status": {"url": "b"}},
        [("apply", FIELD_MANAGER, True, "status")],
    )


def test_the_edge_and_the_core_name_the_same_uid_annotation() -> None:
    assert OWNER_UID_ANNOTATION == UID_ANNOTATION


def test_an_update_record_joins_the_apply_record_already_there() -> None:
    labelled = {**PLAIN, "metadata": {**PLAIN["metadata"], "labels": {"app": "m", "pass": "1"}}}
    live = _live(
        labelled, _record(PLAIN, "Update"), _record({"metadata": {"labels": {"pass": "1"}}})
    )
    assert takeover_patch(PLAIN, live, keep=labelled) == [
        {"op": "test", "path": "/metadata/managedFields/0/manager", "value": FIELD_MANAGER},
        {"op": "test", "path": "/metadata/managedFields/0/operation", "value": "Update"},
        {"op": "test", "path": "/metadata/managedFields/1/operation", "value": "Apply"},
        {
            "op": "replace",
            "path": "/metadata/managedFields/1/fieldsV1",
            "value": _fields(labelled),
        },
        {"op": "remove", "path": "/metadata/managedFields/0"},
    ]


def _container(**fields: Any) -> dict[str, Any]:
    return _rendered(containers=[{**CONTAINER, **fields}])


@pytest.mark.parametrize(
    ("last", "desired", "dropped"),
    [
        pytest.param(PINNED, PLAIN, True, id="a field taken out"),
        pytest.param(PLAIN, PINNED, False, id="a field added"),
        pytest.param(
            _container(resources={"limits": {"nvidia.com/gpu": 1}}),
            _container(resources={"limits": {"cpu": "1"}}),
            True,
            id="a limit taken out of a container, found by the container's name",
        ),
        pytest.param(_container(image="a:1"), _container(image="a:2"), False, id="a changed value"),
        pytest.param(
            _container(args=["a", "b"]),
            _container(args=["a"]),
            True,
            id="a list that is not keyed by name changed: an item may be gone",
        ),
    ],
)
def test_a_field_is_dropped_since_the_last_write(last: Any, desired: Any, dropped: bool) -> None:
    assert dropped_since(desired, last) is dropped


# -- replicas left to an autoscaler ----------------------------------------------------------

HANDED_OVER = {"spec": {"replicas": 1}}


def _handed_over(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj``'s apply record without ``spec.replicas``, as the hand-over patch leaves it."""
    record = _record(obj)
    del record["fieldsV1"]["f:spec"]["f:replicas"]
    return record


@pytest.mark.parametrize(
    ("existing", "answer", "last", "sent"),
    [
        pytest.param(
            None, None, None, [("create", FIELD_MANAGER)], id="a scaled workload is created whole"
        ),
        pytest.param(
            _live(PLAIN, _record(PLAIN, "Update"), replicas=4),
            None,
            PLAIN,
            [],
            id="scaled to 4 since its create: nothing is written, the count is not the operator's",
        ),
        pytest.param(
            _live(PLAIN, _record(PLAIN), replicas=4),
            _live(PLAIN, _handed_over(PLAIN), replicas=4),
            PLAIN,
            [("json-patch", ["test", "test", "remove"])],
            id="held by its apply record: handed over in one patch that keeps the value",
        ),
        pytest.param(
            _live(PINNED, _record(PINNED), replicas=4),
            _live(PINNED, _handed_over(PINNED), replicas=4),
            PINNED,
            [("json-patch", ["test", "test", "remove"]), ("apply", FIELD_MANAGER, True, None)],
            id="handed over before an apply that would otherwise remove it",
        ),
    ],
)
def test_replicas_left_to_an_autoscaler(
    existing: Any, answer: Any, last: Any, sent: list[Any]
) -> None:
    api = _Api(*([answer] if answer else []), fresh=existing)
    told: list[Any] = []
    apply_object(api, PLAIN, existing, lambda o, f: told.append(f), last, HANDED_OVER)  # type: ignore[arg-type]
    assert (api.sent, told) == (sent, [])


def test_the_hand_over_patch_removes_the_field_from_the_operators_apply_entry_alone() -> None:
    live = _live(PLAIN, KCM, _record(PLAIN), replicas=4)
    assert handover_patch(live, [("f:spec", "f:replicas")]) == [
        {"op": "test", "path": "/metadata/managedFields/1/manager", "value": FIELD_MANAGER},
        {"op": "test", "path": "/metadata/managedFields/1/operation", "value": "Apply"},
        {"op": "remove", "path": "/metadata/managedFields/1/fieldsV1/f:spec/f:replicas"},
    ]
    assert (
        handover_patch(_live(PLAIN, _record(PLAIN, "Update")), [("f:spec", "f:replicas")]) is None
    )
