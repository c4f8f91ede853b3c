"""The informer-fed caches of written objects: what a reconcile finds, and which changes are
reported for re-queueing (S9), across watch events and relists."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.cluster.informing import Changed, Relisted
from ome_operator.controller.owned import KindCache, OwnedObjects


def obj(
    name: str, version: str = "1", *, namespace: str = "default", owner: str | None = "chat"
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": version}
    if owner is not None:
        meta["labels"] = {"ome.io/inferenceservice": owner}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}


def listed(*items: dict[str, Any], namespace: str | None = None) -> Relisted:
    return Relisted(namespace, items)


def reported(batches: list[list[Any]], scopes=(None,)) -> tuple[KindCache, list[tuple]]:
    seen: list[tuple] = []
    cache = KindCache(
        "Deployment",
        lambda ns, owner, o, deleted: seen.append(
            (ns, owner, o["metadata"]["name"], o["metadata"]["resourceVersion"], deleted)
        ),
        scopes,
    )
    for batch in batches:
        cache.apply(batch)
    return cache, seen


@pytest.mark.parametrize(
    ("batches", "expected"),
    [
        pytest.param(
            [[listed(obj("a"), obj("b"))]],
            [],
            id="the first listing reports nothing: every service is reconciled at start",
        ),
        pytest.param(
            [[listed(obj("a"))], [Changed("MODIFIED", obj("a", "2"))]],
            [("default", "chat", "a", "2", False)],
            id="a watch event reports its owner",
        ),
        pytest.param(
            [[listed(obj("a"))], [Changed("DELETED", obj("a", "2"))]],
            [("default", "chat", "a", "2", True)],
            id="a deletion is reported as one",
        ),
        pytest.param(
            [[listed(obj("a"), obj("b"), obj("c"))], [listed(obj("a"), obj("b", "5"))]],
            [("default", "chat", "c", "1", True), ("default", "chat", "b", "5", False)],
            id="a relist reports what vanished and what changed while the watch was down",
        ),
        pytest.param(
            [[listed(obj("a"))], [listed(obj("a"), obj("new"))]],
            [("default", "chat", "new", "1", False)],
            id="a relist reports what appeared while the watch was down",
        ),
        pytest.param(
            [[listed(obj("a"))], [Changed("MODIFIED", obj("x", "3", owner=None))]],
            [],
            id="an object without the owner label is never reported",
        ),
    ],
)
def test_reported_changes(batches: list[list[Any]], expected: list[tuple]) -> None:
    assert reported(batches)[1] == expected


def _hpa(version: str, generation: int, **status: Any) -> dict[str, Any]:
    found = obj("chat-engine", version)
    found["metadata"]["generation"] = generation
    return {**found, "kind": "HorizontalPodAutoscaler", "status": status}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param(
            [_hpa("2", 1, currentReplicas=2)],
            [],
            id="an autoscaler's status change alone re-queues nothing",
        ),
        pytest.param(
            [_hpa("2", 2)],
            [("chat-engine", "2", False)],
            id="a change of its spec does",
        ),
        pytest.param(
            [{**_hpa("2", 1), "metadata": {**_hpa("2", 1)["metadata"], "annotations": {"a": "b"}}}],
            [("chat-engine", "2", False)],
            id="so does a change of its metadata",
        ),
    ],
)
def test_a_kind_whose_status_no_pass_reads(changes: list[Any], expected: list[tuple]) -> None:
    seen: list[tuple] = []
    cache = KindCache(
        "HorizontalPodAutoscaler",
        lambda ns, owner, o, deleted: seen.append(
            (o["metadata"]["name"], o["metadata"]["resourceVersion"], deleted)
        ),
        status_read=False,
    )
    cache.apply([listed(_hpa("1", 1, currentReplicas=1))])
    cache.apply([Changed("MODIFIED", change) for change in changes])
    assert seen == expected


def test_a_relist_of_one_namespace_keeps_the_others() -> None:
    cache, seen = reported(
        [
            [listed(obj("a", namespace="team-a"), namespace="team-a")],
            [listed(obj("b", namespace="team-b"), namespace="team-b")],
            [listed(namespace="team-b")],
        ],
        scopes=("team-a", "team-b"),
    )

    assert seen == [("team-b", "chat", "b", "1", True)]
    assert dict(cache.owned_by("team-a", "chat")) == {"a": obj("a", namespace="team-a")}
    assert cache.owned_by("team-b", "chat") == {}


@pytest.mark.parametrize(
    ("batches", "synced"),
    [
        pytest.param([], False, id="nothing listed yet"),
        pytest.param([[listed(namespace="team-a")]], False, id="one of two namespaces listed"),
        pytest.param(
            [[listed(namespace="team-a")], [listed(namespace="team-b")]],
            True,
            id="every namespace listed",
        ),
    ],
)
def test_a_cache_is_synced_once_every_namespace_is_listed(batches, synced: bool) -> None:
    assert reported(batches, scopes=("team-a", "team-b"))[0].synced is synced


def test_objects_are_found_by_owner_and_follow_a_label_change() -> None:
    cache, _ = reported(
        [
            [listed(obj("a"), obj("b"), obj("x", owner=None))],
            [Changed("MODIFIED", obj("b", "2", owner="other"))],
        ]
    )

    assert dict(cache.owned_by("default", "chat")) == {"a": obj("a")}
    assert dict(cache.owned_by("default", "other")) == {"b": obj("b", "2", owner="other")}
    assert cache.named("default", "x") == obj("x", owner=None)
    assert cache.owned_by("default", "gone") == {}


def test_existing_finds_owned_objects_and_same_named_budgets_of_anyone() -> None:
    objects = OwnedObjects()
    deployment, foreign_budget = obj("chat-engine"), obj("chat-router", owner=None)
    objects.caches["Deployment"].apply([listed(deployment)])
    objects.caches["PodDisruptionBudget"].apply([listed(foreign_budget, obj("unrelated"))])

    assert objects.existing("default", "chat", ["chat-engine", "chat-router"]) == {
        ("Deployment", "chat-engine"): deployment,
        ("PodDisruptionBudget", "chat-router"): foreign_budget,
    }


def _pod(name: str, component: str | None, owner: str = "chat") -> dict[str, Any]:
    labels = {"ome.io/inferenceservice": owner}
    if component is not None:
        labels["component"] = component
    meta = {"name": name, "namespace": "default", "resourceVersion": "1", "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def test_pods_are_found_by_their_inference_service_by_component_in_name_order() -> None:
    objects = OwnedObjects()
    engine_b, engine_a = _pod("chat-engine-b", "engine"), _pod("chat-engine-a", "engine")
    router = _pod("chat-router-x", "router")
    objects.caches["Pod"].apply(
        [
            listed(
                router,
                engine_b,
                engine_a,
                _pod("other-engine-a", "engine", owner="other"),
                _pod("chat-no-component", None),
            )
        ]
    )

    assert objects.pods("default", "chat") == {"engine": (engine_a, engine_b), "router": (router,)}
    assert objects.pods("default", "gone") == {}


_BY_OWNER = "ome.io/inferenceservice"
_PODS = ("Pod", "ome.io/inferenceservice,ome.io/managed-by!=OMENative")


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        pytest.param(
            frozenset(),
            [
                ("Deployment", _BY_OWNER),
                ("Service", _BY_OWNER),
                ("InferenceReplica", _BY_OWNER),
                ("LeaderWorkerSet", _BY_OWNER),
                ("HorizontalPodAutoscaler", _BY_OWNER),
                ("ScaledObject", _BY_OWNER),
                ("PodDisruptionBudget", None),
                _PODS,
            ],
            id="labelled kinds by owner, budgets of anyone, pods but OMENative ones",
        ),
        pytest.param(
            frozenset({"LeaderWorkerSet", "ScaledObject"}),
            [
                ("Deployment", _BY_OWNER),
                ("Service", _BY_OWNER),
                ("InferenceReplica", _BY_OWNER),
                ("HorizontalPodAutoscaler", _BY_OWNER),
                ("PodDisruptionBudget", None),
                _PODS,
            ],
            id="without the LeaderWorkerSet and KEDA APIs their kinds are not watched",
        ),
    ],
)
def test_what_the_caches_of_written_objects_watch(
    missing: frozenset[str], expected: list[tuple[str, str | None]]
) -> None:
    watched = OwnedObjects().watched(missing=missing)
    assert [(w.kind.kind, w.label_selector) for w in watched] == expected


@pytest.mark.parametrize(
    ("batches", "written", "expected"),
    [
        pytest.param(
            [[listed(obj("a", "5"))]],
            obj("a", "7"),
            "7",
            id="an own patch newer than the watch's version is what the next pass reads",
        ),
        pytest.param(
            [[listed(obj("a", "5"))], [Changed("MODIFIED", obj("a", "9"))]],
            obj("a", "7"),
            "9",
            id="a newer version the watch already showed is kept",
        ),
        pytest.param(
            [[listed(obj("a", "5"))], [Changed("DELETED", obj("a", "8"))]],
            obj("a", "7"),
            None,
            id="an object the watch showed deleted stays deleted",
        ),
        pytest.param(
            [[listed()]], obj("a", "7"), None, id="an apply the watch does not show is not there"
        ),
        pytest.param(
            [[listed()]],
            {**obj("a", "7"), "created": True},
            "7",
            id="a create counts as there until the watch shows it",
        ),
        pytest.param(
            [[listed(obj("a", "x5"))]],
            obj("a", "x7"),
            "x5",
            id="versions that are not integers are left to the watch",
        ),
    ],
)
def test_own_writes_are_read_until_the_watch_shows_a_version_as_new(
    batches: list[list[Any]], written: dict[str, Any], expected: str | None
) -> None:
    cache, seen = reported(batches)
    before = list(seen)
    created = written.pop("created", False)

    cache.record.wrote("inferenceservice", written, created=created)

    found = cache.named("default", "a")
    assert (found["metadata"]["resourceVersion"] if found else None) == expected
    assert seen == before  # nothing reported: it is the operator's own write
    assert list(cache.owned_by("default", "chat").values()) == ([found] if found else [])


def test_a_cached_object_read_is_a_copy_that_cannot_change_the_cache() -> None:
    from ome_operator.cluster.informing import Relisted
    from ome_operator.controller.owned import KindCache

    deployment = {
        "kind": "Deployment",
        "metadata": {
            "name": "chat-engine",
            "namespace": "default",
            "resourceVersion": "1",
            "labels": {"ome.io/inferenceservice": "chat"},
        },
        "spec": {"replicas": 1},
    }
    cache = KindCache("Deployment", lambda *_: None)
    cache.apply([Relisted(None, (deployment,))])

    read = cache.owned_by("default", "chat")["chat-engine"]
    read["spec"]["replicas"] = 5

    assert cache.named("default", "chat-engine") == deployment
