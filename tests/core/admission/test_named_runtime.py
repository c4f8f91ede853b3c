"""S7.2 denial 6, a named runtime: it must exist and be enabled; one that does not declare
support for the model is admitted with a warning."""

from __future__ import annotations

import pytest

from tests.builders import entry, make_isvc, make_model, make_runtime
from tests.core.admission.reviews import (
    MODE,
    MODELS,
    RUNTIMES,
    allowed_verdict,
    denied_verdict,
    review_of,
)


@pytest.mark.parametrize(
    ("isvc", "models", "runtimes", "expected"),
    [
        pytest.param(
            make_isvc(runtime={"name": "gone"}),
            MODELS,
            RUNTIMES,
            denied_verdict("runtime gone not found in namespace default or at cluster scope"),
            id="6: a named runtime missing with spec.model is denied",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt", "kind": "ServingRuntime"}, namespace="team"),
            MODELS,
            RUNTIMES,
            denied_verdict("ServingRuntime rt not found in namespace team"),
            id="6: kind ServingRuntime looks only in the namespace",
        ),
        pytest.param(
            make_isvc(runtime={"name": "ns-rt"}, namespace="team"),
            MODELS,
            [make_runtime("ns-rt", cluster=False, namespace="team")],
            allowed_verdict(),
            id="6: the default kind falls back to a ServingRuntime of that name",
        ),
        pytest.param(
            make_isvc(model=None, runtime={"name": "gone"}),
            MODELS,
            RUNTIMES,
            allowed_verdict(),
            id="6: a named runtime missing without spec.model is admitted",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            MODELS,
            [make_runtime("rt", disabled=True)],
            denied_verdict("cluster-scoped runtime rt is disabled"),
            id="6: a disabled named ClusterServingRuntime is denied",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt", "kind": "ServingRuntime"}),
            MODELS,
            [make_runtime("rt", cluster=False, disabled=True)],
            denied_verdict("namespace-scoped runtime rt is disabled"),
            id="6: a disabled named ServingRuntime is denied",
        ),
        pytest.param(
            make_isvc(model=None, runtime={"name": "rt"}),
            MODELS,
            [make_runtime("rt", disabled=True)],
            denied_verdict("cluster-scoped runtime rt is disabled"),
            id="6: a disabled named runtime is denied without spec.model too",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}, engine=None),
            MODELS,
            [make_runtime("rt", disabled=True)],
            allowed_verdict(),
            id="6: without an engine the runtime is not checked",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            [make_model("llama", fmt="")],
            RUNTIMES,
            denied_verdict(
                "invalid model specification: modelFormat.name: model format name is required"
            ),
            id="6: a named runtime with a model failing the S2.2 pre-check is denied",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            MODELS,
            RUNTIMES,
            allowed_verdict(),
            id="6: a compatible named runtime is admitted without warnings",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}),
            MODELS,
            [make_runtime("rt", formats=[entry("gguf")])],
            allowed_verdict(
                'runtime "rt" does not declare support for model "llama" (runtime rt does not '
                "support model safetensors: model format 'mt:safetensors:transformers' not in "
                "supported formats: format name mismatch (model=safetensors, runtime=gguf)); "
                "proceeding because the runtime was named explicitly"
            ),
            id="6: an incompatible named runtime only warns, naming the model format",
        ),
        pytest.param(
            make_isvc(runtime={"name": "rt"}, engine={"annotations": {MODE: "OMENative"}}),
            MODELS,
            [make_runtime("rt", engineConfig={"annotations": {MODE: "MultiNode"}})],
            allowed_verdict(
                'runtime "rt" does not declare support for model "llama" (runtime rt does not '
                "support model : runtime engine deployment mode MultiNode does not match "
                "requested engine deployment mode OMENative); proceeding because the runtime was "
                "named explicitly"
            ),
            id="6: a mode mismatch of a named runtime warns with an empty model name",
        ),
        pytest.param(
            make_isvc(
                runtime={"name": "rt", "autoSync": False},
                acceleratorSelector={"acceleratorClass": "h100"},
            ),
            MODELS,
            RUNTIMES,
            allowed_verdict(
                'runtime "rt" does not declare support for model "llama" (runtime rt does not '
                "support model : runtime does not support the required accelerator class); "
                "proceeding because the runtime was named explicitly"
            ),
            id="6: the named-runtime warning is given with autoSync false too",
        ),
    ],
)
def test_inference_service_denials_in_order(isvc, models, runtimes, expected) -> None:
    assert review_of(isvc, models, runtimes) == expected
