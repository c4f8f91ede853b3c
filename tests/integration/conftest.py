"""Fixtures for tests that run the real operator against the emulator."""

import logging
from collections.abc import AsyncIterator

import pytest

from ome_operator.controller.runtime import UNEXPECTED_ERROR
from tests.support.operator_run import RunningOperator, running_operator


class _Unexpected(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(UNEXPECTED_ERROR):
            self.found.append(f"{record.getMessage()}: {record.exc_info and record.exc_info[1]!r}")


@pytest.fixture
async def operator(kube, kubeconfig) -> AsyncIterator[RunningOperator]:
    """The operator (kopf, handlers, controller, webhook server) running against ``kube``; no
    pass of it may end in an exception no rule handles."""
    unexpected, logger = _Unexpected(), logging.getLogger("ome_operator")
    level = logger.level
    logger.setLevel(logging.INFO)  # as `ome-operator run` logs: a bad info line raises too
    logger.addHandler(unexpected)
    try:
        async with running_operator() as running:
            yield running
    finally:
        logger.removeHandler(unexpected)
        logger.setLevel(level)
    assert unexpected.found == []
