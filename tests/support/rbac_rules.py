"""RBAC rules as a set of grants: (apiGroup, resource, verb, resourceName or None)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Grant = tuple[str, str, str, str | None]


def grants(rules: Iterable[Mapping[str, Any]]) -> set[Grant]:
    return {
        (group, resource, verb, name)
        for rule in rules
        for group in rule.get("apiGroups", ())
        for resource in rule.get("resources", ())
        for verb in rule.get("verbs", ())
        for name in (rule.get("resourceNames") or [None])
    }


def allows(granted: set[Grant], group: str, resource: str, verb: str, name: str | None) -> bool:
    return (group, resource, verb, None) in granted or (
        name is not None and (group, resource, verb, name) in granted
    )
