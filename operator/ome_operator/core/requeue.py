"""Which InferenceServices a runtime event re-queues (docs/reference/status-and-events.md,
Retries and re-queues).

Re-queueing every InferenceService of a runtime's scope on every event of it would be simple,
but a pass can only decide differently when the event changed something a pass reads:

- nothing, when the runtime's ``spec`` is the same before and after (a label, an annotation, a
  status or bookkeeping change): selection, merging and rendering read the spec, the name and
  the scope, never the rest of the metadata;
- otherwise, within the runtime's scope: an InferenceService the runtime can be the runtime of,
  as it was or as it is (``impact.may_read``: it names it, or the runtime qualifies for its
  model), and one that has no runtime (``RuntimeReady`` is ``False``: its condition's message
  counts and lists every runtime of the scope).

Every other InferenceService keeps its plan whatever the event: its pass would write nothing.
"""

from __future__ import annotations

from ..models import InferenceService, ServingRuntime
from .conditions import find_condition
from .impact import may_read
from .isvc_status import previous_conditions
from .plans import Snapshot

__all__ = ["decision_inputs_changed", "needs_pass"]


def decision_inputs_changed(before: ServingRuntime | None, after: ServingRuntime | None) -> bool:
    """Whether a pass can read anything different: the runtime appeared, went (or no longer
    parses), or its spec changed."""
    if before is None or after is None:
        return before is not after
    return before.spec != after.spec


def _unresolved(isvc: InferenceService) -> bool:
    ready = find_condition(previous_conditions(isvc), "RuntimeReady")
    return ready is not None and ready.get("status") == "False"


def needs_pass(
    isvc: InferenceService,
    snapshot: Snapshot,
    before: ServingRuntime | None,
    after: ServingRuntime | None,
) -> bool:
    """Whether the event that turned ``before`` into ``after`` (either None: created, deleted)
    can change the plan of a pass of ``isvc`` over ``snapshot`` (the caches after the event)."""
    changed = [r for r in (before, after) if r is not None]
    if not any(r.seen_from(isvc.namespace) for r in changed):
        return False
    return _unresolved(isvc) or may_read(isvc, snapshot, changed)
