"""S16.6: which InferenceServices a runtime change moves, every WHY form, and the order."""

from __future__ import annotations

import pytest

from ome_operator.core.impact import (
    Impact,
    Move,
    RuntimeChange,
    runtime_impact,
    runtime_key,
    standing,
)
from tests.builders import entry, make_isvc, make_model, make_runtime

_AUTO = [entry(autoSelect=True)]


def _csr(name: str, priority: int | None = None, **kwargs) -> object:
    fields = (
        {"autoSelect": True} if priority is None else {"autoSelect": True, "priority": priority}
    )
    return make_runtime(name, formats=kwargs.pop("formats", [entry(**fields)]), **kwargs)


def _sr(name: str, namespace: str = "team-a", **kwargs) -> object:
    return make_runtime(name, cluster=False, namespace=namespace, **kwargs)


def _deleted(*runtimes) -> frozenset:
    return frozenset(runtime_key(r) for r in runtimes)


_LLAMA = make_model("llama", modelParameterSize="7B")
_RUNTIME_A = _csr("rt-a")
_NAMED_X = make_isvc("named", namespace="team-a", runtime={"name": "x"})

CASES = [
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A],
        RuntimeChange(applied=(_csr("rt-b", priority=5),)),
        [Move("team-a", "svc", "CSR/rt-a", "CSR/rt-b", "CSR/rt-b ranks higher")],
        id="a new higher-priority runtime ranks higher",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_csr("rt-a", priority=9)],
        RuntimeChange(applied=(_sr("local"),)),
        [Move("team-a", "svc", "CSR/rt-a", "SR/local", "SR/local ranks higher")],
        id="a namespaced runtime beats a higher-scoring cluster runtime",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A, _csr("rt-b")],
        RuntimeChange(deleted=_deleted(_RUNTIME_A)),
        [Move("team-a", "svc", "CSR/rt-a", "CSR/rt-b", "CSR/rt-a was deleted")],
        id="the selected runtime deleted, the next one takes over",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A],
        RuntimeChange(deleted=_deleted(_RUNTIME_A)),
        [Move("team-a", "svc", "CSR/rt-a", "-", "no runtime qualifies")],
        id="the only runtime deleted leaves none",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A, _csr("rt-b")],
        RuntimeChange(applied=(_csr("rt-a", disabled=True),)),
        [
            Move(
                "team-a",
                "svc",
                "CSR/rt-a",
                "CSR/rt-b",
                "CSR/rt-a no longer qualifies: runtime is disabled",
            )
        ],
        id="the selected runtime disabled",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A, _csr("rt-b")],
        RuntimeChange(applied=(_csr("rt-a", size_range=("1B", "2B")),)),
        [
            Move(
                "team-a",
                "svc",
                "CSR/rt-a",
                "CSR/rt-b",
                "CSR/rt-a no longer qualifies: model size 7B is outside supported range [1B, 2B]",
            )
        ],
        id="the selected runtime's size range no longer covers the model",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A, _csr("rt-b")],
        RuntimeChange(applied=(_csr("rt-a", formats=[entry()]),)),
        [
            Move(
                "team-a",
                "svc",
                "CSR/rt-a",
                "CSR/rt-b",
                "CSR/rt-a no longer qualifies: supports the model but has no "
                "supportedModelFormats[].autoSelect=true entry, so automatic selection skips "
                "it (pin it explicitly via spec.runtime.name instead)",
            )
        ],
        id="the selected runtime's autoSelect removed: the S12.6 reason",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a", acceleratorSelector={"acceleratorClass": "h100"})],
        [_csr("rt-a", acceleratorRequirements={"acceleratorClasses": ["h100"]}), _csr("rt-b")],
        RuntimeChange(applied=(_csr("rt-a"),)),
        [
            Move(
                "team-a",
                "svc",
                "CSR/rt-a",
                "-",
                "no runtime qualifies",
            )
        ],
        id="the InferenceService's own checks count: the accelerator class",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_csr("rt-a", formats=[entry(fmt="onnx", autoSelect=True)])],
        RuntimeChange(applied=(_csr("rt-b"),)),
        [Move("team-a", "svc", "-", "CSR/rt-b", "CSR/rt-b ranks higher")],
        id="a runtime for a service that had none",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A, _csr("rt-b")],
        RuntimeChange(applied=(make_runtime("rt-a", formats=_AUTO, cluster=True),)),
        [],
        id="an edit that changes no selection moves nothing",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A],
        RuntimeChange(applied=(_csr("rt-b", formats=[entry(fmt="onnx", autoSelect=True)]),)),
        [],
        id="a runtime for another model format moves nothing",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a")],
        [_RUNTIME_A],
        RuntimeChange(applied=(_sr("local", namespace="team-b"),)),
        [],
        id="a namespaced runtime of another namespace moves nothing",
    ),
    pytest.param(
        [_NAMED_X],
        [_csr("x")],
        RuntimeChange(deleted=_deleted(_csr("x"))),
        [Move("team-a", "named", "CSR/x", "-", "no runtime qualifies")],
        id="a named runtime deleted",
    ),
    pytest.param(
        [_NAMED_X],
        [_csr("x"), _sr("x")],
        RuntimeChange(deleted=_deleted(_csr("x"))),
        [Move("team-a", "named", "CSR/x", "SR/x", "CSR/x was deleted")],
        id="a named cluster runtime deleted: the namespaced one of that name follows",
    ),
    pytest.param(
        [_NAMED_X],
        [_sr("x")],
        RuntimeChange(applied=(_csr("x"),)),
        [Move("team-a", "named", "SR/x", "CSR/x", "CSR/x ranks higher")],
        id="a cluster runtime of the named one's name is looked up first",
    ),
    pytest.param(
        [_NAMED_X],
        [_csr("x")],
        RuntimeChange(applied=(_csr("x", disabled=True),)),
        [Move("team-a", "named", "CSR/x", "-", "no runtime qualifies")],
        id="a named runtime disabled: the controller runs it with none",
    ),
    pytest.param(
        [_NAMED_X],
        [_csr("x"), _RUNTIME_A],
        RuntimeChange(applied=(_csr("rt-b", priority=9),)),
        [],
        id="a named InferenceService never moves to a better runtime",
    ),
    pytest.param(
        [make_isvc("svc", namespace="team-a", model="gone")],
        [_RUNTIME_A],
        RuntimeChange(deleted=_deleted(_RUNTIME_A)),
        [],
        id="a missing model: no runtime before or after",
    ),
    pytest.param(
        [
            make_isvc("b", namespace="team-b"),
            make_isvc("z", namespace="team-a"),
            make_isvc("a", namespace="team-b"),
            make_isvc("a", namespace="team-a"),
        ],
        [_RUNTIME_A],
        RuntimeChange(deleted=_deleted(_RUNTIME_A)),
        [
            Move("team-a", "a", "CSR/rt-a", "-", "no runtime qualifies"),
            Move("team-a", "z", "CSR/rt-a", "-", "no runtime qualifies"),
            Move("team-b", "a", "CSR/rt-a", "-", "no runtime qualifies"),
            Move("team-b", "b", "CSR/rt-a", "-", "no runtime qualifies"),
        ],
        id="sorted by namespace, then name",
    ),
]


