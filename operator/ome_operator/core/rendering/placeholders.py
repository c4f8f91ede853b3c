"""Go-style placeholders in runner strings (docs/reference/workloads.md, Placeholders), rendered
against the ISVC's metadata.

Only the forms OME documents are understood; any other action is a malformed template, so a typo
fails the component instead of reaching a pod as literal text:

==================================  =========================  ===================
form                                value                      missing key
==================================  =========================  ===================
``{{.Name}}``, ``{{.Namespace}}``   the ISVC's name/namespace  —
``{{.Labels.<key>}}``               a label (key a Go field)   ``<no value>``
``{{.Annotations.<key>}}``          an annotation              ``<no value>``
``{{index .Labels `<key>`}}``       a label (any key)          empty
``{{index .Annotations "<key>"}}``  an annotation              empty
==================================  =========================  ===================

Spaces inside the braces are allowed, as in Go; the key of ``index`` is a raw (backquoted) or an
interpreted (double-quoted) string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ...models import InferenceService
from .errors import PlaceholderError

__all__ = ["MISSING_FIELD", "child_path", "render_placeholders", "render_template"]

#: What Go's text/template prints for a missing map key in the field form.
MISSING_FIELD = "<no value>"

_SCALAR = re.compile(r"\.(Name|Namespace)")
_MAP_FIELD = re.compile(r"\.(Labels|Annotations)\.(\w+)", re.ASCII)
_INDEX = re.compile(r'index\s+\.(Labels|Annotations)\s+(`[^`]*`|"(?:[^"\\]|\\.)*")')
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def child_path(path: str, key: str | int) -> str:
    """``path`` extended by a list index (``[0]``), a field (``.image``) or a map key that is no
    field name (``["nvidia.com/gpu"]``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def render_placeholders(value: Any, isvc: InferenceService, path: str) -> Any:
    """``value`` (a runner, or any JSON value inside it) with every string rendered; ``path`` is
    the value's field path, used in errors (worked out only for a string that has an action)."""
    return _rendered(value, isvc, (path,))


def _rendered(value: Any, isvc: InferenceService, keys: tuple[Any, ...]) -> Any:
    if isinstance(value, str):
        return render_template(value, isvc, _path(keys)) if "{{" in value else value
    if isinstance(value, Mapping):
        return {key: _rendered(item, isvc, (*keys, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_rendered(item, isvc, (*keys, index)) for index, item in enumerate(value)]
    return value


def _path(keys: tuple[Any, ...]) -> str:
    path = keys[0]
    for key in keys[1:]:
        path = child_path(path, key)
    return path


def render_template(template: str, isvc: InferenceService, path: str) -> str:
    """One string with its actions replaced; raises PlaceholderError naming ``path``."""
    out: list[str] = []
    position = 0
    while (start := template.find("{{", position)) >= 0:
        end = _action_end(template, start + 2)
        if end is None:
            raise PlaceholderError(path, template, "unclosed action")
        out.append(template[position:start])
        out.append(_evaluate(template[start + 2 : end], isvc, path, template))
        position = end + 2
    out.append(template[position:])
    return "".join(out)


def _action_end(text: str, position: int) -> int | None:
    """Where the action opened before ``position`` closes; ``}}`` inside a quoted key is text."""
    quote: str | None = None
    index = position
    while index < len(text):
        char = text[index]
        if quote is not None:
            if quote == '"' and char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in '"`':
            quote = char
        elif text.startswith("}}", index):
            return index
        index += 1
    return None


def _evaluate(action: str, isvc: InferenceService, path: str, template: str) -> str:
    expression = action.strip()
    meta = isvc.metadata
    maps: dict[str, Mapping[str, str]] = {"Labels": meta.labels, "Annotations": meta.annotations}
    if match := _SCALAR.fullmatch(expression):
        return isvc.name if match[1] == "Name" else isvc.namespace
    if match := _MAP_FIELD.fullmatch(expression):
        return maps[match[1]].get(match[2], MISSING_FIELD)
    if (match := _INDEX.fullmatch(expression)) and (key := _string_literal(match[2])) is not None:
        return maps[match[1]].get(key, "")
    raise PlaceholderError(path, template, "unsupported action {{" + action + "}}")


def _string_literal(literal: str) -> str | None:
    if literal.startswith("`"):
        return literal[1:-1]
    try:
        decoded = json.loads(literal)
    except json.JSONDecodeError:
        return None
    return decoded if isinstance(decoded, str) else None
