"""Objects from manifest files (SPEC S16.1), answered as a cluster holding them would.

``load_manifests`` reads ``-f`` paths the way kubectl does; ``ManifestReader`` implements
``objects.ObjectReader`` over the result, with the API server's ordering and error texts, so
the offline CLI prints byte for byte what it prints against a cluster.
"""

import copy
import json
import pathlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TextIO

import yaml

from ome_operator.cluster.objects import (
    NotFoundError,
    ObjectList,
    Resource,
    require_namespace,
    too_many_objects,
)

__all__ = ["ManifestError", "ManifestReader", "load_manifests"]

#: Files a directory contributes; a file named explicitly is read whatever its suffix.
MANIFEST_SUFFIXES = frozenset({".yaml", ".yml", ".json"})
#: How errors name standard input, as kubectl does.
STDIN_NAME = "STDIN"


class ManifestError(Exception):
    """A manifest path cannot be read or parsed; the message names the path."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ManifestReader:
    """Answers ``get``/``list`` over parsed manifests; see ``objects.ObjectReader``.

    A namespaced object without ``metadata.namespace`` lives in ``default_namespace``, as
    ``kubectl apply`` would put it. Of two objects with the same identity the later wins.
    """

    def __init__(self, objects: Iterable[dict[str, Any]], *, default_namespace: str = "default"):
        self._objects = list(objects)
        self._default_namespace = default_namespace

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        namespace = require_namespace(resource, namespace)
        for obj in self._stored(resource):
            meta = obj["metadata"]
            if meta.get("name") == name and meta.get("namespace") == namespace:
                return obj
        raise NotFoundError(resource, name)

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        page_size: int = 500,
        limit: int | None = None,
    ) -> ObjectList:
        objects = [
            obj
            for obj in self._stored(resource)
            if not (resource.namespaced and namespace)
            or obj["metadata"].get("namespace") == namespace
        ]
        if limit is not None and len(objects) > limit:
            raise too_many_objects(resource, limit)
        return objects

    def _stored(self, resource: Resource) -> ObjectList:
        """The resource's objects as the API server stores them, in its order."""
        by_key: dict[tuple[str, str], dict[str, Any]] = {}
        for manifest in self._objects:
            group = str(manifest.get("apiVersion", "")).rpartition("/")[0]
            if group != resource.group or manifest.get("kind") != resource.kind:
                continue
            obj = copy.deepcopy(manifest)
            meta = obj.setdefault("metadata", {})
            if resource.namespaced:
                meta["namespace"] = meta.get("namespace") or self._default_namespace
            else:
                meta.pop("namespace", None)
            by_key[meta.get("namespace") or "", str(meta.get("name", ""))] = obj
        return [by_key[key] for key in sorted(by_key)]


def load_manifests(paths: Sequence[str], stdin: TextIO) -> list[dict[str, Any]]:
    """Every object in the ``-f`` paths, in order: files, directories (recursively), ``-``."""
    objects: list[dict[str, Any]] = []
    for path in paths:
        if path == "-":
            objects.extend(_parse(stdin.read(), STDIN_NAME))
            continue
        location = pathlib.Path(path)
        if location.is_dir():
            for file in _manifest_files(location):
                objects.extend(_parse(_read(file, str(file)), str(file)))
        elif location.exists():
            objects.extend(_parse(_read(location, path), path))
        else:
            raise ManifestError(f'the path "{path}" does not exist')
    return objects


def _manifest_files(directory: pathlib.Path) -> list[pathlib.Path]:
    """Manifest files under ``directory`` in path order (kubectl walks the tree sorted)."""
    return sorted(
        file for file in directory.rglob("*") if file.is_file() and file.suffix in MANIFEST_SUFFIXES
    )


def _read(file: pathlib.Path, name: str) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"error reading {name}: {exc}") from exc


def _parse(text: str, name: str) -> Iterator[dict[str, Any]]:
    """The objects of one file: documents in order, ``List`` items flattened."""
    for index, document in enumerate(_documents(text, name), start=1):
        if document is None:
            continue
        where = f"{name}: document {index}"
        if _is_list(document):
            for position, item in enumerate(document["items"], start=1):
                yield _checked(item, f"{where} item {position}")
        else:
            yield _checked(document, where)


def _documents(text: str, name: str) -> list[Any]:
    if text.lstrip().startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except ValueError:
            pass  # not plain JSON after all: YAML reports the problem with its line
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise ManifestError(f"error parsing {name}: {_yaml_problem(exc)}") from exc


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"line {exc.problem_mark.line + 1}: {exc.problem}"
    return " ".join(str(exc).split())


def _is_list(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and str(document.get("kind", "")).endswith("List")
        and isinstance(document.get("items"), list)
    )


def _checked(document: Any, where: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ManifestError(f"error parsing {where} is not a mapping")
    missing = [field for field in ("apiVersion", "kind") if not document.get(field)]
    if missing:
        raise ManifestError(f"error parsing {where} has no {' or '.join(missing)}")
    return document
