"""The runtime catalog of a namespace is built once per version of its runtimes: reused while
they stand (selection's memo with it), replaced when one of them changes, and only one kept
per namespace, so runtime changes never pile catalogs (or memos) up."""

from __future__ import annotations

from ome_operator.cluster.informing import Changed, Relisted
from ome_operator.controller.snapshot import Caches
from tests.builders import runtime_manifest


def runtime(name: str, version: str, *, cluster: bool = True, namespace: str = "team-a") -> dict:
    obj = runtime_manifest(name, cluster=cluster, namespace=namespace)
    obj["metadata"]["resourceVersion"] = version
    return obj


def caches() -> Caches:
    found = Caches()
    found.cluster_serving_runtimes.apply([Relisted(None, (runtime("vllm", "1"),))])
    found.serving_runtimes.apply(
        [
            Relisted(
                None,
                (
                    runtime("a", "1", cluster=False),
                    runtime("b", "1", cluster=False, namespace="team-b"),
                ),
            )
        ]
    )
    return found


def test_a_catalog_is_reused_while_its_runtimes_stand() -> None:
    found = caches()

    first = found.runtimes("team-a")
    found.serving_runtimes.apply(
        [Changed("MODIFIED", runtime("b", "2", cluster=False, namespace="team-b"))]
    )

    assert found.runtimes("team-a") is first  # another namespace's runtime changed
    assert [r.name for r in first.namespaced] == ["a"]


def test_a_runtime_change_replaces_the_catalogs_it_is_in_and_keeps_one_per_namespace() -> None:
    found = caches()
    before = {ns: found.runtimes(ns) for ns in ("team-a", "team-b")}

    found.cluster_serving_runtimes.apply([Changed("MODIFIED", runtime("vllm", "2"))])
    after = {ns: found.runtimes(ns) for ns in ("team-a", "team-b")}

    assert all(after[ns] is not before[ns] for ns in after)
    assert [r.metadata.resource_version for r in after["team-a"].cluster] == ["2"]
    assert {ns: catalog for ns, (_, catalog) in found._catalogs.items()} == after
