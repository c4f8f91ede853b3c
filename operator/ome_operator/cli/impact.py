"""``kubectl ome runtime impact`` (docs/reference/cli.md, runtime impact): which
InferenceServices a runtime change moves.

The current state is read through an ObjectReader (the cluster, or ``--state`` manifests); the
change is the ``-f`` runtimes (created or replaced as given) and the ``--delete`` ones. Every
decision is ``core.impact``'s, over the snapshots a controller pass reads.

Objects of the current state that do not parse are left out, as the operator leaves them out,
with a warning on stderr; a proposed runtime that does not parse is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from ..cluster.fetching import set_aside_warning
from ..cluster.manifests import read_manifests
from ..cluster.objects import (
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    CLUSTER_SERVING_RUNTIME,
    INFERENCE_SERVICE,
    SERVING_RUNTIME,
    NotFoundError,
    ObjectReader,
    Resource,
)
from ..core.impact import Impact, RuntimeChange, RuntimeKey, runtime_impact, runtime_key, standing
from ..models import InvalidResourceError, ServingRuntime, from_manifest
from ..models.object_metadata import metadata_of
from .commands import UsageError
from .output_formats import OutputFormat, object_name, parse_output, printed_document
from .tables import format_table

__all__ = ["FAIL_ON_CHANGE_EXIT", "OUTPUTS", "ImpactRequest", "impact_text", "run_impact"]

OUTPUTS = ("table", "json", "yaml", "name", "jsonpath")
#: Exit code with ``--fail-on-change`` when some InferenceService changes runtime.
FAIL_ON_CHANGE_EXIT = 3
_HEADERS = ("NAMESPACE", "INFERENCESERVICE", "BEFORE", "AFTER", "WHY")
_PAGE_SIZE = 500
_DELETE_FORMS = "ClusterServingRuntime/<name> or ServingRuntime/<namespace>/<name>"
_RUNTIME_KINDS = (SERVING_RUNTIME, CLUSTER_SERVING_RUNTIME)


@dataclass(frozen=True)
class ImpactRequest:
    changes: tuple[str, ...] = ()  #: ``-f``: the proposed runtimes
    deletes: tuple[str, ...] = ()  #: ``--delete KIND/NAME``
    all_namespaces: bool = False
    namespace_flag: str | None = None
    output: str = "table"
    fail_on_change: bool = False
    no_headers: bool = False  #: ``--no-headers``: the table without its header line

    @property
    def format(self) -> OutputFormat:
        """``-o`` read (raises UsageError in kubectl's words when it is no format here)."""
        return parse_output(self.output, OUTPUTS)

    def validate(self) -> None:
        if not self.changes and not self.deletes:
            raise UsageError(
                "a change is required: -f with the proposed runtimes, or --delete KIND/NAME"
            )
        if self.all_namespaces and self.namespace_flag is not None:
            raise UsageError("--all-namespaces and --namespace cannot be used together")
        parse_output(self.output, OUTPUTS)
        for target in self.deletes:
            deleted_key(target)


def deleted_key(target: str) -> RuntimeKey:
    """``--delete``'s ``ClusterServingRuntime/<name>`` or ``ServingRuntime/<ns>/<name>``."""
    kind, _, rest = target.partition("/")
    parts = rest.split("/")
    if kind == "ClusterServingRuntime" and len(parts) == 1 and parts[0]:
        return (True, "", parts[0])
    if kind == "ServingRuntime" and len(parts) == 2 and all(parts):
        return (False, parts[0], parts[1])
    raise UsageError(f'--delete "{target}": use {_DELETE_FORMS}')


def _proposed(paths: Sequence[str], stdin: TextIO, namespace: str) -> list[ServingRuntime]:
    """The ``-f`` runtimes, a ServingRuntime without a namespace in ``namespace``."""
    proposed = []
    for where, obj in read_manifests(paths, stdin):
        kind = obj.get("kind")
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if group != SERVING_RUNTIME.group or kind not in {r.kind for r in _RUNTIME_KINDS}:
            raise UsageError(
                f"{where}: -f holds the proposed ServingRuntimes and ClusterServingRuntimes, "
                f"not {kind} (the current state is the cluster, or --state)"
            )
        meta = dict(metadata_of(obj))
        if kind == "ServingRuntime":
            meta["namespace"] = meta.get("namespace") or namespace
        proposed.append(from_manifest({**obj, "metadata": meta}))
    return proposed


def _parsed(
    reader: ObjectReader, resource: Resource, namespace: str | None, warn: Callable[[str], None]
) -> list[Any]:
    """Every object of ``resource`` that parses; the others are left out, with a warning."""
    found = []
    for obj in reader.list(resource, namespace, page_size=_PAGE_SIZE):
        try:
            found.append(from_manifest(obj))
        except InvalidResourceError as exc:
            warn(set_aside_warning(str(exc)))
    return found


def _change(
    request: ImpactRequest, runtimes: list[ServingRuntime], stdin: TextIO, namespace: str
) -> RuntimeChange:
    applied = _proposed(request.changes, stdin, namespace) if request.changes else []
    present = {runtime_key(r) for r in runtimes}
    deleted = set()
    for target in request.deletes:
        key = deleted_key(target)
        if key not in present:
            resource = CLUSTER_SERVING_RUNTIME if key[0] else SERVING_RUNTIME
            raise NotFoundError(resource, key[2])
        deleted.add(key)
    both = deleted & {runtime_key(r) for r in applied}
    if both:
        cluster, ns, name = sorted(both)[0]
        shown = f"ClusterServingRuntime/{name}" if cluster else f"ServingRuntime/{ns}/{name}"
        raise UsageError(f"{shown} is both proposed (-f) and deleted (--delete)")
    return RuntimeChange(tuple(applied), frozenset(deleted))


def compute_impact(
    request: ImpactRequest,
    reader: ObjectReader,
    namespace: str,
    stdin: TextIO,
    warn: Callable[[str], None],
) -> Impact:
    """Read the current state of the scope (``-A``: every namespace), apply the change, and
    resolve every InferenceService before and after."""
    scope = None if request.all_namespaces else namespace
    isvcs = _parsed(reader, INFERENCE_SERVICE, scope, warn)
    runtimes = _parsed(reader, SERVING_RUNTIME, scope, warn)
    runtimes += _parsed(reader, CLUSTER_SERVING_RUNTIME, None, warn)
    models = _parsed(reader, BASE_MODEL, scope, warn) + _parsed(
        reader, CLUSTER_BASE_MODEL, None, warn
    )
    change = _change(request, runtimes, stdin, namespace)
    return runtime_impact(standing(isvcs, runtimes, models), change)


def impact_text(impact: Impact, output: OutputFormat, *, no_headers: bool = False) -> str:
    """What stdout shows: the table (nothing when no InferenceService moves), or the
    document (``-o name``: the InferenceServices that move)."""
    if not output.tabular:
        names = [object_name("InferenceService", m.name) for m in impact.moves]
        return printed_document(impact.document(), output, names)
    if not impact.moves:
        return ""
    return format_table(_HEADERS, [m.row() for m in impact.moves], no_headers=no_headers)


def run_impact(
    request: ImpactRequest,
    reader: ObjectReader,
    namespace: str,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Print the impact; the summary line last, on stderr."""
    impact = compute_impact(request, reader, namespace, stdin, lambda w: print(w, file=stderr))
    stdout.write(impact_text(impact, request.format, no_headers=request.no_headers))
    print(impact.summary(), file=stderr)
    return FAIL_ON_CHANGE_EXIT if request.fail_on_change and impact.moves else 0
