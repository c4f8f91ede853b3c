"""The base of every resource model, and the one error that bad input raises.

Models mirror the CRDs: camelCase aliases, unknown fields preserved (``extra="allow"``), frozen,
scalars strict (an API server rejects ``"1"`` for an integer field, so do we). Kubernetes core types
(containers, pod fields) stay plain dicts. ``None`` means "unset" wherever the spec keeps unset
apart from zero, false or empty.

Validators are built when a model first validates, not at import (``defer_build``): a command
parses a few kinds, and building every validator at import (and pydantic's plugin discovery,
which the first build runs) took 20 of the 27 ms importing the models took. A model's default
instance (``defaults(ObjectMeta)``) is made without validating, so that importing the models
builds nothing; ``resources.build_validators`` builds them all, for the operator, before it
serves. The modules that define models do without ``from __future__ import annotations``:
pydantic would compile and evaluate every annotation string again as it makes each class
(1.5 of the 9 ms importing the models takes).
"""

import json
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainValidator,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from .limits import nesting_problem

__all__ = [
    "CRDModel",
    "IntOrString",
    "InvalidResourceError",
    "JsonDict",
    "ObjectMeta",
    "defaults",
    "field_path",
    "parse",
    "shown",
]

JsonDict = dict[str, Any]


class CRDModel(BaseModel):
    """A piece of a custom resource: camelCase on the wire, extras kept, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=True,
        defer_build=True,
    )

    def raw(self) -> JsonDict:
        """The object as it was written (aliases, extras, no defaults filled in)."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


M = TypeVar("M", bound="CRDModel")


def defaults(model: type[M]) -> M:
    """An instance of ``model`` holding its defaults: what ``model()`` gives, made without
    building the model's validator (a field's default is one, made at import)."""
    return model.model_construct()


class ObjectMeta(CRDModel):
    name: StrictStr = ""
    namespace: StrictStr | None = None
    labels: dict[str, StrictStr] = {}
    annotations: dict[str, StrictStr] = {}
    generation: StrictInt | None = None
    resource_version: StrictStr | None = None
    uid: StrictStr | None = None
    #: Set once deletion began (garbage collection of the owned objects runs then).
    deletion_timestamp: StrictStr | None = None


class InvalidResourceError(ValueError):
    """A resource that does not fit its schema; names the object, each field path and value."""

    def __init__(self, kind: str, name: str, problems: tuple[tuple[str, str], ...]) -> None:
        self.kind = kind
        self.name = name
        self.problems = problems
        super().__init__(self._render())

    def _render(self) -> str:
        listed = "; ".join(f"{path}: {problem}" for path, problem in self.problems)
        return f"{self.kind} {self.name} is invalid: {listed}"


_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_or_string_type": "an integer or a string",
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "a list",
}

#: A path part that reads as a field name; any other map key is shown as ``["key"]``.
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def field_path(parts: Iterable[Any]) -> str:
    """The camelCase path of a field: ``spec.engine.minReplicas``, ``[0]`` for a list index,
    ``annotations["ome.io/deploymentMode"]`` for a map key that is not a name, ``(root)`` for
    the object itself. The one way every message names a field."""
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _FIELD_NAME.fullmatch(str(part)):
            path += f"[{json.dumps(str(part), ensure_ascii=False)}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(root)"


#: Characters of a value a message shows, and the levels of a value shown by content (a
#: deeper one is shown by its shape).
_SHOWN_LENGTH, _SHOWN_NESTING = 80, 10


def shown(value: Any) -> str:
    """``value`` as JSON for a message, cut short (a 1 MB string must not make a 1 MB
    condition, event and log line); a deeply nested one only by its shape."""
    if isinstance(value, dict | list) and nesting_problem(value, _SHOWN_NESTING) is not None:
        return f"a deeply nested {'list' if isinstance(value, list) else 'object'}"
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= _SHOWN_LENGTH else text[: _SHOWN_LENGTH - 3] + "..."


def _problem(error: Mapping[str, Any]) -> str:
    """What was expected of one field, and the value found there."""
    kind, ctx = error["type"], error.get("ctx", {})
    if kind == "missing":
        return "is required but not set"
    value = shown(error["input"])
    if kind == "literal_error":
        expected = ctx["expected"].replace("'", '"')  # pydantic quotes Python-style
        return f"must be {expected} (got {value})"
    if kind == "greater_than_equal":
        return f"must be at least {ctx['ge']} (got {value})"
    if kind in _EXPECTED:
        return f"must be {_EXPECTED[kind]} (got {value})"
    return f"{error['msg'][:1].lower()}{error['msg'][1:]} (got {value})"


def _int_or_string(value: Any) -> int | str:
    """Kubernetes IntOrString: one error naming both types, not one per union member."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise PydanticCustomError("int_or_string_type", "Input should be an integer or a string")


IntOrString = Annotated[
    StrictInt | StrictStr, PlainValidator(_int_or_string, json_schema_input_type=int | str)
]


def parse(model: type[M], obj: Any, *, kind: str, name: str) -> M:
    """Build ``model`` from ``obj`` or raise InvalidResourceError listing every problem; an
    object nested over the limit is refused before anything recursive reads it."""
    deep = nesting_problem(obj)
    if deep is not None:
        raise InvalidResourceError(kind, name, ((field_path(deep[0]), deep[1]),))
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        problems = tuple(
            (field_path(error["loc"]), _problem(error)) for error in exc.errors(include_url=False)
        )
        raise InvalidResourceError(kind, name, problems) from None
