"""The ``-o`` values of ``kubectl ome runtime`` commands, read and printed as kubectl does.

``table`` (the default, unnamed in kubectl's list) and ``wide`` are tables, the others print the
document ``-o json`` prints: ``yaml``, ``name`` (``<kind>.ome.io/<name>`` a line, the rows'
objects) and ``jsonpath=<template>`` (``jsonpath_templates``). A bad value is refused with
kubectl's words, listing what the command allows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .commands import UsageError
from .yaml_writing import yaml_text

__all__ = [
    "DOCUMENT_FORMATS",
    "NoTemplateError",
    "OutputFormat",
    "UnknownOutputFormatError",
    "object_name",
    "parse_output",
    "printed_document",
]

#: The formats every command prints its document in.
DOCUMENT_FORMATS = ("json", "yaml", "name", "jsonpath")
_TABLES = ("table", "wide")


class UnknownOutputFormatError(UsageError):
    """``-o`` names no format the command has."""

    def __init__(self, output: str, allowed: Sequence[str]) -> None:
        self.output = output
        self.allowed = tuple(sorted(f for f in allowed if f != "table"))
        super().__init__(
            f'unable to match a printer suitable for the output format "{output}", '
            f"allowed formats are: {','.join(self.allowed)}"
        )


class NoTemplateError(UsageError):
    """``-o jsonpath`` without ``=<template>``."""

    def __init__(self) -> None:
        super().__init__("template format specified but no template given")


@dataclass(frozen=True)
class OutputFormat:
    """One ``-o`` value: its format, and for ``jsonpath`` the parsed template."""

    format: str
    template: Any = None  #: ``jsonpath_templates.Template``

    @property
    def tabular(self) -> bool:
        return self.format in _TABLES


def parse_output(output: str, allowed: Sequence[str]) -> OutputFormat:
    """``output`` as given to ``-o``; raises UsageError (kubectl's wording) when the command
    has no such format or the template does not parse."""
    name, equals, template = output.partition("=")
    if name != "jsonpath" or "jsonpath" not in allowed:
        if equals or output not in allowed:
            raise UnknownOutputFormatError(output, allowed)
        return OutputFormat(output)
    if not template:
        raise NoTemplateError()
    from .jsonpath_templates import JSONPathError, parse_template

    try:
        return OutputFormat(name, parse_template(template))
    except JSONPathError as exc:
        raise UsageError(str(exc)) from None


def object_name(kind: str, name: str) -> str:
    """kubectl's ``-o name``: ``<kind, lower case>.ome.io/<name>``."""
    return f"{kind.lower()}.ome.io/{name}"


def printed_document(
    document: dict[str, Any],
    output: OutputFormat,
    names: Iterable[str],
    *,
    allow_unicode: bool = True,
) -> str:
    """The text of a document format; ``names`` are the ``-o name`` lines."""
    if output.format == "json":
        return json.dumps(document, indent=2) + "\n"
    if output.format == "yaml":
        return yaml_text(document, allow_unicode=allow_unicode)
    if output.format == "name":
        return "".join(f"{name}\n" for name in names)
    if output.format == "jsonpath":
        from .jsonpath_templates import JSONPathError

        try:
            return output.template.render(document)
        except JSONPathError as exc:
            raise UsageError(str(exc)) from None
    raise UnknownOutputFormatError(output.format, DOCUMENT_FORMATS)
