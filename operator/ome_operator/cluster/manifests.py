"""Objects from manifest files (docs/reference/cli.md, Offline input), answered as a cluster
holding them would.

``load_manifests`` reads ``-f`` paths the way kubectl does and hands on only what an API server
could hold: JSON values (YAML timestamps as the text written and ``!!binary`` as its text, as
kubectl's YAML reader gives them; integer and boolean map keys as strings), each object a
mapping with string ``apiVersion`` and ``kind``. Anything else is a ``ManifestError`` naming
the file, the document and the field, never a traceback; so is a mapping that sets a key twice,
as kubectl refuses it. ``read_stored_manifests`` then holds them as a cluster would: an object
whose ``metadata`` could not be stored is a ``ManifestError`` too, and what a cluster would not
hold as written is left out with a note (``manifest_notes``: kinds the CRDs do not serve, the
earlier of an object given twice). ``ManifestReader`` implements ``objects.ObjectReader`` over
the result, with the API server's ordering and error texts, so the offline CLI prints byte for
byte what it prints against a cluster. ``reading`` checks the API server's answers with the
same functions.
"""

import pathlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

from ome_operator.cluster.decoding import (
    DocumentError,
    StreamError,
    checked_identity,
    checked_object,
    decode_json,
    json_tree,
    yaml_documents,
)
from ome_operator.cluster.manifest_notes import Note, reviewed_manifests
from ome_operator.cluster.objects import (
    NotFoundError,
    ObjectList,
    Resource,
    require_namespace,
    too_many_objects,
)
from ome_operator.models.object_metadata import metadata_of

__all__ = [
    "ManifestError",
    "ManifestReader",
    "load_manifests",
    "read_manifests",
    "read_stored_manifests",
]

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
    """Answers ``get``/``list`` over objects as ``load_manifests`` returns them; see
    ``objects.ObjectReader``.

    Every object must have an identity an API server could store (``checked_identity``), or
    the reader is not built: ManifestError names the object by ``sources`` (its file and
    document, as ``read_manifests`` gives them). A namespaced object without
    ``metadata.namespace`` lives in ``default_namespace``, as ``kubectl apply`` would put it.
    Of two objects with the same identity the later wins.
    """

    def __init__(
        self,
        objects: Iterable[dict[str, Any]],
        *,
        default_namespace: str = "default",
        sources: Sequence[str] = (),
    ):
        self._objects = list(objects)
        self._default_namespace = default_namespace
        for index, obj in enumerate(self._objects):
            try:
                checked_identity(checked_object(obj))
            except DocumentError as exc:
                where = sources[index] if index < len(sources) else f"object {index + 1}"
                raise ManifestError(f"error parsing {exc.where(where)}") from None

    @classmethod
    def from_paths(
        cls,
        paths: Sequence[str],
        stdin: TextIO,
        *,
        default_namespace: str = "default",
        warn: Callable[[str], None] | None = None,
    ) -> "ManifestReader":
        """A reader over the objects of the ``-f`` paths as a cluster would hold them
        (``read_stored_manifests``); each note about the others goes to ``warn``."""
        found, notes = read_stored_manifests(paths, stdin, default_namespace)
        for note in notes:
            if warn is not None:
                warn(str(note))
        return cls(
            (obj for _, obj in found),
            default_namespace=default_namespace,
            sources=[where for where, _ in found],
        )

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
        """The resource's objects as the API server stores them, in its order (copies)."""
        by_key: dict[tuple[str, str], dict[str, Any]] = {}
        for manifest in self._objects:
            group = manifest["apiVersion"].rpartition("/")[0]
            if group != resource.group or manifest["kind"] != resource.kind:
                continue
            obj = json_tree(manifest)
            meta = obj["metadata"] = dict(metadata_of(obj))
            if resource.namespaced:
                meta["namespace"] = meta.get("namespace") or self._default_namespace
            else:
                meta.pop("namespace", None)
            by_key[meta.get("namespace") or "", meta.get("name") or ""] = obj
        return [by_key[key] for key in sorted(by_key)]


