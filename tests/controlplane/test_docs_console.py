"""Every ``console`` block of README.md and docs/ that talks to a cluster prints, against this
tier's cluster with the operator and its webhook running, what the page shows, to the character
(tests/support/console_blocks.py; the offline blocks are tests/test_docs_examples.py's).

A page's blocks are one walk-through, replayed in order. It starts from a cluster without what
it creates: the objects of the files it applies are deleted before and after it, and the
namespaces it creates after it. A command that only
reads (``kubectl get``, ``kubectl ome``) is run again until it prints the page's lines, for up
to 60 s: what it reads is written by the operator, a moment after the commands before it.
"""

from __future__ import annotations

import shlex
import time

import pytest

from tests.support.console_blocks import ROOT, Block, blocks, run

pytestmark = pytest.mark.controlplane

CLUSTER_BLOCKS = [block for block in blocks() if not block.offline]
#: Seconds a reading command may take to print what the page shows.
SETTLE = 60.0


def _words(blocks: list[Block]) -> list[list[str]]:
    return [shlex.split(s.command.split("|", 1)[0]) for b in blocks for s in b.steps]


def _applied_files(blocks: list[Block]) -> list[str]:
    found = []
    for words in _words(blocks):
        if words[:2] == ["kubectl", "apply"]:
            found += [words[i + 1] for i, word in enumerate(words[:-1]) if word == "-f"]
    return found


def _created_namespaces(blocks: list[Block]) -> list[str]:
    return [w[3] for w in _words(blocks) if w[:3] == ["kubectl", "create", "namespace"]]


def _reads(command: str) -> bool:
    words = shlex.split(command)
    return words[:2] == ["kubectl", "ome"] or "get" in words[1:3]


def _pages() -> dict[str, list[Block]]:
    """The cluster blocks by page: a page's blocks are one walk-through, in order."""
    pages: dict[str, list[Block]] = {}
    for block in CLUSTER_BLOCKS:
        pages.setdefault(block.page, []).append(block)
    return pages


def test_the_pages_hold_the_cluster_blocks_the_tier_replays() -> None:
    assert sorted(_pages()) == ["docs/install.md", "docs/webhook.md"]


@pytest.mark.parametrize("page", sorted(_pages()))
def test_a_page_s_cluster_commands_print_what_the_page_shows(cluster, operator, page):
    kubeconfig = {"KUBECONFIG": str(cluster.plane.admin_kubeconfig)}
    walk = _pages()[page]
    files = _applied_files(walk)
    for file in files:
        cluster.plane.kubectl("delete", "--ignore-not-found", "--wait", "-f", str(ROOT / file))
    try:
        for step in (step for block in walk for step in block.steps):
            deadline = time.monotonic() + (SETTLE if _reads(step.command) else 0)
            printed = run(step, kubeconfig, merged=True)
            while printed != step.output and time.monotonic() < deadline:
                time.sleep(0.5)
                printed = run(step, kubeconfig, merged=True)
            assert printed == step.output, f"$ {step.command}\nprinted:\n{printed}"
    finally:
        for file in reversed(files):
            cluster.plane.kubectl("delete", "--ignore-not-found", "--wait", "-f", str(ROOT / file))
        for namespace in _created_namespaces(walk):
            cluster.plane.kubectl("delete", "namespace", namespace, "--ignore-not-found")
