"""The CRD schemas and the pydantic models describe the same fields (SPEC S1, house style §9).

Walking each ome.io model's ``model_fields`` from the root of its CRD, every alias a model declares
must be a property of the matching schema node, with the same JSON type, the same enum (for
``Literal`` fields), the same lower bound (``ge``) and the same default; a field the model
requires must be required by the CRD too, or the API server would accept objects the operator
cannot parse. Status vocabularies written by the operator match the core's enums.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

import annotated_types
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ome_operator.core.deployment_modes import DeploymentMode, ModeSource
from ome_operator.models import (
    AcceleratorClass,
    ComponentSpec,
    InferenceService,
    ModelFormat,
    ModelRef,
    ModelResource,
    ModelSpec,
    ObjectMeta,
    RuntimeRef,
    ServingRuntime,
    SupportedModelFormat,
)
from tests.support.crd_schema import version_schema

#: Each ome.io kind and the model its objects parse into (models.MODEL_BY_KIND).
ROOTS = [
    ("InferenceService", InferenceService),
    ("ServingRuntime", ServingRuntime),
    ("ClusterServingRuntime", ServingRuntime),
    ("BaseModel", ModelResource),
    ("ClusterBaseModel", ModelResource),
    ("AcceleratorClass", AcceleratorClass),
]

#: Models of built-in Kubernetes types: the API server owns their schema, not our CRDs.
BUILT_IN = (ObjectMeta,)


@dataclasses.dataclass(frozen=True)
class Shape:
    """What a field's annotation says about its JSON form."""

    json_type: str | None  # "string", "integer", "boolean", "object", "array", "int-or-string"
    model: type[BaseModel] | None = None  # a nested model to walk into
    element: Shape | None = None  # list items or map values
    literals: tuple[Any, ...] = ()
    minimum: int | None = None


def _minimum(metadata: typing.Iterable[Any]) -> int | None:
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            return item.ge
        if isinstance(item, FieldInfo):
            found = _minimum(item.metadata)
            if found is not None:
                return found
    return None


