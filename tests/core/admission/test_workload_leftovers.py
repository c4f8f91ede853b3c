"""The warning of a workload of another mode beside the one a component is about to get (a mode
change the operator never cleans up, or OME's workload before ome-operator took over): one per
workload, naming it and what to do, from the mode resolved as the controller resolves it
(docs/troubleshooting.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ome_operator.core import workload_leftovers
from ome_operator.core.admission import review_inference_service
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.core.workload_leftovers import leftover_workload_warnings
from ome_operator.models import ServingRuntime
from tests.builders import make_isvc, make_runtime
from tests.core.admission.reviews import AUTO, LLAMA, MODE, RT, typo_message

LWS = ("LeaderWorkerSet", "lws-chat-engine")
REPLICA = ("InferenceReplica", "chat-engine")
DEPLOYMENT = ("Deployment", "chat-engine")
LEADER_WORKER = {"leader": {}, "worker": {"size": 1}}
MULTINODE_RT = make_runtime("multinode", engineConfig={"annotations": {MODE: "MultiNode"}})


def standing(*keys: tuple[str, str], deleting: tuple[str, str] | None = None):
    """A lookup holding workloads of these (kind, name); ``deleting`` is being deleted."""
    held: dict[tuple[str, str], Mapping[str, Any]] = {
        key: {"kind": key[0], "metadata": {"name": key[1]}} for key in keys
    }
    if deleting is not None:
        meta = {"name": deleting[1], "deletionTimestamp": "2026-01-01T00:00:00Z"}
        held[deleting] = {"kind": deleting[0], "metadata": meta}
    return lambda kind, name: held.get((kind, name))


def warning(component: str, mode: str, new: tuple[str, str], old: tuple[str, str]) -> str:
    condition = {"engine": "EngineReady", "decoder": "DecoderReady", "router": "RouterReady"}
    return (
        f"{component} resolves to {mode} ({new[0]} {new[1]}), but the {old[0]} {old[1]} of "
        "another mode (an earlier mode, or OME) is in namespace default: both run until it "
        f"is deleted; once {condition[component]} is True, delete it with "
        f"kubectl delete {old[0].lower()} {old[1]} -n default"
    )


def test_the_module_exports_its_rule():
    assert sorted(workload_leftovers.__all__) == ["WorkloadLookup", "leftover_workload_warnings"]


@pytest.mark.parametrize(
    ("isvc", "runtime", "lookup", "warnings"),
    [
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative"),
            None,
            standing(LWS),
            [warning("engine", "OMENative", REPLICA, LWS)],
            id="OMENative beside a LeaderWorkerSet of a MultiNode past warns",
        ),
        pytest.param(
            make_isvc("chat"),
            None,
            standing(LWS, REPLICA, DEPLOYMENT),
            [
                warning("engine", "RawDeployment", DEPLOYMENT, REPLICA),
                warning("engine", "RawDeployment", DEPLOYMENT, LWS),
            ],
            id="RawDeployment warns of each other mode's workload, in mode order",
        ),
        pytest.param(
            make_isvc("chat", engine=LEADER_WORKER),
            None,
            standing(DEPLOYMENT),
            [warning("engine", "OMENative", REPLICA, DEPLOYMENT)],
            id="a leader and workers resolve to OMENative, beside a Deployment",
        ),
        pytest.param(
            make_isvc("chat", runtime={"name": "multinode"}),
            MULTINODE_RT,
            standing(REPLICA),
            [warning("engine", "MultiNode", LWS, REPLICA)],
            id="the mode the runtime declares counts, as the controller merges it",
        ),
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative", decoder={}),
            None,
            standing(("Deployment", "chat-decoder")),
            [
                warning(
                    "decoder",
                    "OMENative",
                    ("InferenceReplica", "chat-decoder"),
                    ("Deployment", "chat-decoder"),
                )
            ],
            id="each component is checked on its own workloads",
        ),
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative"),
            None,
            standing(REPLICA),
            [],
            id="the component's own mode's workload is no leftover",
        ),
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative"),
            None,
            standing(deleting=LWS),
            [],
            id="a workload being deleted is no longer warned about",
        ),
        pytest.param(
            make_isvc("chat", annotations={MODE: "VirtualDeployment"}),
            None,
            standing(LWS, DEPLOYMENT),
            [],
            id="VirtualDeployment writes no workload, so nothing stands beside one",
        ),
        pytest.param(
            make_isvc("chat", router={"annotations": {MODE: "MultiNode"}}),
            None,
            standing(("Deployment", "chat-router")),
            [],
            id="a router that cannot run its mode gets no warning: the controller says why",
        ),
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative"),
            None,
            standing(("LeaderWorkerSet", "lws-other-engine")),
            [],
            id="another InferenceService's workload is not a leftover",
        ),
        pytest.param(
            make_isvc("chat", engine=None, deploymentMode="OMENative", decoder={}),
            None,
            standing(("Deployment", "chat-decoder")),
            [],
            id="without an engine nothing is written, so nothing stands beside it",
        ),
    ],
)
def test_a_workload_of_another_mode_is_warned_about_once_each(
    isvc, runtime: ServingRuntime | None, lookup, warnings
):
    assert leftover_workload_warnings(isvc, runtime, lookup) == warnings


def _review(isvc, lookup) -> tuple[bool, tuple[str, ...]]:
    verdict = _verdict(isvc, lookup)
    return verdict.allowed, verdict.warnings


def _verdict(isvc, lookup):
    return review_inference_service(
        isvc, ModelCatalog.of([LLAMA]), RuntimeCatalog.of([RT]), workloads=lookup
    )


def test_the_warning_is_counted_as_other_mode_workload_and_typos_are_not():
    isvc = make_isvc("chat", deploymentMode="OMENative", engine={"annotations": {MODE: "x"}})

    assert _verdict(isvc, standing(LWS)).warning_kinds == ("auto_selected", "other_mode_workload")


@pytest.mark.parametrize(
    ("isvc", "lookup", "review"),
    [
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative", engine={"annotations": {MODE: "x"}}),
            standing(LWS),
            (
                True,
                (
                    AUTO,
                    typo_message("x", "spec.engine.annotations"),
                    warning("engine", "OMENative", REPLICA, LWS),
                ),
            ),
            id="the warning comes last, after the selection and typo warnings",
        ),
        pytest.param(
            make_isvc("chat", model="ghost", deploymentMode="OMENative"),
            standing(LWS),
            (False, ()),
            id="a denied InferenceService gets no new workload, so no such warning",
        ),
        pytest.param(
            make_isvc("chat", deploymentMode="OMENative"),
            None,
            (True, (AUTO,)),
            id="without the workloads (render, tests) the rule is not run",
        ),
    ],
)
def test_the_review_adds_the_warning_only_to_an_admitted_inference_service(isvc, lookup, review):
    assert _review(isvc, lookup) == review
