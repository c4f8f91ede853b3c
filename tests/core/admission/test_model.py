"""S7.2 denial 5: the referenced model exists in the namespace or at cluster scope, is enabled
and not sharded; it is checked even without an engine (OPEN-28)."""

from __future__ import annotations

import pytest

from ome_operator.models import InferenceService, from_manifest
from tests.builders import isvc_manifest, make_isvc, make_model
from tests.core.admission.reviews import (
    LLAMA,
    MODELS,
    RUNTIMES,
    allowed_verdict,
    denied_verdict,
    review_of,
)


def _base_model_kind() -> InferenceService:
    """An InferenceService without an engine whose ``spec.model`` is kind BaseModel ``llama``."""
    manifest = isvc_manifest(engine=None)
    manifest["spec"]["model"]["kind"] = "BaseModel"
    return from_manifest(manifest)


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        pytest.param(
            make_isvc(model="missing"),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'referenced model "missing" not found in namespace "default": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: a model in neither scope is denied",
        ),
        pytest.param(
            make_isvc(namespace="team"),
            [make_model("llama", cluster=False, namespace="other")],
            RUNTIMES,
            denied_verdict(
                'referenced model "llama" not found in namespace "team": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: a BaseModel in another namespace does not count",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", disabled=True)],
            RUNTIMES,
            denied_verdict("model llama is disabled"),
            id="5: a disabled model is denied",
        ),
        pytest.param(
            make_isvc(),
            [make_model("llama", distribution="Sharded")],
            RUNTIMES,
            denied_verdict(
                "model llama uses distribution Sharded: no model cache provider is configured "
                "for sharded model loading"
            ),
            id="5: a sharded model is denied",
        ),
        pytest.param(
            make_isvc(model="missing", engine=None),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'referenced model "missing" not found in namespace "default": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: the model is checked even without an engine (OPEN-28)",
        ),
        pytest.param(
            make_isvc(model="llama", engine=None),
            [make_model("llama", cluster=False)],
            RUNTIMES,
            allowed_verdict(
                'spec.model.kind is ClusterBaseModel, but only a BaseModel "llama" exists in '
                "namespace default: the controller will report ModelNotFound and write nothing; "
                "set spec.model.kind to BaseModel"
            ),
            id="5: a BaseModel referenced with the default kind is admitted with a warning",
        ),
        pytest.param(
            _base_model_kind(),
            MODELS,
            RUNTIMES,
            allowed_verdict(
                'spec.model.kind is BaseModel, but only a ClusterBaseModel "llama" exists: the '
                "controller will report ModelNotFound and write nothing; set spec.model.kind to "
                "ClusterBaseModel"
            ),
            id="5: a ClusterBaseModel referenced as a BaseModel is admitted with a warning",
        ),
        pytest.param(
            _base_model_kind(),
            [make_model("llama", cluster=False), LLAMA],
            RUNTIMES,
            allowed_verdict(),
            id="5: no warning when the kind named exists, the other one too",
        ),
        pytest.param(
            make_isvc(model="missing", runtime={"name": "gone"}),
            MODELS,
            RUNTIMES,
            denied_verdict(
                'referenced model "missing" not found in namespace "default": ensure a BaseModel '
                "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name"
            ),
            id="5: the model denial comes before the runtime check",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected


def test_the_model_kind_warning_is_counted_as_model_kind() -> None:
    verdict = review_of(make_isvc(engine=None), [make_model("llama", cluster=False)], RUNTIMES)
    assert verdict.warning_kinds == ("model_kind",)
