"""Rules of SPEC S2.2 (pre-checks), S2.3 (candidates and counts), S2.10 (qualification), S2.12
(the no-runtime message), S2.13 (the named runtime) and the explain verdicts of S12.5 / S12.6."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from ome_operator.core.selection import (
    Advisory,
    Exclusion,
    InvalidModelSpecError,
    NamedRuntime,
    NoRuntimeFoundError,
    RuntimeCatalog,
    RuntimeDisabledError,
    RuntimeNotFoundError,
    ShardedModelError,
    resolve_named_runtime,
    select_runtime,
    selecting,
)
from ome_operator.models import InferenceService, ModelSpec, ServingRuntime
from tests.builders import entry, make_isvc, make_model_spec, make_runtime

MODE = "ome.io/deploymentMode"
NO_CLASS = "runtime does not support the required accelerator class"
NO_AUTO_SELECT = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
    "selection skips it (pin it explicitly via spec.runtime.name instead)"
)
NOT_AUTO_SELECT = (
    "matching format safetensors is not autoSelect-enabled (a different supportedModelFormats "
    "entry on this runtime has autoSelect=true, but not the one that matches this model)"
)
SCORE_ZERO = "auto-select score is 0"
PREFIX = "no runtime found to support model safetensors with format safetensors in namespace ns"


def _select(
    runtimes: list[ServingRuntime],
    model: ModelSpec | None = None,
    isvc: InferenceService | None = None,
):
    model = make_model_spec() if model is None else model
    return select_runtime(model, "llama", isvc, RuntimeCatalog.of(runtimes), "ns")


def _weighted(fmt_weight: int, framework_weight: int, **fields: Any) -> dict[str, Any]:
    found = entry(**fields)
    found["modelFormat"]["weight"] = fmt_weight
    found["modelFramework"]["weight"] = framework_weight
    return found


def _manual(name: str, **kw: Any) -> ServingRuntime:
    """A runtime that supports the default model but never qualifies (no autoSelect entry)."""
    return make_runtime(name, formats=[entry()], **kw)


def _sr(name: str, **kw: Any) -> ServingRuntime:
    return make_runtime(name, cluster=False, namespace="ns", **kw)


# --- S2.2: model pre-checks -----------------------------------------------------------------

INVALID_MODEL = "invalid model specification: modelFormat.name: model format name is required"
SHARDED = "no model cache provider is configured for sharded model loading"


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(make_model_spec(fmt=""), id="an empty modelFormat.name is invalid"),
        pytest.param(
            make_model_spec(fmt="", distribution="Sharded"),
            id="a missing format name is reported before sharding",
        ),
    ],
)
def test_a_model_without_a_format_name_fails_before_any_runtime_is_looked_at(
    model: ModelSpec,
) -> None:
    with pytest.raises(InvalidModelSpecError) as caught:
        _select([make_runtime("rt")], model)
    assert str(caught.value) == INVALID_MODEL


def test_a_sharded_model_fails_selection() -> None:
    with pytest.raises(ShardedModelError) as caught:
        _select([make_runtime("rt")], make_model_spec(distribution="Sharded"))
    assert SHARDED in str(caught.value)


def test_pre_checks_fail_even_without_runtimes() -> None:
    with pytest.raises(InvalidModelSpecError) as caught:
        _select([], make_model_spec(fmt=""))
    assert str(caught.value) == INVALID_MODEL


def test_a_named_runtime_runs_the_pre_checks_too() -> None:
    isvc = make_isvc(runtime={"name": "rt"})
    catalog = RuntimeCatalog.of([make_runtime("rt")])
    with pytest.raises(InvalidModelSpecError) as invalid:
        resolve_named_runtime(isvc, catalog, make_model_spec(fmt=""))
    with pytest.raises(ShardedModelError) as sharded:
        resolve_named_runtime(isvc, catalog, make_model_spec(distribution="Sharded"))
    assert (str(invalid.value), SHARDED in str(sharded.value)) == (INVALID_MODEL, True)


# --- S2.3: candidates and counts; S2.12: the message ----------------------------------------


@pytest.mark.parametrize(
    ("runtimes", "expected"),
    [
        pytest.param([], PREFIX, id="with no candidates the message is one sentence"),
        pytest.param(
            [_manual("manual")],
            f"{PREFIX}. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)",
            id="the word is always runtimes and nothing excluded stops after the counts",
        ),
        pytest.param(
            [
                _sr("sr-manual", formats=[entry()]),
                _sr("sr-off", disabled=True),
                _manual("csr-manual"),
                make_runtime("csr-pytorch", formats=[entry("pytorch", autoSelect=True)]),
                make_runtime("csr-off", disabled=True),
            ],
            f"{PREFIX}. Checked 5 runtimes (2 namespace-scoped, 3 cluster-scoped). "
            "Excluded runtimes: sr-off (runtime is disabled); csr-off (runtime is disabled); "
            "csr-pytorch (model format 'mt:safetensors:transformers' not in supported formats: "
            "format name mismatch (model=safetensors, runtime=pytorch))",
            id="disabled runtimes are counted and listed; supporting runtimes are only counted",
        ),
        pytest.param(
            [
                make_runtime("a-zero", formats=[_weighted(-1, -1, autoSelect=True)]),
                _manual("b-manual"),
            ],
            f"{PREFIX}. Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped)",
            id="a supporting runtime with score 0 or less is counted but not listed",
        ),
        pytest.param(
            [
                make_runtime("z-csr", disabled=True),
                make_runtime("a-csr", disabled=True),
                _sr("z-sr", disabled=True),
                _sr("a-sr", disabled=True),
            ],
            f"{PREFIX}. Checked 4 runtimes (2 namespace-scoped, 2 cluster-scoped). "
            "Excluded runtimes: a-sr (runtime is disabled); z-sr (runtime is disabled); "
            "a-csr (runtime is disabled); z-csr (runtime is disabled)",
            id="excluded runtimes list namespaced ones first, then cluster ones, each by name",
        ),
        pytest.param(
            [make_runtime("twin", disabled=True), _sr("twin", disabled=True)],
            f"{PREFIX}. Checked 2 runtimes (1 namespace-scoped, 1 cluster-scoped). "
            "Excluded runtimes: twin (runtime is disabled); twin (runtime is disabled)",
            id="a name present in both scopes is listed twice",
        ),
    ],
)
def test_the_no_runtime_message(runtimes: list[ServingRuntime], expected: str) -> None:
    selection = _select(runtimes)
    assert (selection.chosen, str(selection.failure)) == (None, expected)


def test_the_selection_keeps_the_three_counts() -> None:
    selection = _select([_sr("a", disabled=True), _sr("b"), make_runtime("c", disabled=True)])
    assert (selection.namespaced, selection.cluster, len(selection.verdicts)) == (2, 1, 3)


def test_the_message_names_the_model_by_its_format() -> None:
    model = make_model_spec(fmt="pytorch", framework=None)
    selection = select_runtime(model, "llama", None, RuntimeCatalog.of([]), "team-a")
    expected = "no runtime found to support model pytorch with format pytorch in namespace team-a"
    assert str(selection.failure) == expected


def test_the_documented_accelerator_example() -> None:
    isvc = make_isvc(
        "llama-3-3-70b", namespace="llama-demo", annotations={"ome.io/accelerator-class": "h100"}
    )
    runtime = make_runtime("llama-3-3-70b-hopper")
    selection = select_runtime(
        make_model_spec(), "llama", isvc, RuntimeCatalog.of([runtime]), "llama-demo"
    )
    assert str(selection.failure) == (
        "no runtime found to support model safetensors with format safetensors in namespace "
        "llama-demo. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded "
        "runtimes: llama-3-3-70b-hopper (runtime does not support the required accelerator class)"
    )


def test_the_failure_carries_the_excluded_runtimes_and_raises_on_demand() -> None:
    selection = _select([make_runtime("off", disabled=True), _manual("manual")])
    assert selection.failure.excluded == (
        Exclusion("off", True, "disabled", "runtime is disabled"),
    )
    with pytest.raises(NoRuntimeFoundError) as caught:
        selection.runtime()
    assert str(caught.value) == str(selection.failure)


def test_auto_selection_uses_each_runtime_s_own_spec() -> None:
    parent = make_runtime("parent")
    child = make_runtime("child", formats=[])
    raw = child.raw()
    raw["metadata"]["annotations"] = {"ome.io/inherit-from": "parent"}
    child = type(child).model_validate(raw)
    selection = _select([child, parent])
    assert [(v.runtime.name, v.reason) for v in selection.verdicts] == [
        ("parent", None),
        (
            "child",
            "model format 'mt:safetensors:transformers' not in supported formats: "
            "no supported formats defined",
        ),
    ]


# --- S2.10 qualification and the explain verdicts (S12.5, S12.6 reasons 6–8) --------------


@pytest.mark.parametrize(
    ("formats", "expected"),
    [
        pytest.param([entry(autoSelect=True)], None, id="a supporting autoSelect entry qualifies"),
        pytest.param(
            [entry()], NO_AUTO_SELECT, id="a runtime without any autoSelect true entry is skipped"
        ),
        pytest.param(
            [entry(autoSelect=False)],
            NO_AUTO_SELECT,
            id="autoSelect false on every entry is the same as unset",
        ),
        pytest.param(
            [entry(autoSelect=False), entry("pytorch", autoSelect=True)],
            NOT_AUTO_SELECT,
            id="an autoSelect entry for another format leaves the matching entry unselectable",
        ),
        pytest.param(
            [_weighted(-1, -1), entry("pytorch", autoSelect=True)],
            NOT_AUTO_SELECT,
            id="a zero score with a matching entry that leaves autoSelect unset gives reason 7",
        ),
        pytest.param(
            [_weighted(-1, -1, autoSelect=True)],
            SCORE_ZERO,
            id="a matching autoSelect entry with a score of 0 or less gives reason 8",
        ),
        pytest.param(
            [_weighted(-1, 1, autoSelect=True)],
            SCORE_ZERO,
            id="a score of exactly 0 does not qualify",
        ),
    ],
)
def test_qualification_reasons(formats: list[dict[str, Any]], expected: str | None) -> None:
    (verdict,) = _select([make_runtime("rt", formats=formats)]).verdicts
    assert (verdict.qualifies, verdict.reason) == (expected is None, expected)


def test_a_failed_check_is_the_reason_before_any_qualification_reason() -> None:
    (verdict,) = _select([make_runtime("rt", formats=[entry()], disabled=True)]).verdicts
    assert verdict.reason == "runtime is disabled"


def test_explain_rows_put_qualifying_runtimes_in_rank_order_then_the_rest_by_scope_and_name() -> (
    None
):
    runtimes = [
        make_runtime("csr-best", formats=[_weighted(5, 5, autoSelect=True)]),
        make_runtime("csr-off", disabled=True),
        make_runtime("csr-good"),
        _manual("a-csr-manual"),
        _sr("sr-ok"),
        _sr("sr-manual", formats=[entry()]),
        _sr("a-sr-off", disabled=True),
    ]
    selection = _select(runtimes)
    assert [(v.runtime.name, v.runtime.is_cluster, v.reason) for v in selection.verdicts] == [
        ("sr-ok", False, None),
        ("csr-best", True, None),
        ("csr-good", True, None),
        ("a-sr-off", False, "runtime is disabled"),
        ("sr-manual", False, NO_AUTO_SELECT),
        ("a-csr-manual", True, NO_AUTO_SELECT),
        ("csr-off", True, "runtime is disabled"),
    ]
    assert selection.chosen == selection.verdicts[0]


def test_explain_reasons_include_the_accelerator_and_mode_checks_with_an_isvc() -> None:
    isvc = make_isvc(annotations={"ome.io/accelerator-class": "h100"}, deploymentMode="OMENative")
    runtimes = [
        make_runtime("a-any"),
        make_runtime(
            "b-multinode",
            acceleratorRequirements={"acceleratorClasses": ["h100"]},
            engineConfig={"annotations": {MODE: "MultiNode"}},
        ),
    ]
    selection = _select(runtimes, isvc=isvc)
    assert [(v.runtime.name, v.reason) for v in selection.verdicts] == [
        ("a-any", NO_CLASS),
        (
            "b-multinode",
            "runtime engine deployment mode MultiNode does not match requested engine "
            "deployment mode OMENative",
        ),
    ]


# --- the memo: one selection per catalog, model and request ----------------------------------

_MEMO_RUNTIMES = RuntimeCatalog.of(
    [
        make_runtime("a-h100", acceleratorRequirements={"acceleratorClasses": ["h100"]}),
        make_runtime("b-omenative", engineConfig={"annotations": {MODE: "OMENative"}}),
        make_runtime("c-decoder", decoderConfig={"annotations": {MODE: "OMENative"}}),
    ]
)
_MEMO_MODEL = make_model_spec()
_ALL_PASS = {"a-h100": None, "b-omenative": None, "c-decoder": None}


def _reasons(isvc: InferenceService) -> dict[str, str | None]:
    selection = select_runtime(_MEMO_MODEL, "llama", isvc, _MEMO_RUNTIMES, "ns")
    return {v.runtime.name: v.reason for v in selection.verdicts}


@pytest.mark.parametrize(
    ("isvc", "expected"),
    [
        pytest.param(make_isvc(name="plain"), _ALL_PASS, id="a plain request"),
        pytest.param(
            make_isvc(name="other", namespace="elsewhere", labels={"team": "x"}),
            _ALL_PASS,
            id="what the checks do not read does not make another request",
        ),
        pytest.param(
            make_isvc(name="a100", annotations={"ome.io/accelerator-class": "a100"}),
            dict.fromkeys(_ALL_PASS, NO_CLASS),
            id="another required accelerator class is another request",
        ),
        pytest.param(
            make_isvc(name="multinode", engine={"annotations": {MODE: "MultiNode"}}),
            {
                **_ALL_PASS,
                "b-omenative": "runtime engine deployment mode OMENative does not match "
                "requested engine deployment mode MultiNode",
            },
            id="another requested engine mode is another request",
        ),
        pytest.param(
            make_isvc(name="decoder", decoder={"annotations": {MODE: "RawDeployment"}}),
            {
                **_ALL_PASS,
                "c-decoder": "runtime decoder deployment mode OMENative does not match "
                "requested decoder deployment mode RawDeployment",
            },
            id="a decoder's requested mode is part of the request",
        ),
    ],
)
def test_a_memoized_selection_serves_only_equal_requests(
    isvc: InferenceService, expected: dict[str, str | None]
) -> None:
    warm = (
        make_isvc(name="warm"),
        make_isvc(name="warm-raw", engine={"annotations": {MODE: "RawDeployment"}}),
    )
    for other in warm:  # memoize other requests over the same catalog and model first
        _reasons(other)

    assert _reasons(isvc) == expected


def test_a_new_catalog_of_the_same_runtimes_is_selected_afresh() -> None:
    catalog = RuntimeCatalog(_MEMO_RUNTIMES.namespaced, _MEMO_RUNTIMES.cluster)
    first = select_runtime(_MEMO_MODEL, "llama", make_isvc(), _MEMO_RUNTIMES, "ns")

    again = select_runtime(_MEMO_MODEL, "llama", make_isvc(), _MEMO_RUNTIMES, "ns")
    afresh = select_runtime(_MEMO_MODEL, "llama", make_isvc(), catalog, "ns")

    assert again is first
    assert afresh is not first and afresh == first


def test_a_replaced_catalog_takes_its_memo_with_it() -> None:
    catalog = RuntimeCatalog(_MEMO_RUNTIMES.namespaced, _MEMO_RUNTIMES.cluster)
    select_runtime(_MEMO_MODEL, "llama", make_isvc(), catalog, "ns")
    assert (len(catalog.memo), len(catalog.fits)) == (1, len(catalog))  # selection; fits
    gone = weakref.ref(catalog)

    del catalog
    gc.collect()

    assert gone() is None  # nothing outside the catalog holds what was decided over it


def test_a_catalog_memo_is_bounded_however_many_models_change() -> None:
    catalog = RuntimeCatalog(_MEMO_RUNTIMES.namespaced, _MEMO_RUNTIMES.cluster)
    for size in range(3000):  # each model change is a new model object
        model = make_model_spec(modelParameterSize=f"{size % 50 + 1}B")
        select_runtime(model, "llama", make_isvc(), catalog, "ns")

    assert len(catalog.memo) <= selecting._MEMO_LIMIT
    assert len(catalog.fits) <= selecting._MEMO_LIMIT


# --- S2.13: the named runtime ---------------------------------------------------------------


def _named(kind: str | None, runtimes: list[ServingRuntime], model: ModelSpec | None = None):
    ref = {"name": "rt"} if kind is None else {"name": "rt", "kind": kind}
    isvc = make_isvc(namespace="ns", runtime=ref)
    return resolve_named_runtime(isvc, RuntimeCatalog.of(runtimes), model)


_CSR_RT = make_runtime("rt")
_SR_RT = _sr("rt")


@pytest.mark.parametrize(
    ("kind", "runtimes", "expected"),
    [
        pytest.param(
            None,
            [_CSR_RT, _SR_RT],
            _CSR_RT,
            id="the default kind looks up the cluster runtime first",
        ),
        pytest.param(
            None,
            [_SR_RT],
            _SR_RT,
            id="the default kind falls back to a namespaced runtime of the name",
        ),
        pytest.param(
            "ClusterServingRuntime",
            [_SR_RT, _CSR_RT],
            _CSR_RT,
            id="kind ClusterServingRuntime looks up the cluster runtime first",
        ),
        pytest.param(
            "ServingRuntime",
            [_CSR_RT, _SR_RT],
            _SR_RT,
            id="kind ServingRuntime looks up only the namespaced runtime",
        ),
    ],
)
def test_named_runtime_lookup_order(
    kind: str | None, runtimes: list[ServingRuntime], expected: ServingRuntime
) -> None:
    assert _named(kind, runtimes, make_model_spec()) == NamedRuntime(expected)


@pytest.mark.parametrize(
    ("kind", "runtimes", "expected"),
    [
        pytest.param(
            None,
            [make_runtime("other")],
            "runtime rt not found in namespace ns or at cluster scope",
            id="a missing runtime of the default kind names both scopes",
        ),
        pytest.param(
            "ClusterServingRuntime",
            [],
            "runtime rt not found in namespace ns or at cluster scope",
            id="a missing ClusterServingRuntime names both scopes",
        ),
        pytest.param(
            "ServingRuntime",
            [make_runtime("rt")],
            "ServingRuntime rt not found in namespace ns",
            id="a ServingRuntime is not found when only a cluster runtime has the name",
        ),
    ],
)
def test_named_runtime_not_found(
    kind: str | None, runtimes: list[ServingRuntime], expected: str
) -> None:
    with pytest.raises(RuntimeNotFoundError) as caught:
        _named(kind, runtimes)
    assert str(caught.value) == expected


@pytest.mark.parametrize(
    ("runtimes", "model", "expected"),
    [
        pytest.param(
            [make_runtime("rt", disabled=True)],
            make_model_spec(),
            "cluster-scoped runtime rt is disabled",
            id="a disabled cluster runtime is a hard error",
        ),
        pytest.param(
            [_sr("rt", disabled=True)],
            make_model_spec(),
            "namespace-scoped runtime rt is disabled",
            id="a disabled namespaced runtime is a hard error",
        ),
        pytest.param(
            [make_runtime("rt", disabled=True)],
            None,
            "cluster-scoped runtime rt is disabled",
            id="a disabled named runtime is refused without a model too",
        ),
    ],
)
def test_a_disabled_named_runtime(
    runtimes: list[ServingRuntime], model: ModelSpec | None, expected: str
) -> None:
    with pytest.raises(RuntimeDisabledError) as caught:
        _named(None, runtimes, model)
    assert str(caught.value) == expected


def _advisory(inner: str) -> Advisory:
    return Advisory("rt", "llama", inner)


@pytest.mark.parametrize(
    ("runtime_kwargs", "isvc_kwargs", "model", "expected"),
    [
        pytest.param(
            {"acceleratorRequirements": {"acceleratorClasses": ["a100"]}},
            {"annotations": {"ome.io/accelerator-class": "h100"}},
            make_model_spec(),
            _advisory(f"runtime rt does not support model : {NO_CLASS}"),
            id="an accelerator failure leaves the model empty before the colon",
        ),
        pytest.param(
            {"engineConfig": {"annotations": {MODE: "MultiNode"}}},
            {"deploymentMode": "OMENative"},
            make_model_spec(),
            _advisory(
                "runtime rt does not support model : runtime engine deployment mode MultiNode "
                "does not match requested engine deployment mode OMENative"
            ),
            id="a mode failure leaves the model empty before the colon",
        ),
        pytest.param(
            {"formats": [entry("pytorch")]},
            {},
            make_model_spec(),
            _advisory(
                "runtime rt does not support model safetensors: model format "
                "'mt:safetensors:transformers' not in supported formats: format name mismatch "
                "(model=safetensors, runtime=pytorch)"
            ),
            id="a format failure names the model's format",
        ),
        pytest.param(
            {"size_range": ("1B", "2B")},
            {},
            make_model_spec(modelParameterSize="7B"),
            _advisory(
                "runtime rt does not support model safetensors: model size 7B is outside "
                "supported range [1B, 2B]"
            ),
            id="a size failure names the model's format",
        ),
        pytest.param(
            {"formats": [entry()]},
            {},
            make_model_spec(),
            None,
            id="autoSelect and the score are irrelevant to a named runtime",
        ),
        pytest.param(
            {"formats": [_weighted(-1, -1, autoSelect=True)]},
            {},
            make_model_spec(),
            None,
            id="a named runtime with a score of 0 gets no advisory",
        ),
    ],
)
def test_the_named_runtime_advisory(
    runtime_kwargs: dict[str, Any],
    isvc_kwargs: dict[str, Any],
    model: ModelSpec,
    expected: Advisory | None,
) -> None:
    runtime = make_runtime("rt", **runtime_kwargs)
    isvc = make_isvc(namespace="ns", runtime={"name": "rt"}, **isvc_kwargs)
    found = resolve_named_runtime(isvc, RuntimeCatalog.of([runtime]), model)
    assert found == NamedRuntime(runtime, expected)


def test_the_advisory_reports_only_the_first_failing_check() -> None:
    runtime = make_runtime(
        "rt", engineConfig={"annotations": {MODE: "MultiNode"}}, formats=[entry("pytorch")]
    )
    isvc = make_isvc(runtime={"name": "rt"}, deploymentMode="OMENative")
    found = resolve_named_runtime(isvc, RuntimeCatalog.of([runtime]), make_model_spec())
    assert found.advisory.inner == (
        "runtime rt does not support model : runtime engine deployment mode MultiNode does not "
        "match requested engine deployment mode OMENative"
    )


def test_a_named_runtime_without_a_model_is_not_checked() -> None:
    runtime = make_runtime(
        "rt", formats=[entry("pytorch")], engineConfig={"annotations": {MODE: "MultiNode"}}
    )
    isvc = make_isvc(model=None, runtime={"name": "rt"}, deploymentMode="OMENative")
    assert resolve_named_runtime(isvc, RuntimeCatalog.of([runtime]), None) == NamedRuntime(runtime)


def test_the_advisory_warning_and_event_texts() -> None:
    advisory = Advisory("rt", "llama-3", "runtime rt does not support model : why")
    assert (advisory.warning(), advisory.event()) == (
        'runtime "rt" does not declare support for model "llama-3" (runtime rt does not support '
        "model : why); proceeding because the runtime was named explicitly",
        "Runtime rt does not declare support for model llama-3 (runtime rt does not support "
        "model : why); proceeding because the runtime was named explicitly",
    )


def test_the_advisory_names_the_model_by_spec_model_name() -> None:
    runtime = make_runtime("rt", formats=[entry("pytorch")])
    isvc = make_isvc(model="my-llama", runtime={"name": "rt"})
    found = resolve_named_runtime(isvc, RuntimeCatalog.of([runtime]), make_model_spec())
    assert found.advisory == Advisory(
        "rt",
        "my-llama",
        "runtime rt does not support model safetensors: model format "
        "'mt:safetensors:transformers' not in supported formats: format name mismatch "
        "(model=safetensors, runtime=pytorch)",
    )
