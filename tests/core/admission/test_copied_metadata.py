"""The bound of copied metadata at admission (docs/configuration.md, "metadataPropagation"): an
InferenceService whose labels and annotations (its own and its components', after the prefix
filter) total more bytes than ``maxBytes`` is denied, naming its size and the bound."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ome_operator.core.metadata_propagation import DEFAULT_MAX_BYTES, LAST_APPLIED
from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.models import from_manifest
from tests.builders import isvc_manifest
from tests.core.admission.reviews import (
    AdmissionVerdict,
    allowed_verdict,
    denied_verdict,
    review_of,
)

RUNNER = {"image": "vllm:1"}


def over(size: int, bound: int = DEFAULT_MAX_BYTES) -> str:
    return (
        "metadata.labels, metadata.annotations and the components' labels and annotations "
        f"copied onto workloads and pods total {size} bytes, over the bound of {bound} bytes "
        "(metadataPropagation.maxBytes)"
    )


def review(
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    engine: dict[str, Any] | None = None,
    propagation: dict[str, Any] | None = None,
) -> AdmissionVerdict:
    manifest = isvc_manifest(engine={"runner": RUNNER, **(engine or {})})
    manifest["metadata"]["labels"] = labels or {}
    manifest["metadata"]["annotations"] = annotations or {}
    config = OperatorConfig()
    if propagation is not None:
        config = parse_operator_config({"metadataPropagation": json.dumps(propagation)})
        assert config.problem is None
    return review_of(from_manifest(manifest), config=config)


#: One annotation of exactly ``DEFAULT_MAX_BYTES`` bytes, key ("a", 1 byte) plus value.
AT_BOUND = {"a": "x" * (DEFAULT_MAX_BYTES - 1)}


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({"annotations": AT_BOUND}, allowed_verdict(), id="exactly 64 KiB is admitted"),
        pytest.param(
            {"annotations": {"ab": "x" * (DEFAULT_MAX_BYTES - 1)}},
            denied_verdict(over(DEFAULT_MAX_BYTES + 1)),
            id="one byte over 64 KiB is denied with its size and the bound",
        ),
        pytest.param(
            {
                "labels": {"team": "a" * 20},
                "annotations": {"note": "b" * 40_000},
                "engine": {"annotations": {"engine-note": "c" * 30_000}},
            },
            denied_verdict(over(4 + 20 + 4 + 40_000 + 11 + 30_000)),
            id="labels, annotations and a component's annotations count together",
        ),
        pytest.param(
            {"annotations": {"é": "€" * 30_000}, "propagation": {"maxBytes": 90_001}},
            denied_verdict(over(90_002, 90_001)),
            id="sizes are counted in UTF-8 bytes, not characters",
        ),
        pytest.param(
            {"annotations": {LAST_APPLIED: "x" * 300_000}},
            allowed_verdict(),
            id="kubectl's last-applied-configuration is never copied and never counted",
        ),
        pytest.param(
            {
                "annotations": {"logs.example.com/blob": "x" * 100_000, "small": "y"},
                "propagation": {"excludePrefixes": ["logs.example.com/"]},
            },
            allowed_verdict(),
            id="an excluded prefix is not copied and not counted",
        ),
        pytest.param(
            {"labels": {"team": "abcdef"}, "propagation": {"maxBytes": 8}},
            denied_verdict(over(10, 8)),
            id="the bound is configurable",
        ),
    ],
)
def test_the_copied_metadata_is_bounded(kwargs: dict[str, Any], expected: AdmissionVerdict) -> None:
    assert review(**kwargs) == expected


def test_the_bound_is_checked_after_the_name_and_before_the_budget_fields() -> None:
    verdict = review(
        annotations={"ab": "x" * (DEFAULT_MAX_BYTES - 1)},
        engine={"minAvailable": 1, "maxUnavailable": 1},
    )
    assert verdict == denied_verdict(over(DEFAULT_MAX_BYTES + 1))
