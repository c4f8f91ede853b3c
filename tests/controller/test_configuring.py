"""The configuration source (docs/configuration.md, "When the ConfigMap is read"): read once at
start (defaults when it is missing, fatal only there when the manager cannot start with it),
then kept current by a watch of that one ConfigMap; a change that decides differently is told
(the controller re-queues every InferenceService), one that does not is not."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import pytest

from ome_operator.controller.configuring import ConfigSource
from ome_operator.controller.watches import Watches
from ome_operator.core.operator_config import OperatorConfig, StartupConfigError
from tests.support.kube_access import apply_object, eventually


def config_map(**data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "data": data,
    }


def reads(kube) -> list[str]:
    """The verbs of the requests for ConfigMaps so far (a watch is a GET with ``watch``)."""
    return [
        "watch" if r.params.get("watch") else f"{r.method.name} {r.url.path}"
        for r in kube
        if r.resource is not None and r.resource.plural == "configmaps"
    ]


class Told:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


@pytest.fixture
async def watched(kube, api) -> AsyncIterator[tuple[ConfigSource, Told]]:
    """A source loaded at start, its watch running, changes counted."""
    source, told = ConfigSource(lambda: api, "ome"), Told()
    source.changed.subscribe(told)
    await asyncio.to_thread(source.load)
    watches = Watches()
    watches.start(lambda: api, [source.watched()], (None,), retry_delay=lambda n: 0.05)
    await asyncio.wait_for(watches.synced.wait(), 5)
    yield source, told
    await watches.stop()


async def test_a_missing_config_map_means_the_defaults(kube, api) -> None:
    source = ConfigSource(lambda: api, "ome")
    assert (await asyncio.to_thread(source.load), source()) == (OperatorConfig(), OperatorConfig())


async def test_a_change_is_taken_from_the_watch_without_a_read(kube, watched) -> None:
    source, told = watched
    mark = len(reads(kube))

    await apply_object(kube, config_map(clusterDomain="example.org"))
    await eventually(lambda: source().cluster_domain == "example.org")

    assert (told.count, source.peek().cluster_domain) == (1, "example.org")
    assert [r for r in reads(kube)[mark:] if r != "watch"] == [
        "POST /api/v1/namespaces/ome/configmaps"  # the test's own write: no GET by the source
    ]


async def test_a_change_that_decides_nothing_differently_is_not_told(kube, watched) -> None:
    source, told = watched
    await apply_object(kube, config_map(clusterDomain="example.org"))
    await eventually(lambda: told.count == 1)

    await apply_object(kube, config_map(clusterDomain="example.org", unread="x"))
    await apply_object(kube, config_map(clusterDomain="example.net"))
    await eventually(lambda: source().cluster_domain == "example.net")

    assert told.count == 2


async def test_deleting_the_config_map_brings_back_the_defaults(kube, watched) -> None:
    source, told = watched
    await apply_object(kube, config_map(clusterDomain="example.org"))
    await eventually(lambda: told.count == 1)

    async with kube.delete("/api/v1/namespaces/ome/configmaps/inferenceservice-config"):
        pass
    await eventually(lambda: told.count == 2)

    assert source() == OperatorConfig()


@pytest.mark.kmock(strict=False)
async def test_a_failed_read_at_start_leaves_the_configuration_to_the_watch(
    kube, api, caplog
) -> None:
    caplog.set_level(logging.ERROR, logger="ome_operator.config")
    await apply_object(kube, config_map(clusterDomain="example.org"))
    kube.inject_fault(500, action="fetch", resource="v1/configmaps")
    source = ConfigSource(lambda: api, "ome")

    assert await asyncio.to_thread(source.load) == OperatorConfig()
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to read the operator configuration; its watch brings it"
    ]


async def test_a_configuration_the_manager_cannot_start_with_is_fatal_only_at_start(
    kube, watched, api, caplog
) -> None:
    source, told = watched
    caplog.set_level(logging.ERROR, logger="ome_operator.config")
    deploy = json.dumps({"defaultDeploymentMode": "OMENative"})
    await apply_object(kube, config_map(deploy=deploy))
    message = (
        "Failed to initialize deployment configuration: "
        'defaultDeploymentMode "OMENative" is not RawDeployment'
    )
    await eventually(lambda: [r.getMessage() for r in caplog.records] == [message])

    assert (source(), told.count) == (OperatorConfig(), 0)  # later: logged, last one kept
    with pytest.raises(StartupConfigError):
        await asyncio.to_thread(ConfigSource(lambda: api, "ome").load)
