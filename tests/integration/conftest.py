"""Fixtures for tests that run the real operator against the emulator."""

from collections.abc import AsyncIterator

import pytest

from tests.support.operator_run import RunningOperator, running_operator


@pytest.fixture
async def operator(kube, kubeconfig) -> AsyncIterator[RunningOperator]:
    """The operator (kopf, handlers, controller, webhook server) running against ``kube``."""
    async with running_operator() as running:
        yield running
