"""What the operator registers with kopf, where a setting depends on it."""

from __future__ import annotations

import kopf

import ome_operator.handlers  # noqa: F401  (registers the handlers in kopf's default registry)
from ome_operator.handlers.startup import NoDiffBase


def test_no_change_detecting_handler_needs_the_diff_base_the_operator_turns_off() -> None:
    """``NoDiffBase`` is only right while no on.create/update/delete/field/resume handler exists."""
    registry = kopf.get_default_registry()

    assert registry._changing.get_all_handlers() == []
    assert registry._spawning.get_all_handlers() == []  # daemons and timers diff too


def test_the_diff_base_stores_and_finds_nothing() -> None:
    storage, body = NoDiffBase(), kopf.Body({"metadata": {"name": "x"}, "spec": {"a": 1}})
    patch = kopf.Patch()

    storage.store(body=body, patch=patch, essence={"spec": {"a": 1}})

    assert (storage.build(body=body), storage.fetch(body=body), dict(patch)) == ({}, None, {})
