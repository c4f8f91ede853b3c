"""The targeted re-queue of a runtime event (``core.requeue``) against S9's "re-queue everything",
as a property: for random catalogs, InferenceServices (converged: their status is what their
last pass wrote) and one runtime event, every InferenceService left out would get the very plan
it already has. So re-queueing only the others converges to the same state."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ome_operator.core.impact import runtime_key, standing
from ome_operator.core.reconciling import reconcile
from ome_operator.core.requeue import decision_inputs_changed, needs_pass
from ome_operator.models import from_manifest
from tests.builders import make_runtime
from tests.fuzz.mutations import fuzz
from tests.fuzz.test_impact import _MODELS, _unique, isvcs, runtimes


def _relabelled(runtime: Any) -> Any:
    manifest = runtime.model_dump(by_alias=True, exclude_none=True)
    manifest = copy.deepcopy(manifest)
    manifest["metadata"]["labels"] = {"team": "platform"}
    return from_manifest(manifest)


@st.composite
def events(draw: st.DrawFn) -> tuple[list[Any], list[Any], Any, Any]:
    """Runtimes before, InferenceServices, and one event: a runtime (before, after)."""
    present = _unique(draw(st.lists(runtimes(), max_size=5)))
    services = [draw(isvcs(i)) for i in range(draw(st.integers(1, 6)))]
    kind = draw(st.sampled_from(["create", "edit", "relabel", "delete"] if present else ["create"]))
    if kind == "create":
        after = draw(runtimes())
        before = next((r for r in present if runtime_key(r) == runtime_key(after)), None)
    else:
        before = draw(st.sampled_from(present))
        after = {
            "delete": None,
            "relabel": _relabelled(before),
            "edit": None,
        }[kind]
        if kind == "edit":
            edited = draw(runtimes())
            after = make_runtime(
                before.name,
                cluster=before.is_cluster,
                namespace=before.namespace or "default",
                formats=[
                    f.model_dump(by_alias=True, exclude_none=True)
                    for f in edited.spec.supported_model_formats
                ],
                **({"disabled": True} if edited.disabled else {}),
            )
    return present, services, before, after


def _converged(isvc: Any, snapshot: Any) -> Any:
    """The InferenceService with the status its pass over ``snapshot`` writes."""
    plan = reconcile(isvc, snapshot)
    return isvc.model_copy(update={"status": plan.status or isvc.status})


@fuzz(300)
@given(events())
def test_what_is_not_requeued_would_be_decided_the_same(event) -> None:
    present, services, before, after = event
    others = [r for r in present if before is None or runtime_key(r) != runtime_key(before)]
    changed = others + ([after] if after is not None else [])
    for (isvc, snap_before), (_, snap_after) in zip(
        standing(services, present, _MODELS), standing(services, changed, _MODELS), strict=True
    ):
        isvc = _converged(isvc, snap_before)
        requeued = decision_inputs_changed(before, after) and needs_pass(
            isvc, snap_after, before, after
        )
        if not requeued:
            assert reconcile(isvc, snap_after) == reconcile(isvc, snap_before), isvc.name


@fuzz(100)
@given(events())
def test_a_label_change_requeues_nothing(event) -> None:
    _, _, before, _ = event
    if before is not None:
        assert not decision_inputs_changed(before, _relabelled(before))


def test_a_change_of_another_namespace_requeues_nothing() -> None:
    from tests.builders import make_isvc

    isvc = make_isvc("svc", namespace="team-a")
    other = make_runtime("local", cluster=False, namespace="team-b")
    [(_, snapshot)] = standing([isvc], [other], _MODELS)

    assert needs_pass(isvc, replace(snapshot), other, None) is False
