"""ServingRuntime and ClusterServingRuntime review (SPEC S7.4): unknown accelerator classes,
conflicting priorities, replica bounds, mode typos; a disabled runtime skips every denial."""

from __future__ import annotations

import pytest

from ome_operator.core.admission import AdmissionVerdict, review_serving_runtime
from ome_operator.models import ServingRuntime
from tests.builders import entry, make_runtime
from tests.core.admission.reviews import MODE, allowed_verdict, denied_verdict, typo_message


@pytest.mark.parametrize(
    ("runtime", "classes", "expected"),
    [
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": ["h100", "a100", "h200"]}),
            frozenset({"a100"}),
            denied_verdict(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h100 h200]"
            ),
            id="unknown accelerator classes are denied, in list order",
        ),
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": ["h200", "h100"]}),
            frozenset(),
            denied_verdict(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h200 h100]"
            ),
            id="the missing names keep the runtime's order, not sorted",
        ),
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": ["h100"]}),
            frozenset({"h100", "a100"}),
            allowed_verdict(),
            id="known accelerator classes pass",
        ),
        pytest.param(
            make_runtime(acceleratorRequirements={"acceleratorClasses": []}),
            frozenset(),
            allowed_verdict(),
            id="an empty class list passes",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True, priority=1),
                    entry(name="llama", autoSelect=True, priority=2),
                ]
            ),
            frozenset(),
            denied_verdict("different priorities assigned for the model format"),
            id="autoSelect entries sharing a name with different priorities are denied",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True),
                    entry(name="llama", autoSelect=True, priority=1),
                ]
            ),
            frozenset(),
            allowed_verdict(),
            id="an unset priority counts as 1",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True),
                    entry(name="llama", autoSelect=True, priority=3),
                ]
            ),
            frozenset(),
            denied_verdict("different priorities assigned for the model format"),
            id="an unset priority differs from 3",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(autoSelect=True, priority=2),
                    entry("gguf", name="", autoSelect=True, priority=1),
                ]
            ),
            frozenset(),
            denied_verdict("different priorities assigned for the model format"),
            id="entries with an empty or absent name form one group",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="a", autoSelect=True, priority=1),
                    entry(name="b", autoSelect=True, priority=2),
                ]
            ),
            frozenset(),
            allowed_verdict(),
            id="different names may have different priorities",
        ),
        pytest.param(
            make_runtime(
                formats=[
                    entry(name="llama", autoSelect=True, priority=1),
                    entry(name="llama", autoSelect=False, priority=2),
                    entry(name="llama", priority=3),
                ]
            ),
            frozenset(),
            allowed_verdict(),
            id="only autoSelect true entries are compared",
        ),
        pytest.param(
            make_runtime(
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                formats=[
                    entry(name="x", autoSelect=True, priority=1),
                    entry(name="x", autoSelect=True, priority=2),
                ],
            ),
            frozenset(),
            denied_verdict(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h100]"
            ),
            id="the accelerator-class denial comes before the priority denial",
        ),
        pytest.param(
            make_runtime(
                disabled=True,
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                formats=[
                    entry(name="x", autoSelect=True, priority=1),
                    entry(name="x", autoSelect=True, priority=2),
                ],
            ),
            frozenset(),
            allowed_verdict(),
            id="a disabled runtime skips every denial",
        ),
        pytest.param(
            make_runtime(
                "ns-rt",
                cluster=False,
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
            ),
            frozenset(),
            denied_verdict(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h100]"
            ),
            id="a ServingRuntime gets the same denials",
        ),
        pytest.param(
            make_runtime(
                engineConfig={"annotations": {MODE: "omenative"}},
                decoderConfig={"annotations": {MODE: "OMENative"}},
                routerConfig={"annotations": {MODE: "Raw"}},
            ),
            frozenset(),
            allowed_verdict(
                typo_message("omenative", "spec.engineConfig.annotations", "OMENative"),
                typo_message("Raw", "spec.routerConfig.annotations"),
            ),
            id="runtime config annotations get typo warnings in engine, decoder, router order",
        ),
        pytest.param(
            make_runtime(
                disabled=True,
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                engineConfig={"annotations": {MODE: "multinode"}},
            ),
            frozenset(),
            allowed_verdict(
                typo_message("multinode", "spec.engineConfig.annotations", "MultiNode")
            ),
            id="a disabled runtime still gets typo warnings",
        ),
        pytest.param(
            make_runtime(
                acceleratorRequirements={"acceleratorClasses": ["h100"]},
                engineConfig={"annotations": {MODE: "multinode"}},
            ),
            frozenset(),
            denied_verdict(
                "unknown accelerator classes referenced in AcceleratorRequirements: [h100]",
                typo_message("multinode", "spec.engineConfig.annotations", "MultiNode"),
            ),
            id="a denied runtime still gets typo warnings",
        ),
        pytest.param(
            make_runtime(engineConfig={"minReplicas": 4, "maxReplicas": 2}),
            frozenset(),
            denied_verdict(
                "spec.engineConfig.minReplicas (4) must not be greater than "
                "spec.engineConfig.maxReplicas (2)"
            ),
            id="a runtime's replica bounds are checked as an InferenceService's",
        ),
        pytest.param(
            make_runtime(routerConfig={"maxReplicas": 2**31}),
            frozenset(),
            denied_verdict(
                "spec.routerConfig.maxReplicas must be from 0 to 2147483647 (got 2147483648)"
            ),
            id="a runtime maxReplicas beyond int32 is denied",
        ),
    ],
)
def test_serving_runtime_review(
    runtime: ServingRuntime, classes: frozenset[str], expected: AdmissionVerdict
) -> None:
    assert review_serving_runtime(runtime, classes) == expected
