"""Kubernetes label selectors (``matchLabels``, ``matchExpressions``), parsed and matched.

Used by the pod policy's per-namespace exceptions (docs/configuration.md, "podPolicy"); the
semantics are metav1.LabelSelector's: every term must hold, and an empty selector matches every
set of labels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["OPERATORS", "LabelSelector", "Requirement", "parse_label_selector"]

#: The operators of ``matchExpressions``, as metav1 spells them.
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_FIELDS = ("matchLabels", "matchExpressions")
_EXPRESSION_FIELDS = ("key", "operator", "values")


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        inside = self.key in labels and labels[self.key] in self.values
        return inside if self.operator == "In" else not inside


@dataclass(frozen=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.match_expressions
        )


def _requirement(given: Any, path: str) -> Requirement:
    if not isinstance(given, dict) or any(k not in _EXPRESSION_FIELDS for k in given):
        raise ValueError(f"{path} must be an object of key, operator and values")
    key, operator, values = given.get("key"), given.get("operator"), given.get("values", [])
    if not isinstance(key, str) or not key:
        raise ValueError(f"{path}.key must be a label key, got {json.dumps(key)}")
    if operator not in OPERATORS:
        raise ValueError(
            f"{path}.operator must be one of {', '.join(OPERATORS)}, got {json.dumps(operator)}"
        )
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"{path}.values must be a list of strings, got {json.dumps(values)}")
    if (operator in ("In", "NotIn")) != bool(values):
        need = "must not be empty" if operator in ("In", "NotIn") else "must be empty"
        raise ValueError(f"{path}.values {need} for operator {operator}")
    return Requirement(key, operator, tuple(values))


def parse_label_selector(given: Any) -> LabelSelector:
    """The selector of a metav1.LabelSelector object; ValueError names the wrong field."""
    if not isinstance(given, dict) or any(k not in _FIELDS for k in given):
        raise ValueError(
            f"must be an object of matchLabels and matchExpressions, got {json.dumps(given)}"
        )
    labels = given.get("matchLabels", {})
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError(f"matchLabels must be a map of strings, got {json.dumps(labels)}")
    expressions = given.get("matchExpressions", [])
    if not isinstance(expressions, list):
        raise ValueError(f"matchExpressions must be a list, got {json.dumps(expressions)}")
    return LabelSelector(
        tuple(sorted(labels.items())),
        tuple(_requirement(e, f"matchExpressions[{i}]") for i, e in enumerate(expressions)),
    )