def _shape(annotation: Any) -> Shape:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        inner = _shape(args[0])
        minimum = _minimum(args[1:])
        return dataclasses.replace(inner, minimum=minimum if minimum is not None else inner.minimum)
    if origin in (Union, types.UnionType):
        members = [_shape(a) for a in args if a is not type(None)]
        if {m.json_type for m in members} == {"integer", "string"}:
            return Shape("int-or-string")
        (member,) = members
        return member
    if origin is Literal:
        (json_type,) = {_shape(type(a)).json_type for a in args}
        return Shape(json_type, literals=args)
    if origin is list:
        return Shape("array", element=_shape(args[0]))
    if origin is dict or annotation is dict:
        return Shape("object", element=_shape(args[1]) if args else None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return Shape("object", model=annotation)
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    return Shape(simple.get(annotation))  # Any and the like: no claim


def _crd_type(node: Mapping[str, Any]) -> str | None:
    return "int-or-string" if node.get("x-kubernetes-int-or-string") else node.get("type")


@dataclasses.dataclass
class Walk:
    problems: list[str] = dataclasses.field(default_factory=list)
    visited: set[type[BaseModel]] = dataclasses.field(default_factory=set)
    defaults: list[tuple[str, Any, Any]] = dataclasses.field(default_factory=list)


def _walk_model(model: type[BaseModel], node: Mapping[str, Any], path: str, walk: Walk) -> None:
    walk.visited.add(model)
    properties = node.get("properties", {})
    for name, field in model.model_fields.items():
        alias = field.alias or name
        where = f"{path}.{alias}" if path else alias
        owner = f"{model.__name__}.{name}"
        if alias not in properties:
            walk.problems.append(f"{where}: {owner} is not in the CRD schema")
            continue
        child = properties[alias]
        if field.is_required() and alias not in node.get("required", ()):
            walk.problems.append(f"{where}: {owner} is required, the CRD does not require it")
        if "default" in child:
            model_default = None if field.default is PydanticUndefined else field.default
            walk.defaults.append((where, child["default"], model_default))
            if model_default != child["default"]:
                walk.problems.append(
                    f"{where}: CRD default {child['default']!r}, {owner} default {model_default!r}"
                )
        shape = _shape(field.annotation)
        minimum = _minimum(field.metadata)
        if minimum is not None:
            shape = dataclasses.replace(shape, minimum=minimum)
        _walk_value(shape, child, where, owner, walk)


def _walk_value(shape: Shape, node: Mapping[str, Any], where: str, owner: str, walk: Walk) -> None:
    if shape.json_type is not None and shape.json_type != _crd_type(node):
        walk.problems.append(
            f"{where}: CRD type {_crd_type(node)!r}, {owner} is {shape.json_type!r}"
        )
        return
    if shape.literals and sorted(shape.literals) != sorted(node.get("enum", [])):
        walk.problems.append(
            f"{where}: CRD enum {node.get('enum')!r}, {owner} accepts {list(shape.literals)!r}"
        )
    if shape.minimum is not None and node.get("minimum") != shape.minimum:
        walk.problems.append(
            f"{where}: CRD minimum {node.get('minimum')!r}, {owner} needs >= {shape.minimum}"
        )
    if shape.model is not None and shape.model not in BUILT_IN:
        _walk_model(shape.model, node, where, walk)
    elif shape.element is not None and shape.json_type == "array":
        _walk_value(shape.element, node["items"], f"{where}[]", owner, walk)
    elif shape.element is not None and isinstance(node.get("additionalProperties"), Mapping):
        _walk_value(shape.element, node["additionalProperties"], f"{where}{{}}", owner, walk)


def _walk(kind: str, model: type[BaseModel]) -> Walk:
    walk = Walk()
    _walk_model(model, version_schema("ome.io/v1beta1", kind), "", walk)
    return walk


@pytest.mark.parametrize(("kind", "model"), [pytest.param(*r, id=r[0]) for r in ROOTS])
def test_every_field_a_model_declares_is_in_its_crd_with_the_same_type_and_rules(
    kind: str, model: type[BaseModel]
) -> None:
    assert _walk(kind, model).problems == []


def test_the_walk_reaches_every_nested_model_of_the_ome_io_kinds() -> None:
    visited = set().union(*(_walk(kind, model).visited for kind, model in ROOTS))
    assert {ComponentSpec, SupportedModelFormat, ModelFormat, ModelRef, RuntimeRef, ModelSpec} <= (
        visited
    )


def test_the_walk_finds_a_field_missing_from_the_crd() -> None:
    class Extra(ModelFormat):
        brand_new: str | None = None

    walk = Walk()
    node = version_schema("ome.io/v1beta1", "ServingRuntime")["properties"]["spec"]
    _walk_model(
        Extra,
        node["properties"]["supportedModelFormats"]["items"]["properties"]["modelFormat"],
        "modelFormat",
        walk,
    )
    assert walk.problems == ["modelFormat.brandNew: Extra.brand_new is not in the CRD schema"]


# ------------------------------------------------------------------ defaults (SPEC S1.2, S1.5)

DEFAULTS = [
    ("ServingRuntime", "spec.supportedModelFormats[].modelFormat.operator", "Equal"),
    ("ServingRuntime", "spec.supportedModelFormats[].modelFormat.weight", 1),
    ("ServingRuntime", "spec.supportedModelFormats[].modelFramework.operator", "Equal"),
    ("ServingRuntime", "spec.supportedModelFormats[].modelFramework.weight", 1),
    ("ClusterServingRuntime", "spec.supportedModelFormats[].modelFormat.operator", "Equal"),
    ("ClusterServingRuntime", "spec.supportedModelFormats[].modelFormat.weight", 1),
    ("ClusterServingRuntime", "spec.supportedModelFormats[].modelFramework.operator", "Equal"),
    ("ClusterServingRuntime", "spec.supportedModelFormats[].modelFramework.weight", 1),
    ("InferenceService", "spec.model.kind", "ClusterBaseModel"),
    ("InferenceService", "spec.model.apiGroup", "ome.io"),
    ("InferenceService", "spec.runtime.kind", "ClusterServingRuntime"),
    ("InferenceService", "spec.runtime.apiGroup", "ome.io"),
    ("InferenceService", "spec.runtime.autoSync", True),
    ("BaseModel", "spec.distribution", "PerNode"),
    ("ClusterBaseModel", "spec.distribution", "PerNode"),
]


@pytest.mark.parametrize(
    ("kind", "where", "value"), [pytest.param(*d, id=f"{d[0]} {d[1]}") for d in DEFAULTS]
)
def test_the_crd_and_the_model_default_a_field_to_the_same_value(
    kind: str, where: str, value: Any
) -> None:
    model = dict(ROOTS)[kind]
    found = {path: (crd, model_default) for path, crd, model_default in _walk(kind, model).defaults}
    assert found[where] == (value, value)


@pytest.mark.parametrize(("kind", "model"), [pytest.param(*r, id=r[0]) for r in ROOTS])
def test_the_crd_defaults_nothing_beyond_the_spec(kind: str, model: type[BaseModel]) -> None:
    listed = {where for k, where, _ in DEFAULTS if k == kind}
    assert {where for where, *_ in _walk(kind, model).defaults} == listed


# ------------------------------------------------------------------ status vocabularies (S16.4)


def _component_status() -> Mapping[str, Any]:
    status = version_schema("ome.io/v1beta1", "InferenceService")["properties"]["status"]
    return status["properties"]["components"]["additionalProperties"]["properties"]


@pytest.mark.parametrize(
    ("field", "vocabulary"),
    [
        pytest.param("deploymentMode", DeploymentMode, id="deploymentMode"),
        pytest.param("deploymentModeSource", ModeSource, id="deploymentModeSource"),
    ],
)
def test_status_mode_fields_accept_exactly_the_core_vocabulary(
    field: str, vocabulary: type[Any]
) -> None:
    assert sorted(_component_status()[field]["enum"]) == sorted(v.value for v in vocabulary)
