"""Whether a live object already holds what a pass renders (``is_subset``): the comparison that
decides between no write and a PATCH, so it must read the object the way the server stores it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ome_operator.cluster.applying import (
    APPLIED,
    OWNER_UID_ANNOTATION,
    is_subset,
    patch_to_apply,
    recorded,
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
            False,
            id="a limit no longer rendered is drift: a container's resources are the operator's",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c"}]}},
            _resources(**{"nvidia.com/gpu": "1"}),
            False,
            id="resources no longer rendered at all are drift",
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


# -- what a write removes: the record of the last write ------------------------------------------


def _deployment(labels: dict[str, str], pod_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "chat-engine", "namespace": "ns", "labels": labels},
        "spec": {"replicas": 1, "template": {"spec": pod_spec}},
    }


SERVING = {"containers": [{"name": "c", "image": "vllm:1", "command": ["serve"]}]}
PINNED = {**SERVING, "nodeSelector": {"gpu": "a100", "zone": "a"}}


def _live(last: dict[str, Any], **server: Any) -> dict[str, Any]:
    """``last`` as the operator wrote it (with its record), plus what the server and other
    controllers added: ``server`` maps a dotted path to the value set there."""
    found = copy.deepcopy(recorded(last))
    for dotted, value in server.items():
        *path, key = dotted.split(".")
        target = found
        for part in path:
            target = target.setdefault(part, {})
        target[key] = value
    return found


def _unreadable(live: dict[str, Any]) -> dict[str, Any]:
    live["metadata"]["annotations"][APPLIED] = "{not json"
    return live


def _full(desired: dict[str, Any], **nulls: Any) -> dict[str, Any]:
    """The patch that sends ``desired`` whole (with its record), plus nulls at dotted paths."""
    patch = copy.deepcopy(
        {k: v for k, v in recorded(desired).items() if k not in ("apiVersion", "kind")}
    )
    for dotted in nulls:
        *path, key = dotted.split("__")
        target = patch
        for part in path:
            target = target[part]
        target[key] = None
    return patch


@pytest.mark.parametrize(
    ("desired", "existing", "expected"),
    [
        pytest.param(
            _deployment({"app": "chat"}, SERVING),
            _live(_deployment({"app": "chat"}, SERVING)),
            None,
            id="what the last write recorded, unchanged: no write",
        ),
        pytest.param(
            _deployment({"app": "chat"}, SERVING),
            _live(
                _deployment({"app": "chat"}, SERVING),
                **{"metadata.labels.team": "a", "spec.revisionHistoryLimit": 10},
            ),
            None,
            id="keys the operator never wrote (defaults, other controllers) are left alone",
        ),
        pytest.param(
            _deployment({"app": "chat"}, SERVING),
            _live(_deployment({"app": "chat", "tier": "gold"}, SERVING)),
            _full(_deployment({"app": "chat"}, SERVING), metadata__labels__tier=None),
            id="a label the operator no longer renders is removed",
        ),
        pytest.param(
            _deployment({"app": "chat"}, SERVING),
            _live(_deployment({"app": "chat"}, PINNED)),
            _full(_deployment({"app": "chat"}, SERVING), spec__template__spec__nodeSelector=None),
            id="a nodeSelector taken out of the runtime is removed whole",
        ),
        pytest.param(
            _deployment({"app": "chat"}, {"containers": [{"name": "c", "image": "vllm:1"}]}),
            _live(_deployment({"app": "chat"}, SERVING)),
            _full(_deployment({"app": "chat"}, {"containers": [{"name": "c", "image": "vllm:1"}]})),
            id="a command taken out of a container: the containers are sent whole",
        ),
        pytest.param(
            _deployment({"app": "chat"}, SERVING),
            {**_deployment({"app": "chat", "tier": "gold"}, SERVING)},
            _full(_deployment({"app": "chat"}, SERVING)),
            id="an object written before the record gets it, and keeps what it cannot know",
        ),
        pytest.param(
            _deployment({"app": "chat"}, SERVING),
            _unreadable(_live(_deployment({"app": "chat", "tier": "gold"}, SERVING))),
            _full(_deployment({"app": "chat"}, SERVING)),
            id="an unreadable record reads as none",
        ),
    ],
)
def test_a_write_removes_what_the_last_one_wrote_and_this_one_does_not(
    desired: dict[str, Any], existing: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    assert patch_to_apply(desired, existing) == expected


def test_the_record_is_a_digest_and_the_key_tree() -> None:
    record = recorded(_deployment({"app": "chat"}, SERVING))["metadata"]["annotations"][APPLIED]
    assert json.loads(record) == {
        "digest": json.loads(record)["digest"],
        "keys": {
            "metadata": {"labels": {"app": 1}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": 1}}},
        },
    }
    assert len(json.loads(record)["digest"]) == 16
    changed = recorded(_deployment({"app": "chat"}, {"containers": [{"name": "c"}]}))
    assert changed["metadata"]["annotations"][APPLIED] != record


def _owned_by(uid: str) -> dict[str, Any]:
    """A Service written for the InferenceService of ``uid``: its reference and recorded uid."""
    reference = {"kind": "InferenceService", "name": "chat", "uid": uid, "controller": True}
    metadata = {
        "name": "chat",
        "namespace": "default",
        "annotations": {OWNER_UID_ANNOTATION: uid, "team": "a"},
        "ownerReferences": [reference],
    }
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": {"type": "X"}}


def test_the_record_is_the_same_for_every_owner_of_the_same_spec() -> None:
    first, second = recorded(_owned_by("u1")), recorded(_owned_by("u2"))

    assert first["metadata"]["annotations"][APPLIED] == second["metadata"]["annotations"][APPLIED]
    assert json.loads(first["metadata"]["annotations"][APPLIED])["keys"]["metadata"] == {
        "annotations": {"team": 1}
    }


def test_the_edge_and_the_core_name_the_same_uid_annotation() -> None:
    assert OWNER_UID_ANNOTATION == UID_ANNOTATION
