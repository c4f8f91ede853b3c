"""Events as posted (S8.3, OPEN-34): about a namespaced object in its namespace, about a
cluster-scoped one in ``default`` (where ``kubectl describe`` finds them), always from
``v1beta1Controllers``."""

from __future__ import annotations

import pytest

from ome_operator.core.plans import Event
from ome_operator.core.rendering.events import event_about, once_name

NOW = "2026-12-01T12:00:00Z"
WARNING = Event("Warning", "RuntimeNotFound", "runtime x not found")


def expected(namespace: str, involved: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "chat.", "namespace": namespace},
        "involvedObject": involved,
        "reason": "RuntimeNotFound",
        "message": "runtime x not found",
        "type": "Warning",
        "source": {"component": "v1beta1Controllers"},
        "reportingComponent": "v1beta1Controllers",
        "firstTimestamp": NOW,
        "lastTimestamp": NOW,
        "count": 1,
    }


@pytest.mark.parametrize(
    ("obj", "event"),
    [
        pytest.param(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceService",
                "metadata": {"name": "chat", "namespace": "team-a", "uid": "u1"},
            },
            expected(
                "team-a",
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "InferenceService",
                    "name": "chat",
                    "namespace": "team-a",
                    "resourceVersion": None,
                    "uid": "u1",
                },
            ),
            id="an event about a namespaced object is in its namespace",
        ),
        pytest.param(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "ClusterServingRuntime",
                "metadata": {"name": "chat", "uid": "u2", "resourceVersion": "7"},
            },
            expected(
                "default",
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "ClusterServingRuntime",
                    "name": "chat",
                    "resourceVersion": "7",
                    "uid": "u2",
                },
            ),
            id="an event about a cluster-scoped object is in default",
        ),
    ],
)
def test_an_event_is_rendered_about_its_object(obj: dict, event: dict) -> None:
    assert event_about(obj, WARNING, NOW) == event


def _isvc(name: str = "chat", uid: str = "u1", generation: int = 1) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "uid": uid, "generation": generation}}


@pytest.mark.parametrize(
    ("other", "same"),
    [
        pytest.param((_isvc(), WARNING), True, id="the same decision of a generation: one name"),
        pytest.param((_isvc(generation=2), WARNING), False, id="another generation"),
        pytest.param((_isvc(uid="u2"), WARNING), False, id="an InferenceService made again"),
        pytest.param(
            (_isvc(), Event("Warning", WARNING.reason, "another message")),
            False,
            id="another message",
        ),
    ],
)
def test_an_event_of_a_generation_has_one_name(other, same) -> None:
    assert (once_name(_isvc(), WARNING) == once_name(*other)) is same


def test_a_named_event_is_named_within_the_limit() -> None:
    name = once_name(_isvc(name="x" * 253), WARNING)
    assert (len(name), name[:237], len(once_name(_isvc(), WARNING))) == (253, "x" * 236 + ".", 21)
    assert event_about(_isvc(), WARNING, NOW, name="chat.0123")["metadata"] == {
        "name": "chat.0123",
        "namespace": "ns",
    }
