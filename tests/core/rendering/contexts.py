"""Builders for rendering tests: a ComponentContext from manifests, through the real merge (S4)
and mode resolution (S3), and the golden-file comparison."""

from __future__ import annotations

import difflib
import pathlib
from collections.abc import Sequence
from typing import Any

import yaml

from ome_operator.core.deployment_modes import resolve_component_mode
from ome_operator.core.merging import effective_replicas, merge_component
from ome_operator.core.operator_config import PdbDefaults, ReplicaDefaults
from ome_operator.core.rendering import ComponentContext
from ome_operator.models import InferenceService, ModelResource, ServingRuntime

GOLDEN = pathlib.Path(__file__).parent / "golden"


def make_context(
    isvc: InferenceService,
    runtime: ServingRuntime,
    component: str = "engine",
    *,
    model: ModelResource | None = None,
    pdb_defaults: PdbDefaults | None = None,
    replica_defaults: ReplicaDefaults | None = None,
) -> ComponentContext:
    """The context the reconciler builds for one declared component."""
    declared = isvc.spec.component(component)
    assert declared is not None, f"the InferenceService does not declare {component}"
    merged = merge_component(runtime.spec.config(component), declared, where=component)
    minimum, maximum = effective_replicas(component, merged, replica_defaults or ReplicaDefaults())
    return ComponentContext(
        isvc=isvc,
        component=component,
        declared=declared,
        merged=merged,
        mode=resolve_component_mode(isvc, component, merged).mode,
        runtime=runtime,
        model=model,
        min_replicas=minimum,
        max_replicas=maximum,
        pdb_defaults=pdb_defaults or PdbDefaults(),
    )


def dump(objects: Sequence[dict[str, Any]]) -> str:
    """Objects as a multi-document YAML stream with sorted keys."""
    return yaml.safe_dump_all(objects, sort_keys=True, default_flow_style=False, width=100)


def assert_matches_golden(objects: Sequence[dict[str, Any]], name: str) -> None:
    """Compare ``objects`` with ``golden/<name>.yaml`` as data; on a mismatch fail with a unified
    diff of both sides dumped the same way. Goldens are edited by hand, never regenerated."""
    path = GOLDEN / f"{name}.yaml"
    expected = list(yaml.safe_load_all(path.read_text()))
    actual = list(objects)
    if actual != expected:
        diff = difflib.unified_diff(
            dump(expected).splitlines(),
            dump(actual).splitlines(),
            fromfile=f"golden/{name}.yaml",
            tofile="rendered",
            lineterm="",
        )
        raise AssertionError("rendered objects differ from the golden file:\n" + "\n".join(diff))
