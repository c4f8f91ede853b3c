"""The mode-typo warning (SPEC S16.3): an ``ome.io/deploymentMode`` value that is not a mode,
with the mode it differs from only in letter case."""

from __future__ import annotations

import pytest

from ome_operator.core.admission import mode_typo_warnings
from tests.core.admission.reviews import MODE, typo_message


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param({}, [], id="no annotation, no warning"),
        pytest.param({"other": "omenative"}, [], id="other annotations are not read"),
        pytest.param({MODE: "RawDeployment"}, [], id="RawDeployment is a mode"),
        pytest.param({MODE: "OMENative"}, [], id="OMENative is a mode"),
        pytest.param({MODE: "MultiNode"}, [], id="MultiNode is a mode"),
        pytest.param({MODE: "VirtualDeployment"}, [], id="VirtualDeployment is a mode"),
        pytest.param(
            {MODE: "omenative"},
            [
                'ome.io/deploymentMode "omenative" on spec.engine.annotations is not a deployment '
                "mode and is ignored; valid values are RawDeployment, OMENative, MultiNode, "
                "VirtualDeployment; did you mean OMENative?"
            ],
            id="a mode in another letter case suggests the mode",
        ),
        pytest.param(
            {MODE: "RAWDEPLOYMENT"},
            [typo_message("RAWDEPLOYMENT", "spec.engine.annotations", "RawDeployment")],
            id="upper case suggests RawDeployment",
        ),
        pytest.param(
            {MODE: "virtualdeployment"},
            [typo_message("virtualdeployment", "spec.engine.annotations", "VirtualDeployment")],
            id="lower case suggests VirtualDeployment",
        ),
        pytest.param(
            {MODE: "MultiNodeRayVLLM"},
            [
                'ome.io/deploymentMode "MultiNodeRayVLLM" on spec.engine.annotations is not a '
                "deployment mode and is ignored; valid values are RawDeployment, OMENative, "
                "MultiNode, VirtualDeployment"
            ],
            id="a value that is no mode in any case suggests nothing",
        ),
        pytest.param(
            {MODE: " OMENative"},
            [typo_message(" OMENative", "spec.engine.annotations")],
            id="a value with spaces is not a mode and suggests nothing",
        ),
    ],
)
def test_mode_typo_warnings(annotations: dict[str, str], expected: list[str]) -> None:
    assert mode_typo_warnings("spec.engine.annotations", annotations) == expected
