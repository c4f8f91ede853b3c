"""What the operator registers with kopf: its own informers watch the cluster, kopf nothing."""

from __future__ import annotations

import kopf

import ome_operator.handlers  # noqa: F401  (registers the handlers in kopf's default registry)


def test_kopf_watches_nothing_itself() -> None:
    """Every watch is the controller's (410s relisted with backoff, deep objects set aside):
    a kopf watcher would end the process on a 410 answered to its watch request."""
    registry = kopf.get_default_registry()

    assert [
        registry._indexing.get_all_handlers(),
        registry._watching.get_all_handlers(),
        registry._spawning.get_all_handlers(),
        registry._changing.get_all_handlers(),
    ] == [[], [], [], []]


def test_kopf_serves_the_three_validating_webhooks() -> None:
    ids = sorted(h.id for h in kopf.get_default_registry()._webhooks.get_all_handlers())

    assert ids == [
        "validate-clusterservingruntime",
        "validate-inferenceservice",
        "validate-servingruntime",
    ]
