"""What of an InferenceService's labels and annotations reaches what it owns
(docs/configuration.md, "metadataPropagation"): an excluded prefix reaches nothing; an
InferenceService over the bound has none copied (the operator's own keys stay) and a Warning
event ``MetadataNotCopied`` says so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.core.reconciling import Event
from ome_operator.models import from_manifest
from tests.builders import isvc_manifest
from tests.core.reconciling.plans import plan_of

RUNNER = {"image": "vllm:1"}
OPERATOR_LABELS = {"app", "component", "ome.io/inferenceservice", "serving-runtime"}


def _isvc(labels: dict[str, str], annotations: dict[str, str], engine: dict[str, Any]) -> Any:
    manifest = isvc_manifest(engine={"runner": RUNNER, **engine})
    manifest["metadata"]["labels"] = labels
    manifest["metadata"]["annotations"] = annotations
    return from_manifest(manifest)


def _config(**propagation: Any) -> OperatorConfig:
    config = parse_operator_config({"metadataPropagation": json.dumps(propagation)})
    assert config.problem is None
    return config


def _tenant_keys(obj: dict[str, Any]) -> set[str]:
    """The keys on ``obj`` and its pod template that the test's InferenceService wrote."""
    found: set[str] = set()
    metas = [obj["metadata"]]
    template = (obj.get("spec") or {}).get("template")
    if template:
        metas.append(template["metadata"])
    for meta in metas:
        for entries in (meta.get("labels") or {}, meta.get("annotations") or {}):
            found |= {k for k in entries if k.startswith(("team", "note", "trace.example/"))}
    return found


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(
            OperatorConfig(),
            {"team", "team-engine", "note", "note-engine", "trace.example/id"},
            id="by default every label and annotation is copied",
        ),
        pytest.param(
            _config(excludePrefixes=["trace.example/", "note-"]),
            {"team", "team-engine", "note"},
            id="keys with an excluded prefix are not copied",
        ),
        pytest.param(
            _config(maxBytes=10),
            set(),
            id="over the bound nothing is copied",
        ),
    ],
)
def test_what_is_copied_onto_every_object_and_pod(
    config: OperatorConfig, expected: set[str]
) -> None:
    isvc = _isvc(
        {"team": "a"},
        {"note": "n", "trace.example/id": "t"},
        {"labels": {"team-engine": "e"}, "annotations": {"note-engine": "m"}},
    )
    plan = plan_of(isvc, config=config)
    entry_service = {"team", "note", "trace.example/id"} & expected
    for obj in plan.apply:
        wanted = entry_service if obj["metadata"]["name"] == "svc" else expected
        assert _tenant_keys(obj) == wanted, obj["kind"]


def test_over_the_bound_the_operator_keys_stay_and_an_event_says_why() -> None:
    isvc = _isvc({"team": "abcdef"}, {}, {})
    plan = plan_of(isvc, config=_config(maxBytes=8))
    deployment = next(o for o in plan.apply if o["kind"] == "Deployment")
    assert OPERATOR_LABELS <= set(deployment["spec"]["template"]["metadata"]["labels"])
    assert [e for e in plan.events if e.reason == "MetadataNotCopied"] == [
        Event(
            "Warning",
            "MetadataNotCopied",
            "labels and annotations not copied: metadata.labels, metadata.annotations and the "
            "components' labels and annotations copied onto workloads and pods total 10 bytes, "
            "over the bound of 8 bytes (metadataPropagation.maxBytes)",
        )
    ]


def test_within_the_bound_no_event_is_posted() -> None:
    plan = plan_of(_isvc({"team": "a"}, {}, {}))
    assert [e for e in plan.events if e.reason == "MetadataNotCopied"] == []
