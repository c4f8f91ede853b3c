"""Reviews keep no memory: kopf's own memories keep one per object uid of every UPDATE and
DELETE review, for ever, so reviews with ever new uids would grow the operator without bound."""

from __future__ import annotations

import functools
from typing import Any

import kopf
import pytest
from kopf._core.reactor.inventory import ResourceMemories

from ome_operator.handlers.review_server import remembering_nothing

REVIEWS = 1_000


async def _review_as_kopf_does(
    review: dict[str, Any], *, memories: Any, memobase: kopf.Memo
) -> kopf.Memo:
    """What kopf's ``serve_admission_request`` does with its memories for one review."""
    operation = review["request"]["operation"]
    body = review["request"]["object"]
    return await memories.recall_memo(body, memobase=memobase, ephemeral=operation == "CREATE")


def _update(uid: int) -> dict[str, Any]:
    body = {"metadata": {"uid": f"uid-{uid}", "name": "chat", "namespace": "team-a"}}
    return {"request": {"operation": "UPDATE", "object": body}}


@pytest.mark.parametrize(
    ("wrapped", "kept"),
    [
        pytest.param(True, 0, id="through the review server: no memory is kept"),
        pytest.param(False, REVIEWS, id="kopf's own: one memory per uid, for ever"),
    ],
)
async def test_updates_with_new_uids_keep_no_memory(wrapped: bool, kept: int) -> None:
    memories = ResourceMemories()
    memobase = kopf.Memo(options="the operator's options")
    fn = functools.partial(_review_as_kopf_does, memories=memories, memobase=memobase)
    served = remembering_nothing(fn) if wrapped else fn
    memos = [await served(_update(uid)) for uid in range(REVIEWS)]
    assert (len(memories._items), {memo.options for memo in memos}) == (
        kept,
        {"the operator's options"},
    )