@pytest.mark.parametrize(("isvcs", "runtimes", "change", "moves"), CASES)
def test_runtime_impact(isvcs, runtimes, change, moves) -> None:
    impact = runtime_impact(standing(isvcs, runtimes, [_LLAMA]), change)

    assert impact == Impact(tuple(moves), len(isvcs))


def _moved(count: int) -> Impact:
    moves = tuple(
        Move("ns", f"svc-{i}", "CSR/a", "-", "no runtime qualifies") for i in range(count)
    )
    return Impact(moves, 10)


@pytest.mark.parametrize(
    ("impact", "warning", "summary"),
    [
        pytest.param(_moved(0), None, "0 of 10 InferenceServices change runtime", id="none"),
        pytest.param(
            _moved(1),
            "this change moves 1 InferenceService(s) to another runtime: ns/svc-0 (CSR/a -> -)",
            "1 of 10 InferenceServices change runtime",
            id="one",
        ),
        pytest.param(
            _moved(5),
            "this change moves 5 InferenceService(s) to another runtime: ns/svc-0 (CSR/a -> -), "
            "ns/svc-1 (CSR/a -> -), ns/svc-2 (CSR/a -> -), ns/svc-3 (CSR/a -> -), "
            "ns/svc-4 (CSR/a -> -)",
            "5 of 10 InferenceServices change runtime",
            id="five: all listed",
        ),
        pytest.param(
            _moved(7),
            "this change moves 7 InferenceService(s) to another runtime: ns/svc-0 (CSR/a -> -), "
            "ns/svc-1 (CSR/a -> -), ns/svc-2 (CSR/a -> -), ns/svc-3 (CSR/a -> -), "
            "ns/svc-4 (CSR/a -> -), and 2 more",
            "7 of 10 InferenceServices change runtime",
            id="seven: five listed, the rest counted",
        ),
    ],
)
def test_the_warning_and_the_summary(impact: Impact, warning: str | None, summary: str) -> None:
    assert (impact.warning(), impact.summary()) == (warning, summary)


def test_the_document_writes_no_runtime_as_null() -> None:
    impact = Impact((Move("ns", "svc", "CSR/a", "-", "no runtime qualifies"),), 3)

    assert impact.document() == {
        "apiVersion": "cli.ome.io/v1alpha1",
        "kind": "RuntimeImpact",
        "items": [
            {
                "namespace": "ns",
                "name": "svc",
                "before": "CSR/a",
                "after": None,
                "why": "no runtime qualifies",
            }
        ],
        "changed": 1,
        "total": 3,
    }
