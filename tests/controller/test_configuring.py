"""The configuration source (S1.10, ``--config-cache-ttl``): the ConfigMap read at most once
per ttl, defaults when it is missing, the last good configuration kept when a read fails, and a
configuration the manager must not start with fatal only at start."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from ome_operator.controller.configuring import ConfigSource
from ome_operator.core.operator_config import OperatorConfig, StartupConfigError
from tests.support.kube_access import apply_object


def config_map(**data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "data": data,
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def reads(kube) -> int:
    return sum(1 for r in kube if r.resource is not None and r.resource.plural == "configmaps")


async def test_a_missing_config_map_means_the_defaults(kube, api) -> None:
    source = ConfigSource(lambda: api, "ome")

    assert await asyncio.to_thread(source) == OperatorConfig()


async def test_the_config_map_is_read_at_most_once_per_ttl(kube, api) -> None:
    await apply_object(kube, config_map(clusterDomain="example.org"))
    clock = Clock()
    source = ConfigSource(lambda: api, "ome", ttl=30, clock=clock)
    mark = reads(kube)

    domains = []
    for now in (0, 10, 29.9, 30, 45):
        clock.now = now
        domains.append((await asyncio.to_thread(source)).cluster_domain)

    assert domains == ["example.org"] * 5
    assert reads(kube) - mark == 2  # at 0 and at 30


@pytest.mark.kmock(strict=False)
async def test_a_failed_read_keeps_the_last_configuration(kube, api, caplog) -> None:
    caplog.set_level(logging.ERROR, logger="ome_operator.config")
    await apply_object(kube, config_map(clusterDomain="example.org"))
    clock = Clock()
    source = ConfigSource(lambda: api, "ome", ttl=30, clock=clock)
    await asyncio.to_thread(source)
    kube.inject_fault(500, action="fetch", resource="v1/configmaps")

    clock.now = 31
    kept = await asyncio.to_thread(source)

    assert kept.cluster_domain == "example.org"
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to read the operator configuration; keeping the last one"
    ]


async def test_a_configuration_the_manager_cannot_start_with_is_fatal_only_at_start(
    kube, api, caplog
) -> None:
    caplog.set_level(logging.ERROR, logger="ome_operator.config")
    deploy = json.dumps({"defaultDeploymentMode": "OMENative"})
    await apply_object(kube, config_map(deploy=deploy))
    source = ConfigSource(lambda: api, "ome", ttl=0)

    with pytest.raises(StartupConfigError):
        await asyncio.to_thread(source.load)
    assert await asyncio.to_thread(source) == OperatorConfig()  # later: logged, last one kept
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to initialize deployment configuration: "
        'defaultDeploymentMode "OMENative" is not RawDeployment'
    ]


async def test_peek_holds_the_configuration_only_while_it_is_fresh(kube, api) -> None:
    clock = Clock()
    source = ConfigSource(lambda: api, "ome", ttl=30, clock=clock)
    before = source.peek()
    loaded = await asyncio.to_thread(source)
    held = source.peek()
    clock.now = 30
    assert (before, held, source.peek()) == (None, loaded, None)
