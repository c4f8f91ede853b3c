"""Validate ome.io objects against the CRDs in manifests/crds/, offline, as an API server would.

``kubernetes-validate`` knows only built-in kinds, so custom objects go through this converter
from a CRD's ``openAPIV3Schema`` to JSON Schema (shared/notes/testing-stack.md §8):

* ``x-kubernetes-int-or-string`` becomes ``anyOf: [integer, string]``; ``nullable`` adds ``null``;
  OpenAPI's boolean ``exclusiveMinimum``/``exclusiveMaximum`` become JSON Schema's numbers.
* An object without ``x-kubernetes-preserve-unknown-fields`` gets ``additionalProperties: false``
  (unless it has an ``additionalProperties`` schema). This is stricter than the API server, which
  silently *prunes* such fields: a pruned field is a lost field, so tests treat it as an error.
* Schema ``default``s are applied before validation, as the API server does (a ``null`` in a
  non-nullable field with a default is replaced by it).
* ``x-kubernetes-validations`` transition rules (those reading ``oldSelf``) need the old object
  and are skipped; any other CEL rule raises ``NotImplementedError`` rather than pass unchecked.

``validate_custom_object`` raises ``CustomObjectInvalid`` naming the object and every problem
with its camelCase field path, e.g. ``spec.engine.minReplicas: must be of type integer (got
"two")``.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import pathlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import yaml

__all__ = [
    "CRDS_DIR",
    "CustomObjectInvalid",
    "apply_defaults",
    "crd_for",
    "load_crds",
    "to_json_schema",
    "validate_custom_object",
    "version_schema",
]

CRDS_DIR = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "crds"

#: Marks a converted int-or-string node, so its error can name both types. JSON Schema ignores
#: unknown keywords.
_INT_OR_STRING = "x-int-or-string"

#: Keys of the CRD schema dialect that carry no validation here (or are handled separately).
_DROPPED = {
    "description",
    "example",
    "externalDocs",
    "nullable",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
}


class CustomObjectInvalid(ValueError):
    """An object its CRD rejects; names the kind, the object and each field path."""

    def __init__(self, kind: str, name: str, problems: tuple[tuple[str, str], ...]) -> None:
        self.kind = kind
        self.name = name
        self.problems = problems
        listed = "; ".join(f"{path}: {problem}" for path, problem in problems)
        super().__init__(f"{kind} {name} is invalid: {listed}")


def _is_transition_rule(rule: Mapping[str, Any]) -> bool:
    return re.search(r"\boldSelf\b", rule.get("rule", "")) is not None


def to_json_schema(node: Mapping[str, Any], *, is_root: bool = True) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) equivalent of one CRD ``openAPIV3Schema`` node."""
    for rule in node.get("x-kubernetes-validations", ()):
        if not _is_transition_rule(rule):
            raise NotImplementedError(f"CEL rule {rule['rule']!r} is not evaluated offline")

    if node.get("x-kubernetes-int-or-string"):
        return {"anyOf": [{"type": "integer"}, {"type": "string"}], _INT_OR_STRING: True}

    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties":
            out[key] = {
                name: (
                    {"type": "object"}  # the API server validates metadata itself
                    if is_root and name == "metadata"
                    else to_json_schema(child, is_root=False)
                )
                for name, child in value.items()
            }
        elif key == "items" or (key == "additionalProperties" and isinstance(value, Mapping)):
            out[key] = to_json_schema(value, is_root=False)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [to_json_schema(child, is_root=False) for child in value]
        elif key == "not":
            out[key] = to_json_schema(value, is_root=False)
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value:
                out[key] = node[bound]
        else:
            out[key] = copy.deepcopy(value)
    if "exclusiveMinimum" in out:
        out.pop("minimum", None)
    if "exclusiveMaximum" in out:
        out.pop("maximum", None)

    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if out.get("type") == "object" and not preserve and "additionalProperties" not in out:
        out["additionalProperties"] = False

    if node.get("nullable") is True:
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


def apply_defaults(obj: Any, node: Mapping[str, Any]) -> Any:
    """``obj`` with the schema's defaults filled in, as the API server stores it (a copy)."""
    obj = copy.deepcopy(obj)
    _default_in_place(obj, node)
    return obj


