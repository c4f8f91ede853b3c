"""S7.2 denial 6, auto-selection (S7.2.6): an engine without a complete runner needs a runtime
that S2 selects, denied with the S2.12 or S2.2 text when there is none; and the outcome the
webhook reports for the metrics."""

from __future__ import annotations

import pytest

from ome_operator.core.admission import SelectionOutcome, review_inference_service
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import from_manifest
from tests.builders import entry, make_isvc, make_model, make_runtime, runtime_manifest
from tests.core.admission.reviews import (
    AUTO,
    COMPLETE,
    MODE,
    MODELS,
    RUNTIMES,
    allowed_verdict,
    denied_verdict,
    review_of,
)

NO_SUPPORT = (
    "no supporting runtime found for model llama and engine does not have complete runner "
    "configuration: "
)
NOT_FOUND = "no runtime found to support model safetensors with format safetensors in namespace "
ONE_CSR = ". Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)"


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        pytest.param(
            make_isvc(engine=COMPLETE),
            MODELS,
            (),
            allowed_verdict(),
            id="6: an engine runner image skips auto-selection",
        ),
        pytest.param(
            make_isvc(
                engine={
                    "leader": {"runner": {"image": "l"}},
                    "worker": {"runner": {"image": "w"}},
                }
            ),
            MODELS,
            (),
            allowed_verdict(),
            id="6: leader and worker runner images together skip auto-selection",
        ),
        pytest.param(
            make_isvc(engine={"leader": {"runner": {"image": "l"}}, "worker": {}}),
            MODELS,
            (),
            denied_verdict(NO_SUPPORT + NOT_FOUND + "default"),
            id="6: a leader image without a worker image is not a complete runner",
        ),
        pytest.param(
            make_isvc(engine={"runner": {"image": ""}}),
            MODELS,
            (),
            denied_verdict(NO_SUPPORT + NOT_FOUND + "default"),
            id="6: an empty runner image is not a complete runner",
        ),
        pytest.param(
            make_isvc(namespace="team"),
            MODELS,
            (),
            denied_verdict(NO_SUPPORT + NOT_FOUND + "team"),
            id="6: auto-selection without runtimes is denied with the S2.12 message",
        ),
        pytest.param(
            make_isvc(),
            MODELS,
            [make_runtime("rt", disabled=True)],
            denied_verdict(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(runtime is disabled)"
            ),
            id="6: the auto-selection denial wraps the whole S2.12 message",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", fmt="")],
            RUNTIMES,
            denied_verdict(
                NO_SUPPORT
                + "invalid model specification: modelFormat.name: model format name is required"
            ),
            id="6: the auto-selection denial wraps the S2.2 text",
        ),
        pytest.param(
            make_isvc(acceleratorSelector={"acceleratorClass": "h100"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(runtime does not support the required accelerator class)"
            ),
            id="6: selection applies the admitted ISVC's accelerator class",
        ),
        pytest.param(
            make_isvc(annotations={"ome.io/accelerator-class": "h100"}),
            MODELS,
            [make_runtime("rt", acceleratorRequirements={"acceleratorClasses": ["h100"]})],
            allowed_verdict(AUTO),
            id="6: a runtime listing the ISVC's accelerator class is selected",
        ),
        pytest.param(
            make_isvc(engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "MultiNode"}})],
            denied_verdict(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(runtime engine deployment mode MultiNode does not match requested engine "
                "deployment mode OMENative)"
            ),
            id="6: selection applies the admitted ISVC's deployment mode",
        ),
        pytest.param(
            make_isvc(),
            MODELS,
            RUNTIMES,
            allowed_verdict(AUTO),
            id="6: a successful auto-selection warns which runtime it picks",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", fmt="gguf"), make_model("llama", cluster=False)],
            [make_runtime("rt", formats=[entry("gguf", autoSelect=True)])],
            denied_verdict(
                NO_SUPPORT + NOT_FOUND + "default" + ONE_CSR + ". Excluded runtimes: rt "
                "(model format 'mt:safetensors:transformers' not in supported formats: "
                "format name mismatch (model=safetensors, runtime=gguf))"
            ),
            id="6: a BaseModel in the namespace supplies the data for kind ClusterBaseModel",
        ),
        pytest.param(
            make_isvc(engine=None, decoder={}),
            MODELS,
            (),
            allowed_verdict(),
            id="6: without an engine no runtime is selected",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected


@pytest.mark.parametrize(
    ("runtimes", "expected"),
    [
        pytest.param(
            [runtime_manifest("rt"), runtime_manifest("off", disabled=True)],
            SelectionOutcome("selected", "cluster", ("disabled",)),
            id="a selection records its scope and the checks that excluded the others",
        ),
        pytest.param(
            [runtime_manifest("off", disabled=True)],
            SelectionOutcome("no_runtime", "none", ("disabled",)),
            id="no runtime records no_runtime",
        ),
    ],
)
def test_auto_selection_outcome_is_reported_for_metrics(runtimes, expected) -> None:
    verdict = review_inference_service(
        make_isvc("svc"),
        ModelCatalog.of([make_model("llama")]),
        RuntimeCatalog.of(from_manifest(r) for r in runtimes),
    )
    assert verdict.selection == expected
