"""Every offline ``console`` block of README.md and docs/ prints what the page shows: each
``$ kubectl ome ...``, ``$ kubectl-ome ...`` or ``$ ome-operator ...`` line (a pipeline
included) is run from the repository's root, and what it prints must be the lines below it, to
the character (tests/support/console_blocks.py). The blocks that need a cluster
are replayed by tests/controlplane/test_docs_console.py."""

from __future__ import annotations

import pytest

from tests.support.console_blocks import blocks, run

OFFLINE = [block for block in blocks() if block.offline]


def test_the_pages_hold_the_offline_blocks_the_tests_replay() -> None:
    assert {block.page for block in OFFLINE} >= {
        "README.md",
        "docs/autoscaling.md",
        "docs/changing-runtimes-safely.md",
        "docs/configuration.md",
    }


@pytest.mark.parametrize("block", [pytest.param(b, id=b.name) for b in OFFLINE])
def test_a_documented_command_prints_what_the_page_shows(block) -> None:
    for step in block.steps:
        assert (step.command, run(step)) == (step.command, step.output)
