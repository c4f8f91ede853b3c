"""Reading a pod spec (a JSON tree) as the API server's PodSecurity admission reads the decoded
Pod, and writing its lists the way its messages write them.

A field of the wrong shape reads as unset: an API server stores no such pod, and the checks must
never fail on one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "bad_profile_types",
    "containers",
    "field",
    "go_quote",
    "in_user_namespace",
    "is_windows",
    "join_quote",
    "listed",
    "name_of",
    "pluralize",
    "pod_security_context",
    "security_context",
    "setters",
]

#: The container lists in the order the checks visit them.
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def field(obj: Any, *path: str) -> Any:
    """The value at ``path`` under ``obj``, or None when a step is missing or not an object."""
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def listed(value: Any) -> list[Any]:
    """``value`` if it is a list, else no items."""
    return value if isinstance(value, list) else []


def containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every container of ``spec``: init containers, then containers, then ephemeral ones."""
    for key in _CONTAINER_LISTS:
        for container in listed(spec.get(key)):
            if isinstance(container, Mapping):
                yield container


def security_context(container: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The container's ``securityContext``, None when it has none."""
    context = container.get("securityContext")
    return context if isinstance(context, Mapping) else None


def pod_security_context(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(spec.get("securityContext"))


def name_of(container: Mapping[str, Any]) -> str:
    name = container.get("name")
    return name if isinstance(name, str) else ""


def is_windows(spec: Mapping[str, Any]) -> bool:
    """``spec.os.name`` is ``windows``: the checks of Linux-only fields let such a pod pass."""
    return field(spec, "os", "name") == "windows"


def in_user_namespace(spec: Mapping[str, Any]) -> bool:
    """``hostUsers: false``: the pod runs in a user namespace, where root is not the node's."""
    return spec.get("hostUsers") is False


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def join_quote(items: Sequence[str]) -> str:
    """``"a", "b"``: each item between double quotes, unescaped, as the messages list them."""
    return '"' + '", "'.join(items) + '"' if items else ""


def go_quote(value: str) -> str:
    """``value`` as a double-quoted string literal (backslash escapes)."""
    return json.dumps(value, ensure_ascii=False)


def setters(pod: bool, bad_containers: Sequence[str]) -> list[str]:
    """Who set a forbidden value: ``pod``, then ``container "a"`` or ``containers "a", "b"``."""
    found = ["pod"] if pod else []
    if bad_containers:
        noun = pluralize("container", "containers", len(bad_containers))
        found.append(f"{noun} {join_quote(bad_containers)}")
    return found


#: The profile types (AppArmor, seccomp) every level allows.
_PROFILE_TYPES = ("RuntimeDefault", "Localhost")


def bad_profile_types(spec: Mapping[str, Any], key: str) -> tuple[bool, list[str], set[str]]:
    """Where ``securityContext.<key>`` (``appArmorProfile``, ``seccompProfile``) has a type
    other than RuntimeDefault or Localhost: on the pod, on which containers, and the types."""
    bad_values: set[str] = set()
    pod = field(pod_security_context(spec), key)
    pod_bad = isinstance(pod, Mapping) and pod.get("type") not in _PROFILE_TYPES
    if pod_bad:
        bad_values.add(str(field(pod, "type") or ""))
    bad_containers = []
    for container in containers(spec):
        profile = field(security_context(container), key)
        if isinstance(profile, Mapping) and profile.get("type") not in _PROFILE_TYPES:
            bad_containers.append(name_of(container))
            bad_values.add(str(profile.get("type") or ""))
    return pod_bad, bad_containers, bad_values