def _default_in_place(obj: Any, node: Mapping[str, Any]) -> None:
    if isinstance(obj, dict):
        for name, child in node.get("properties", {}).items():
            absent = name not in obj
            pruned_null = not absent and obj[name] is None and not child.get("nullable")
            if "default" in child and (absent or pruned_null):
                obj[name] = copy.deepcopy(child["default"])
            if name in obj:
                _default_in_place(obj[name], child)
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            for name in set(obj) - set(node.get("properties", {})):
                _default_in_place(obj[name], extra)
    elif isinstance(obj, list) and "items" in node:
        for item in obj:
            _default_in_place(item, node["items"])


@functools.cache
def load_crds(directory: pathlib.Path = CRDS_DIR) -> tuple[dict[str, Any], ...]:
    """Every CustomResourceDefinition in ``directory`` (``*.yaml``, multi-document allowed)."""
    crds = []
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                crds.append(doc)
    return tuple(crds)


def crd_for(api_version: str, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The CRD serving ``api_version``/``kind``, and that version's entry; KeyError if none."""
    group, _, version = api_version.rpartition("/")
    for crd in load_crds():
        spec = crd["spec"]
        if spec["group"] != group or spec["names"]["kind"] != kind:
            continue
        for entry in spec["versions"]:
            if entry["name"] == version and entry.get("served", False):
                return crd, entry
    raise KeyError(f"no CRD in {CRDS_DIR} serves {api_version} {kind}")


def version_schema(api_version: str, kind: str) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of the served version for ``api_version``/``kind``."""
    return crd_for(api_version, kind)[1]["schema"]["openAPIV3Schema"]


def _display_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return '""'
    name, namespace = meta.get("name", ""), meta.get("namespace")
    return f'"{namespace}/{name}"' if namespace else f'"{name}"'


def _path(parts: Iterator[Any]) -> str:
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            path += f".{part}" if path else str(part)
        else:
            path += f"[{json.dumps(str(part))}]"
    return path or "(root)"


def _problem(error: jsonschema.ValidationError) -> str:
    found = json.dumps(error.instance, default=str)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    match error.validator:
        case "anyOf" if schema.get(_INT_OR_STRING):
            return f"must be an integer or a string (got {found})"
        case "type":
            return f"must be of type {' or '.join(_as_list(error.validator_value))} (got {found})"
        case "enum":
            allowed = ", ".join(json.dumps(v) for v in error.validator_value)
            return f"must be one of {allowed} (got {found})"
        case "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum":
            words = {
                "minimum": "at least",
                "exclusiveMinimum": "more than",
                "maximum": "at most",
                "exclusiveMaximum": "less than",
            }
            return f"must be {words[error.validator]} {error.validator_value} (got {found})"
    return f"{error.message} (got {found})"


def _located(error: jsonschema.ValidationError) -> list[tuple[str, str]]:
    """The field path(s) an error is about, and what is wrong there."""
    parts = list(error.absolute_path)
    if error.validator == "required":
        # One error per missing property; its message starts with the property's repr.
        missing = ast.literal_eval(error.message.removesuffix(" is a required property"))
        return [(_path(iter([*parts, missing])), "is required but not set")]
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        return [
            (_path(iter([*parts, name])), "is not a field of the schema (the API server prunes it)")
            for name in sorted(set(error.instance) - set(known))
        ]
    return [(_path(iter(parts)), _problem(error))]


def _as_list(value: Any) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def validate_custom_object(obj: Mapping[str, Any]) -> None:
    """Raise CustomObjectInvalid unless the CRD of ``obj``'s kind accepts it (after defaulting)."""
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    api_version = obj.get("apiVersion") if isinstance(obj, Mapping) else None
    if not isinstance(kind, str) or not isinstance(api_version, str):
        raise CustomObjectInvalid(
            "object", '""', (("(root)", "apiVersion and kind must be set (strings)"),)
        )
    try:
        schema = version_schema(api_version, kind)
    except KeyError as exc:
        raise CustomObjectInvalid(kind, _display_name(obj), (("kind", str(exc.args[0])),)) from None
    defaulted = apply_defaults(dict(obj), schema)
    validator = jsonschema.Draft202012Validator(to_json_schema(schema))
    errors = sorted(
        validator.iter_errors(defaulted), key=lambda e: (list(map(str, e.path)), e.message)
    )
    if errors:
        problems = tuple(problem for e in errors for problem in _located(e))
        raise CustomObjectInvalid(kind, _display_name(obj), problems)
