"""S16.6 and S16.7 over HTTP: a runtime's CREATE, UPDATE and DELETE reviews warn which
InferenceServices the change moves (from the operator's caches) and which runtimes it ties
with; never a denial. ``ome_runtime_change_moved_inferenceservices`` observes each count."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest
from tests.integration.test_webhook_http import admission_review, allowed, post_review
from tests.support.kube_access import apply_object, eventually
from tests.support.kube_emulator import ApiServerLikeEmulator
from tests.support.operator_run import RunningOperator

NS = "default"
MOVED = "ome_runtime_change_moved_inferenceservices"
_RT = runtime_manifest("rt")
_SEED = (
    model_manifest("llama"),
    _RT,
    *(isvc_manifest(name, namespace=NS) for name in ("svc-1", "svc-2", "svc-3")),
    isvc_manifest("other", namespace="team-b"),
)


async def _seeded(kube: ApiServerLikeEmulator, operator: RunningOperator) -> None:
    """The seed applied, and every InferenceService and runtime in the operator's caches."""
    for manifest in _SEED:
        await apply_object(kube, manifest)
    await post_review(operator, admission_review(runtime_manifest("warm-up", disabled=True)))
    controller = operator.controller

    def visible() -> bool:
        runtimes = [r.name for r in controller.caches.runtimes(NS)]
        model = controller.caches.models(NS, "llama").lookup(NS, "llama")
        return len(controller.store) == 4 and runtimes == ["rt"] and model is not None

    await eventually(visible, timeout=10.0)


def _moves(count: int, *listed: str) -> str:
    return f"this change moves {count} InferenceService(s) to another runtime: " + ", ".join(listed)


def _observed(operator: RunningOperator, kind: str, operation: str) -> tuple[float, float]:
    labels = {"kind": kind, "operation": operation}
    return (
        operator.metric(f"{MOVED}_count", **labels),
        operator.metric(f"{MOVED}_sum", **labels),
    )


def _relabelled(manifest: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(manifest)
    changed["metadata"]["labels"] = {"team": "platform"}
    return changed


CASES = [
    pytest.param(
        admission_review(runtime_manifest("better", formats=[entry(autoSelect=True, priority=5)])),
        allowed(
            _moves(
                4,
                "default/svc-1 (CSR/rt -> CSR/better)",
                "default/svc-2 (CSR/rt -> CSR/better)",
                "default/svc-3 (CSR/rt -> CSR/better)",
                "team-b/other (CSR/rt -> CSR/better)",
            )
        ),
        ("ClusterServingRuntime", "CREATE", 4),
        id="a new cluster runtime that outranks the current one moves every service",
    ),
    pytest.param(
        admission_review(runtime_manifest("local", cluster=False, namespace=NS)),
        allowed(
            _moves(
                3,
                "default/svc-1 (CSR/rt -> SR/local)",
                "default/svc-2 (CSR/rt -> SR/local)",
                "default/svc-3 (CSR/rt -> SR/local)",
            )
        ),
        ("ServingRuntime", "CREATE", 3),
        id="a namespaced runtime moves its namespace's services only",
    ),
    pytest.param(
        admission_review(None, operation="DELETE", old=_RT),
        allowed(
            _moves(
                4,
                "default/svc-1 (CSR/rt -> -)",
                "default/svc-2 (CSR/rt -> -)",
                "default/svc-3 (CSR/rt -> -)",
                "team-b/other (CSR/rt -> -)",
            )
        ),
        ("ClusterServingRuntime", "DELETE", 4),
        id="deleting the selected runtime leaves every service with none",
    ),
    pytest.param(
        admission_review(_relabelled(_RT), operation="UPDATE", old=_RT),
        allowed(),
        ("ClusterServingRuntime", "UPDATE", 0),
        id="an edit without effect warns nothing",
    ),
    pytest.param(
        admission_review(runtime_manifest("alpha")),
        allowed(
            _moves(
                4,
                "default/svc-1 (CSR/rt -> CSR/alpha)",
                "default/svc-2 (CSR/rt -> CSR/alpha)",
                "default/svc-3 (CSR/rt -> CSR/alpha)",
                "team-b/other (CSR/rt -> CSR/alpha)",
            ),
            "runtime alpha ties with rt for model llama (score 2): the name decides, "
            "alpha is selected",
        ),
        ("ClusterServingRuntime", "CREATE", 4),
        id="a runtime equal to the selected one wins by its name: moved and tied",
    ),
    pytest.param(
        admission_review(runtime_manifest("zulu")),
        allowed(
            "runtime zulu ties with rt for model llama (score 2): the name decides, rt is selected"
        ),
        ("ClusterServingRuntime", "CREATE", 0),
        id="a runtime that loses a tie by its name moves nothing but is warned about",
    ),
]


@pytest.mark.parametrize(("review", "expected", "observed"), CASES)
async def test_a_runtime_change_is_warned_about(
    kube: ApiServerLikeEmulator,
    operator: RunningOperator,
    review: dict[str, Any],
    expected: dict[str, Any],
    observed: tuple[str, str, int],
) -> None:
    await _seeded(kube, operator)
    kind, operation, moved = observed
    count, total = _observed(operator, kind, operation)

    assert await post_review(operator, review) == expected
    assert _observed(operator, kind, operation) == (count + 1, total + moved)


async def test_more_than_five_moved_are_counted_not_listed(
    kube: ApiServerLikeEmulator, operator: RunningOperator
) -> None:
    await _seeded(kube, operator)
    for name in ("svc-4", "svc-5", "svc-6"):
        await apply_object(kube, isvc_manifest(name, namespace=NS))
    await eventually(lambda: len(operator.controller.store) == 7, timeout=10.0)

    response = await post_review(operator, admission_review(None, operation="DELETE", old=_RT))

    assert response == allowed(
        _moves(
            7,
            "default/svc-1 (CSR/rt -> -)",
            "default/svc-2 (CSR/rt -> -)",
            "default/svc-3 (CSR/rt -> -)",
            "default/svc-4 (CSR/rt -> -)",
            "default/svc-5 (CSR/rt -> -)",
        )
        + ", and 2 more"
    )