def load_manifests(paths: Sequence[str], stdin: TextIO) -> list[dict[str, Any]]:
    """Every object in the ``-f`` paths, in order: files, directories (recursively), ``-``."""
    return [obj for _, obj in read_manifests(paths, stdin)]


def read_stored_manifests(
    paths: Sequence[str],
    stdin: TextIO,
    default_namespace: str,
    *,
    checked: Callable[[dict[str, Any]], bool] = lambda obj: True,
) -> tuple[list[tuple[str, dict[str, Any]]], list[Note]]:
    """``read_manifests``, each object ``checked`` selects with an identity an API server could
    store (else ManifestError naming its file and document), then as a cluster would hold
    them (``manifest_notes.reviewed_manifests``): what it leaves out, with a note each."""
    found = read_manifests(paths, stdin)
    for where, obj in found:
        try:
            if checked(obj):
                checked_identity(obj)
        except DocumentError as exc:
            raise ManifestError(f"error parsing {exc.where(where)}") from None
    return reviewed_manifests(found, default_namespace)


def read_manifests(paths: Sequence[str], stdin: TextIO) -> list[tuple[str, dict[str, Any]]]:
    """``load_manifests``, each object with where it was read (``x.yaml: document 2``)."""
    objects: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        if path == "-":
            objects.extend(_parse(_read_stdin(stdin), STDIN_NAME))
            continue
        location = pathlib.Path(path)
        if _is_dir(location, path):
            for file in _manifest_files(location, path):
                objects.extend(_parse(_read(file, str(file)), str(file)))
        elif _exists(location, path):
            objects.extend(_parse(_read(location, path), path))
        else:
            raise ManifestError(f'the path "{path}" does not exist')
    return objects


def _is_dir(location: pathlib.Path, name: str) -> bool:
    try:
        return location.is_dir()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        raise ManifestError(f"error reading {name}: {_reason(exc)}") from None


def _exists(location: pathlib.Path, name: str) -> bool:
    try:
        return location.exists()
    except (OSError, ValueError) as exc:
        raise ManifestError(f"error reading {name}: {_reason(exc)}") from None


def _manifest_files(directory: pathlib.Path, name: str) -> list[pathlib.Path]:
    """Manifest files under ``directory`` in path order (kubectl walks the tree sorted)."""
    try:
        return sorted(
            file
            for file in directory.rglob("*")
            if file.suffix in MANIFEST_SUFFIXES and file.is_file()
        )
    except OSError as exc:
        raise ManifestError(f"error reading {name}: {_reason(exc)}") from None


def _read(file: pathlib.Path, name: str) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"error reading {name}: {exc}") from exc


def _read_stdin(stdin: TextIO) -> str:
    try:
        return stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"error reading {STDIN_NAME}: {exc}") from exc


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _parse(text: str, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of one file: documents in order, ``List`` items flattened."""
    for index, document in enumerate(_documents(text, name), start=1):
        if document is None:
            continue
        where = f"{name}: document {index}"
        try:
            document = json_tree(document)
            if _is_list(document):
                items = [(f"{where} item {n}", item) for n, item in enumerate(document["items"], 1)]
            else:
                items = [(where, document)]
        except DocumentError as exc:
            raise ManifestError(f"error parsing {exc.where(where)}") from None
        for item_where, item in items:
            try:
                yield item_where, checked_object(item)
            except DocumentError as exc:
                raise ManifestError(f"error parsing {exc.where(item_where)}") from None


def _documents(text: str, name: str) -> list[Any]:
    if text.lstrip().startswith(("{", "[")):
        try:
            return [decode_json(text, unique_keys=True)]
        except DocumentError as exc:
            raise ManifestError(f"error parsing {exc.where(f'{name}: document 1')}") from None
        except ValueError:
            pass  # not plain JSON after all: YAML reports the problem with its line
    try:
        return yaml_documents(text)
    except StreamError as exc:
        where = name if exc.document is None else f"{name}: document {exc.document}"
        separator = " " if exc.document is not None and exc.problem.startswith("is ") else ": "
        raise ManifestError(f"error parsing {where}{separator}{exc.problem}") from None


def _is_list(document: Any) -> bool:
    kind = document.get("kind") if isinstance(document, dict) else None
    return (
        isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list)
    )
