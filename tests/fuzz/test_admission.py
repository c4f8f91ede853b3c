"""The admission rules decide on whatever ``from_manifest`` accepts, mutated: a verdict for
every InferenceService and runtime, never an exception, the same verdict twice."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from ome_operator.core.admission import review_inference_service, review_serving_runtime
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.core.selection import RuntimeCatalog
from ome_operator.models import (
    AcceleratorClass,
    InferenceService,
    InvalidResourceError,
    ModelResource,
    ServingRuntime,
    from_manifest,
)
from tests.fuzz.mutations import fuzz, manifest_sets


def parsed(docs: list[Any]) -> list[Any]:
    """The models of the documents ``from_manifest`` accepts (the rest refused as invalid)."""
    models = []
    for doc in docs:
        try:
            models.append(from_manifest(doc))
        except InvalidResourceError:
            continue
    return models


def verdicts(models: list[Any]) -> list[tuple[str, bool, str, tuple[str, ...]]]:
    runtimes = [m for m in models if isinstance(m, ServingRuntime)]
    catalog = ModelCatalog.of(m for m in models if isinstance(m, ModelResource))
    classes = frozenset(m.metadata.name for m in models if isinstance(m, AcceleratorClass))
    found = []
    for model in models:
        if isinstance(model, InferenceService):
            namespace = model.namespace
            visible = RuntimeCatalog.of(
                r for r in runtimes if r.is_cluster or r.metadata.namespace == namespace
            )
            verdict = review_inference_service(model, catalog, visible)
        elif isinstance(model, ServingRuntime):
            verdict = review_serving_runtime(model, classes)
        else:
            continue
        found.append((model.name, verdict.allowed, verdict.message, verdict.warnings))
    return found


@fuzz(400)
@given(manifest_sets(most=4))
def test_every_accepted_object_gets_a_verdict_the_same_twice(docs: list[Any]) -> None:
    first = verdicts(parsed(docs))

    assert verdicts(parsed(docs)) == first
