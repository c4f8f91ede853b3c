"""Builders and runners for ``kubectl ome runtime effective`` (SPEC S13).

Objects are manifests answered by ``ManifestReader`` (S16.1), or by ``FailingReader`` when a
read has to fail the way an API server's does; no cluster is needed. ``rows_of`` gives the
report as table rows, ``effective`` runs the command.
"""

from __future__ import annotations

import io
from typing import Any

from ome_operator.cli.effective import collect_evidence, effective_rows, run_effective
from ome_operator.cluster.manifests import ManifestReader
from ome_operator.cluster.objects import INFERENCE_SERVICE, ReadTimeoutError, Resource
from ome_operator.core.effective.report import build_report
from ome_operator.models import from_manifest
from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest
from tests.core.effective.evidence import spec_hash

TIMEOUT = "the server was unable to return a response in the time allotted"
MODE = "ome.io/deploymentMode"


class FailingReader:
    """Answers like ``ManifestReader`` but times out on every read of the ``failing`` plurals."""

    def __init__(self, objects: list[dict[str, Any]], *failing: str) -> None:
        self._inner = ManifestReader(objects)
        self._failing = failing

    def _check(self, resource: Resource) -> None:
        if resource.plural in self._failing:
            raise ReadTimeoutError(TIMEOUT)

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        self._check(resource)
        return self._inner.get(resource, namespace, name)

    def list(self, resource: Resource, namespace: str | None, **kwargs: Any) -> list[dict]:
        self._check(resource)
        return self._inner.list(resource, namespace, **kwargs)


def service(
    name: str = "chat",
    *,
    generation: int | None = 1,
    status: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An InferenceService whose status is Current unless ``status`` says otherwise."""
    manifest = isvc_manifest(name, **spec)
    if generation is not None:
        manifest["metadata"]["generation"] = generation
    manifest["status"] = {"observedGeneration": 1} if status is None else status
    return manifest


def revision(name: str, data: Any, namespace: str = "ome") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": namespace},
        "revision": 1,
        "data": data,
    }


def effective(
    objects: list[dict[str, Any]], name: str = "chat", output: str = "table", **kwargs: Any
) -> tuple[int, str, str]:
    reader = kwargs.pop("reader", None) or ManifestReader(objects)
    out, err = io.StringIO(), io.StringIO()
    code = run_effective(name, output, kwargs.pop("ome", "ome"), reader, "default", out, err)
    return code, out.getvalue(), err.getvalue()


def rows_of(objects: list[dict[str, Any]], reader: Any = None) -> list[tuple[str, str, str]]:
    reader = reader or ManifestReader(objects)
    isvc = from_manifest(reader.get(INFERENCE_SERVICE, "default", "chat"))
    return effective_rows(build_report(collect_evidence(reader, "default", isvc, "ome")))


def issues_of(objects: list[dict[str, Any]], reader: Any = None) -> tuple[str, ...]:
    return tuple(v for s, f, v in rows_of(objects, reader) if f == "ISSUE")


LLAMA = runtime_manifest("vllm-llama")
LLAMA_HASH = spec_hash(LLAMA["spec"])
OTHER = runtime_manifest("vllm-llama", formats=[entry(autoSelect=True, priority=2)])
OTHER_HASH = spec_hash(OTHER["spec"])
MODEL = model_manifest("llama")
NAMED = {"name": "vllm-llama"}
MANAGED = {"name": "vllm-llama", "autoSync": False}


def tail(pin: str, relation: str, *issues: str) -> list[tuple[str, str, str]]:
    return [
        ("Service", "PIN", pin),
        ("Service", "SYNC", "Absent"),
        ("Service", "STATUS", "Current"),
        ("Service", "DRIFT", "NotReported"),
        ("Service", "LIVE-RELATION", relation),
        *(("Service", "ISSUE", issue) for issue in issues),
    ]


EXPLICIT = {**MANAGED, "revision": "cr-1"}


def mismatched(name: str = "vllm-llama", **kwargs: Any) -> dict[str, Any]:
    return runtime_manifest(name, formats=[entry("gguf", autoSelect=True)], **kwargs)


def with_parent(manifest: dict[str, Any], parent: str) -> dict[str, Any]:
    manifest["metadata"]["annotations"] = {"ome.io/inherit-from": parent}
    return manifest
