"""Rules of SPEC S2.10 (score), S2.11 (ranking) and explain PRIORITY / WEIGHT (S12.6)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core.selection import RuntimeCatalog, select_runtime
from ome_operator.core.selection.scoring import explain_priority, explain_weight, runtime_score
from ome_operator.models import ModelSpec, ServingRuntime, from_manifest
from tests.builders import entry, make_model_spec, make_runtime, runtime_manifest


def _weighted(fmt_weight: int | None = None, framework_weight: int | None = None, **fields: Any):
    """An entry for the default model with the given weights (absent when None)."""
    found = entry(**fields)
    if fmt_weight is not None:
        found["modelFormat"]["weight"] = fmt_weight
    if framework_weight is not None:
        found["modelFramework"]["weight"] = framework_weight
    return found


# --- S2.10: score ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formats", "expected"),
    [
        pytest.param(
            [_weighted()], 2, id="absent weights count 1 each and an absent priority counts 1"
        ),
        pytest.param(
            [_weighted(2, 3, priority=4)], 20, id="the weight sum is multiplied by the priority"
        ),
        pytest.param([_weighted(0, 1)], 11, id="an explicit format weight 0 counts as 10"),
        pytest.param([_weighted(1, 0)], 6, id="an explicit framework weight 0 counts as 5"),
        pytest.param([_weighted(0, 0, priority=2)], 30, id="both weights 0 count as 10 and 5"),
        pytest.param([_weighted(-3, 1)], -2, id="a negative weight counts as written"),
        pytest.param(
            [_weighted(), _weighted(3, 3), _weighted(1, 2)],
            6,
            id="the score is the best of the matching entries",
        ),
        pytest.param(
            [_weighted(autoSelect=True), _weighted(10, 10, autoSelect=False)],
            2,
            id="an entry that sets autoSelect false does not score",
        ),
        pytest.param([_weighted(2, 2)], 4, id="an entry that leaves autoSelect unset scores"),
        pytest.param(
            [_weighted(3, 3, modelArchitecture="MistralForCausalLM")],
            6,
            id="architecture is ignored by the score",
        ),
        pytest.param(
            [_weighted(3, 3, quantization="int4", diffusionPipeline={})],
            6,
            id="quantization and diffusion pipeline are ignored by the score",
        ),
        pytest.param([entry("pytorch")], 0, id="an entry with another format name does not score"),
        pytest.param(
            [entry(framework="vllm")], 0, id="an entry with another framework name does not score"
        ),
        pytest.param(
            [entry(fmt_version="2.0.0")],
            0,
            id="an entry whose format version does not match does not score",
        ),
        pytest.param(
            [entry(framework_version="4.36.0")],
            0,
            id="an entry whose framework version does not match does not score",
        ),
        pytest.param([], 0, id="a runtime without entries scores 0"),
        pytest.param(
            [_weighted(autoSelect=False)],
            0,
            id="a runtime whose only entry is autoSelect false scores 0",
        ),
    ],
)
def test_runtime_score(formats: list[dict[str, Any]], expected: int) -> None:
    assert runtime_score(make_runtime(formats=formats), make_model_spec()) == expected


def test_a_model_only_an_autoselect_false_entry_matches_can_be_picked() -> None:
    """The S2.10 "consequence to preserve"."""
    runtime = make_runtime(
        "rt",
        formats=[
            entry(modelArchitecture="LlamaForCausalLM", autoSelect=False),
            entry(modelArchitecture="MistralForCausalLM", autoSelect=True),
        ],
    )
    model = make_model_spec(modelArchitecture="LlamaForCausalLM")
    selection = select_runtime(model, "llama", None, RuntimeCatalog.of([runtime]), "default")
    assert (selection.chosen.runtime, selection.chosen.score) == (runtime, 2)


# --- S2.11: ranking -------------------------------------------------------------------------


def _created(name: str, timestamp: str) -> ServingRuntime:
    return from_manifest(
        {**runtime_manifest(name), "metadata": {"name": name, "creationTimestamp": timestamp}}
    )


def _sized(name: str, size_range: tuple[str | None, str | None] | None, **kw: Any):
    return make_runtime(name, size_range=size_range, **kw)


@pytest.mark.parametrize(
    ("runtimes", "model", "expected"),
    [
        pytest.param(
            [
                make_runtime("a-cluster", formats=[_weighted(10, 10, autoSelect=True)]),
                make_runtime("z-namespaced", cluster=False),
            ],
            make_model_spec(),
            ["z-namespaced", "a-cluster"],
            id="a namespaced runtime beats a higher-scoring cluster runtime",
        ),
        pytest.param(
            [
                make_runtime("a-low"),
                make_runtime("z-high", formats=[_weighted(2, 1, autoSelect=True)]),
            ],
            make_model_spec(),
            ["z-high", "a-low"],
            id="a higher score beats a lower one in the same scope",
        ),
        pytest.param(
            [
                make_runtime("a-low", cluster=False),
                make_runtime("z-high", cluster=False, formats=[_weighted(2, 1, autoSelect=True)]),
            ],
            make_model_spec(),
            ["z-high", "a-low"],
            id="a higher score wins among namespaced runtimes too",
        ),
        pytest.param(
            [_sized("a-wide", ("1B", "100B")), _sized("b-tight", ("6B", "8B"))],
            make_model_spec(modelParameterSize="7B"),
            ["b-tight", "a-wide"],
            id="for a sized model the smaller size distance wins at equal score",
        ),
        pytest.param(
            [_sized("a-wide", ("1B", "100B")), _sized("b-tight", ("6B", "8B"))],
            make_model_spec(),
            ["a-wide", "b-tight"],
            id="for a model without a size the distance is ignored",
        ),
        pytest.param(
            [_sized("a-ranged", ("7B", "7B")), _sized("b-unranged", None)],
            make_model_spec(modelParameterSize="7B"),
            ["a-ranged", "b-unranged"],
            id="a range around exactly the size ties with no range and the name decides",
        ),
        pytest.param(
            [_sized("a-ranged", ("6B", "8B")), _sized("b-unranged", None)],
            make_model_spec(modelParameterSize="7B"),
            ["b-unranged", "a-ranged"],
            id="a runtime without a range has distance 0",
        ),
        pytest.param(
            [_sized("a-both", ("6B", "9B")), _sized("b-min-only", ("5B", None))],
            make_model_spec(modelParameterSize="7B"),
            ["b-min-only", "a-both"],
            id="a single bound gives the distance to that bound alone",
        ),
        pytest.param(
            [
                _sized("a-tight", ("6B", "8B")),
                _sized("b-wide", ("1B", "100B"), formats=[_weighted(2, 1, autoSelect=True)]),
            ],
            make_model_spec(modelParameterSize="7B"),
            ["b-wide", "a-tight"],
            id="score outranks size distance",
        ),
        pytest.param(
            [
                make_runtime("rt-9"),
                make_runtime("rt-10"),
                make_runtime("rt.a"),
                make_runtime("rt-a"),
            ],
            make_model_spec(),
            ["rt-10", "rt-9", "rt-a", "rt.a"],
            id="remaining ties go by name in byte order",
        ),
        pytest.param(
            [_created("b-old", "2020-01-01T00:00:00Z"), _created("a-new", "2026-01-01T00:00:00Z")],
            make_model_spec(),
            ["a-new", "b-old"],
            id="creation time never matters",
        ),
    ],
)
def test_ranking(runtimes: list[ServingRuntime], model: ModelSpec, expected: list[str]) -> None:
    selection = select_runtime(model, "llama", None, RuntimeCatalog.of(runtimes), "default")
    assert [v.runtime.name for v in selection.verdicts if v.qualifies] == expected
    assert selection.chosen.runtime.name == expected[0]


# --- S12.6: explain PRIORITY and WEIGHT -----------------------------------------------------


def _first(**fields: Any):
    return make_runtime(formats=[fields.pop("found")]).spec.supported_model_formats[0]


@pytest.mark.parametrize(
    ("found", "priority", "weight"),
    [
        pytest.param(_weighted(), 1, 2, id="absent priority shows 1 and absent weights count 1"),
        pytest.param(_weighted(priority=3), 3, 6, id="the entry's priority is shown"),
        pytest.param(_weighted(2, 3, priority=2), 2, 10, id="WEIGHT sums weight times priority"),
        pytest.param(
            _weighted(0, 1), 1, 1, id="WEIGHT skips a zero weight instead of counting it as 10"
        ),
        pytest.param(_weighted(1, 0), 1, 1, id="WEIGHT skips a zero framework weight"),
        pytest.param(_weighted(-4, 3, priority=2), 2, 6, id="WEIGHT skips a negative weight"),
    ],
)
def test_explain_priority_and_weight(found: dict[str, Any], priority: int, weight: int) -> None:
    parsed = _first(found=found)
    assert (explain_priority(parsed), explain_weight(parsed)) == (priority, weight)


def test_priority_and_weight_come_from_the_first_fully_matching_entry() -> None:
    runtime = make_runtime(
        formats=[
            _weighted(9, 9, priority=9, modelArchitecture="MistralForCausalLM", autoSelect=True),
            _weighted(2, 1, priority=3),
            _weighted(5, 5, priority=5),
        ]
    )
    selection = select_runtime(
        make_model_spec(), "llama", None, RuntimeCatalog.of([runtime]), "default"
    )
    first = selection.chosen.first_match
    assert (first, explain_priority(first), explain_weight(first)) == (
        runtime.spec.supported_model_formats[1],
        3,
        9,
    )
