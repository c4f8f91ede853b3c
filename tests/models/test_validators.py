"""Importing the models builds no validator: each is built on its model's first parse, or all
at once for the operator (``build_validators``); the default instances the models hold are what
the models give when called without arguments."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from ome_operator.models import (
    InferenceServiceSpec,
    ModelFormatRef,
    ModelSpec,
    ModelStorage,
    ObjectMeta,
    ServingRuntimeSpec,
)
from ome_operator.models.base import CRDModel, defaults

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: Run in a process of its own: this one has parsed every kind by now.
BUILT = """
from ome_operator.models import MODEL_BY_KIND
from ome_operator.models.resources import build_validators
import sys
print(sorted({m.__name__ for m in MODEL_BY_KIND.values() if m.__pydantic_complete__}))
print("pydantic.plugin._loader" in sys.modules)
build_validators()
print(sorted({m.__name__ for m in MODEL_BY_KIND.values() if m.__pydantic_complete__}))
"""


def test_importing_the_models_builds_no_validator_and_build_validators_builds_them_all():
    done = subprocess.run(
        [sys.executable, "-c", BUILT],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "operator")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    kinds = "['AcceleratorClass', 'InferenceService', 'ModelResource', 'ServingRuntime']"
    assert done.stdout.splitlines() == ["[]", "False", kinds]


@pytest.mark.parametrize(
    "model",
    [ObjectMeta, ModelFormatRef, ModelStorage, ModelSpec, InferenceServiceSpec, ServingRuntimeSpec],
)
def test_a_default_instance_is_what_the_model_gives_without_arguments(model: type[CRDModel]):
    made, called = defaults(model), model()
    assert (made, made.__pydantic_fields_set__, made.__pydantic_extra__) == (called, set(), {})
    assert made.raw() == called.raw() == {}
