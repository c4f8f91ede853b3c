"""Builders for the admission tests (SPEC S7.2–S7.4, S16.3): the catalogs a review runs over,
the verdicts and warning texts it gives, and ``review_of``, one InferenceService review.

The S7.2 table ``test_inference_service_denials_in_order`` is split by rule over the
``test_*`` files of this folder, one rule each; a row's id starts with its rule's place in the
S7.2 order (OPEN-25), and a row that pins one rule before the next stays with the earlier rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ome_operator.core.admission import AdmissionVerdict, review_inference_service
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.operator_config import OperatorConfig
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import InferenceService, ModelResource, ServingRuntime
from tests.builders import make_model, make_runtime

MODE = "ome.io/deploymentMode"
LLAMA = make_model("llama")
RT = make_runtime("rt")
MODELS = (LLAMA,)
RUNTIMES = (RT,)

#: An engine whose runner is complete, so auto-selection is left to the controller (S7.2.6).
COMPLETE = {"runner": {"image": "vllm:1"}}
AUTO = "Runtime rt will be auto-selected for model llama"

VALID_MODES = "valid values are RawDeployment, OMENative, MultiNode, VirtualDeployment"


def denied_verdict(message: str, *warnings: str) -> AdmissionVerdict:
    return AdmissionVerdict(False, message, warnings)


def allowed_verdict(*warnings: str) -> AdmissionVerdict:
    return AdmissionVerdict(True, "", warnings)


def typo_message(value: str, place: str, suggestion: str | None = None) -> str:
    text = f'{MODE} "{value}" on {place} is not a deployment mode and is ignored; {VALID_MODES}'
    return text + (f"; did you mean {suggestion}?" if suggestion else "")


def review_of(
    isvc: InferenceService,
    models: Sequence[ModelResource] = MODELS,
    runtimes: Sequence[ServingRuntime] = RUNTIMES,
    *,
    config: OperatorConfig | None = None,
    namespace_labels: Mapping[str, str] | None = None,
) -> AdmissionVerdict:
    """The review of ``isvc`` under ``config`` (None: the defaults) in a namespace labelled
    ``namespace_labels``."""
    return review_inference_service(
        isvc, ModelCatalog.of(models), RuntimeCatalog.of(runtimes), config, namespace_labels
    )
