"""``ome-operator render`` (docs/reference/cli.md, ome-operator render): admission and one
reconcile pass, in memory, over manifests.

The same core decides as in the controller and the webhook; only the API edge differs: objects
in the input that the operator does not own are taken as cluster state (an existing Deployment,
an AcceleratorClass, the ``inferenceservice-config`` ConfigMap, a Namespace's labels, which
also say what Pod Security admission refuses: ``render_pod_security``); one without a kind or a
name is ignored. Like an invalid ome.io object, cluster state or an
InferenceService that no API server would have stored (nested over
``models.limits.MAX_NESTING``, or a field the core reads of the wrong shape: ``_SHAPES``) ends
the command with the models' ``InvalidResourceError`` sentence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..cluster.manifests import ManifestError
from ..core.admission import review_inference_service
from ..core.event_records import runtime_not_found_told, untold
from ..core.instances.gangs import render_pod_group
from ..core.model_catalog import ModelCatalog
from ..core.operator_config import (
    CONFIG_MAP_NAME,
    ConfigError,
    OperatorConfig,
    parse_operator_config,
)
from ..core.reconciling import LogRecord, ReconcilePlan, Snapshot, reconcile
from ..core.rendering import render_instance_pods
from ..core.selection import RuntimeCatalog
from ..models import (
    MODEL_BY_KIND,
    InferenceService,
    InvalidResourceError,
    ModelResource,
    ServingRuntime,
    from_manifest,
    storable_manifest,
)
from ..models.base import field_path, shown
from ..models.limits import nesting_problem
from ..models.object_metadata import labels_of, metadata_of, with_owner, without_fields
from ..models.resources import display_name
from .render_pod_security import pod_security_events, refused
from .tables import format_table
from .yaml_writing import yaml_text

__all__ = ["MALFORMED", "SUMMARY_HEADERS", "denied", "format_report", "is_ome", "render_report"]

API_VERSION = "cli.ome.io/v1alpha1"


def is_ome(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is an ome.io object (the others are cluster state, or ignored)."""
    return str(obj.get("apiVersion", "")).startswith("ome.io/")


def _is_object(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` could be stored: a kind, and metadata with a name (else it is ignored)."""
    return isinstance(obj.get("kind"), str) and isinstance(metadata_of(obj).get("name"), str)


def _namespace(obj: Mapping[str, Any]) -> str:
    return metadata_of(obj).get("namespace") or "default"


def _config_data(obj: Mapping[str, Any]) -> Mapping[str, str] | None:
    """The ConfigMap's ``data``, checked as the API server would (a map of strings)."""
    data = obj.get("data")
    where = f"ConfigMap {_namespace(obj)}/{CONFIG_MAP_NAME}"
    if data is not None and not isinstance(data, Mapping):
        raise ConfigError(
            f"{where} is invalid: data: must be an object (got {json.dumps(data, default=str)})"
        )
    for key, value in (data or {}).items():
        if not isinstance(value, str):
            found = json.dumps(value, default=str)
            raise ConfigError(f"{where} is invalid: data.{key}: must be a string (got {found})")
    return data


def _config(objects: Sequence[Mapping[str, Any]]) -> OperatorConfig:
    for obj in objects:
        if obj.get("kind") == "ConfigMap" and metadata_of(obj).get("name") == CONFIG_MAP_NAME:
            return parse_operator_config(_config_data(obj))
    return OperatorConfig()


def _namespace_labels(state: Sequence[Mapping[str, Any]], namespace: str) -> Mapping[str, Any]:
    """The labels of the Namespace ``namespace`` in the input (none without it): the pod
    policy's exceptions select on them."""
    for obj in state:
        if obj.get("kind") == "Namespace" and metadata_of(obj).get("name") == namespace:
            return labels_of(obj)
    return {}


def _log(record: LogRecord) -> dict[str, Any]:
    return {"level": record.level, "message": record.message, **dict(record.fields)}


def _objects(
    isvc: Mapping[str, Any],
    plan: ReconcilePlan,
    existing: Mapping[tuple[str, str], Any],
    gang: bool,
) -> list[dict[str, Any]]:
    """What the controller writes: a scaled workload as it is created, or, when the input
    holds it, as it is applied (without ``replicas``, the autoscaler's); and for OMENative what
    the InferenceReplica controller would create: every Instance's pods, and with ``gang`` the
    PodGroup each multi-pod Instance's pods join."""
    found = []
    for obj in plan.apply:
        key = (obj["kind"], obj["metadata"]["name"])
        held, left = existing.get(key), plan.created_with.get(key)
        owned = with_owner(without_fields(obj, left) if held and left else obj, isvc)
        found.append(owned)
        if obj["kind"] == "InferenceReplica":
            instances = ((held if left else None) or obj)["spec"].get("replicas") or 1
            for index in range(instances):
                pods = render_instance_pods(obj, index, gang=gang)
                if any("schedulingGroup" in pod["spec"] for pod in pods):
                    found.append(with_owner(render_pod_group(obj, index, 1, len(pods)), owned))
                found.extend(with_owner(pod, owned) for pod in pods)
    return found


def _item(
    isvc: InferenceService,
    body: Mapping[str, Any],
    runtimes: list[ServingRuntime],
    models: ModelCatalog,
    state: Sequence[Mapping[str, Any]],
    config: OperatorConfig,
    now: str,
    gang: bool,
) -> dict[str, Any]:
    namespace = isvc.namespace
    catalog = RuntimeCatalog.of(
        r for r in runtimes if r.is_cluster or r.metadata.namespace == namespace
    )
    labels = _namespace_labels(state, namespace)
    verdict = review_inference_service(isvc, models, catalog, config, labels)
    item: dict[str, Any] = {
        "inferenceService": {"namespace": namespace, "name": isvc.name},
        "admission": {
            "allowed": verdict.allowed,
            "message": verdict.message,
            "warnings": list(verdict.warnings),
        },
        "objects": [],
        "status": {},
        "events": [],
        "logs": [],
    }
    if not verdict.allowed:
        return item
    existing = {
        (o["kind"], metadata_of(o).get("name")): o for o in state if _namespace(o) == namespace
    }
    snapshot = Snapshot(catalog, models, existing, now=now, config=config, namespace_labels=labels)
    plan = reconcile(isvc, snapshot)
    objects = _objects(body, plan, existing, gang)
    item.update(
        {
            "objects": objects,
            "status": plan.status or {},
            # As an operator that remembers nothing tells them: from what the status records;
            # then what Pod Security admission would say of the workloads' pods.
            "events": [
                *(
                    {"type": e.type, "reason": e.reason, "message": e.message}
                    for e in untold(plan.events, runtime_not_found_told(body.get("status")))
                ),
                *pod_security_events(labels, objects),
            ],
            "logs": [_log(record) for record in plan.logs],
        }
    )
    return item


#: Fields the core reads from cluster state and from an InferenceService's status without
#: checking them, with the shape every Kubernetes object's schema gives them: (path, a map or
#: a list, of what). A real API server stores nothing else; a manifest may hold anything.
_SHAPES: tuple[tuple[tuple[str, ...], type, type | None], ...] = (
    (("metadata", "labels"), dict, str),
    (("metadata", "annotations"), dict, str),
    (("metadata", "ownerReferences"), list, dict),
    (("spec",), dict, None),
    (("status",), dict, None),
    (("status", "conditions"), list, dict),
)
_TYPE_WORDS = {dict: "an object", list: "a list", str: "a string"}


def _shape_problems(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each ``_SHAPES`` field that is set but not of its shape (its first bad member)."""
    problems = []
    for path, container, member in _SHAPES:
        value: Any = obj
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        if not isinstance(value, container):
            problems.append(
                (field_path(path), f"must be {_TYPE_WORDS[container]} (got {shown(value)})")
            )
            continue
        members = value.items() if isinstance(value, dict) else enumerate(value)
        bad = next(((k, v) for k, v in members if member and not isinstance(v, member)), None)
        if bad is not None:
            found = shown(bad[1])
            problems.append(
                (field_path((*path, bad[0])), f"must be {_TYPE_WORDS[member]} (got {found})")
            )
    return problems


def _stored(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj`` if an API server could have stored what the core reads of it: nested within
    the models' limit and ``_SHAPES``; else InvalidResourceError, as for an ome.io object."""
    deep = nesting_problem(obj)
    problems = [(field_path(deep[0]), deep[1])] if deep is not None else _shape_problems(obj)
    if problems:
        raise InvalidResourceError(obj["kind"], display_name(obj), tuple(problems))
    return obj


def render_report(
    objects: Sequence[Mapping[str, Any]],
    *,
    now: str,
    sources: Sequence[str] = (),
    warn: Callable[[str], None] | None = None,
    gang: bool = False,
) -> dict[str, Any]:
    """The RenderReport for every InferenceService in ``objects`` (JSON trees, as
    ``load_manifests`` returns them; ``sources`` says where each was read), by namespace, then
    name. A runtime, model or AcceleratorClass that does not parse is set aside, as the
    operator sets it aside: left out, with its ``MalformedResource`` event in the report's
    ``events`` (only there when there is one) and a ``Warning: <where>: <its message>`` to
    ``warn``. An InferenceService that does not parse is an item admission denies with the
    webhook's text. ``gang``: as on a cluster where the operator places multi-pod Instances
    whole (docs/reference/workloads.md, Gang placement)."""
    runtimes: list[ServingRuntime] = []
    models: list[ModelResource] = []
    services: list[tuple[Mapping[str, Any], InferenceService | InvalidResourceError]] = []
    events = []
    for index, obj in enumerate(objects):
        where = _where(sources, index)
        if not (is_ome(obj) and isinstance(obj.get("kind"), str) and obj["kind"] in MODEL_BY_KIND):
            continue
        if obj["kind"] == "InferenceService":
            services.append((obj, _admitted(obj, where)))
            continue
        try:
            parsed = from_manifest(obj)
        except InvalidResourceError as exc:
            events.append(_set_aside(obj, str(exc)))
            if warn is not None:
                warn(f"Warning: {where}: {events[-1]['message']}")
            continue
        if isinstance(parsed, ServingRuntime):
            runtimes.append(parsed)
        elif isinstance(parsed, ModelResource):
            models.append(parsed)
    state = [
        _stored_at(o, _where(sources, index))
        for index, o in enumerate(objects)
        if (not is_ome(o) or o.get("kind") == "InferenceReplica") and _is_object(o)
    ]
    config = _config(state)
    catalog = ModelCatalog.of(models)
    items = [
        _item(isvc, body, runtimes, catalog, state, config, now, gang)
        if isinstance(isvc, InferenceService)
        else _denied_item(body, isvc)
        for body, isvc in sorted(services, key=lambda pair: _service_key(pair[0]))
    ]
    report: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "RenderReport", "items": items}
    if events:
        report["events"] = events
    return report


def _where(sources: Sequence[str], index: int) -> str:
    """Where the object at ``index`` was read (``x.yaml: document 2``)."""
    return sources[index] if index < len(sources) else f"object {index + 1}"


#: The reason of the operator's event on an object it sets aside (docs/troubleshooting.md).
MALFORMED = "MalformedResource"


def _set_aside(obj: Mapping[str, Any], problem: str) -> dict[str, Any]:
    """The operator's Warning event on a runtime, model or AcceleratorClass that does not
    parse, naming the object as an Event's ``involvedObject`` does."""
    meta = metadata_of(obj)
    involved = {"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
    if not obj["kind"].startswith("Cluster") and obj["kind"] != "AcceleratorClass":
        involved["namespace"] = meta.get("namespace") or "default"
    involved["name"] = meta.get("name") or ""
    return {
        "type": "Warning",
        "reason": MALFORMED,
        "message": f"{problem}; it is ignored until it changes",
        "involvedObject": involved,
    }


def _admitted(body: Mapping[str, Any], where: str) -> InferenceService | InvalidResourceError:
    """The InferenceService as the webhook parses it, or the error it denies it with; one
    that parses but that no API server would have stored (``_stored``) is an error."""
    try:
        isvc = storable_manifest(dict(body))
    except InvalidResourceError as exc:
        return exc
    _stored_at(body, where)
    return isvc  # type: ignore[return-value]


def _service_key(body: Mapping[str, Any]) -> tuple[str, str]:
    return (_namespace(body), str(metadata_of(body).get("name") or ""))


def _denied_item(body: Mapping[str, Any], problem: InvalidResourceError) -> dict[str, Any]:
    namespace, name = _service_key(body)
    return {
        "inferenceService": {"namespace": namespace, "name": name},
        "admission": {"allowed": False, "message": str(problem), "warnings": []},
        "objects": [],
        "status": {},
        "events": [],
        "logs": [],
    }


def _stored_at(obj: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``_stored``, its error naming where ``obj`` was read."""
    try:
        return _stored(obj)
    except InvalidResourceError as exc:
        raise ManifestError(f"error parsing {where}: {exc}") from None


#: Columns of ``render -o summary``: one line per InferenceService.
SUMMARY_HEADERS = ("NAMESPACE", "NAME", "ALLOWED", "RUNTIME", "MODES", "OBJECTS")


def format_report(report: Mapping[str, Any], output: str) -> str:
    if output == "json":
        return json.dumps(report, indent=2) + "\n"
    if output == "summary":
        return format_table(SUMMARY_HEADERS, [_summary_row(item) for item in report["items"]])
    return yaml_text(report)


def _summary_row(item: Mapping[str, Any]) -> list[str]:
    """Whether admission allows it, the runtime it runs on, each component's mode
    (``engine=OMENative``) and how many objects the pass writes (pods included)."""
    status = item.get("status") or {}
    runtime = (status.get("runtime") or {}).get("name") or "-"
    modes = ",".join(
        f"{name}={component['deploymentMode']}"
        for name, component in (status.get("components") or {}).items()
        if component.get("deploymentMode")
    )
    isvc = item["inferenceService"]
    allowed = "true" if item["admission"]["allowed"] else "false"
    counts = str(len(item["objects"]))
    return [isvc["namespace"], isvc["name"], allowed, runtime, modes or "-", counts]


def denied(report: Mapping[str, Any]) -> list[str]:
    """``namespace/name`` of every InferenceService admission denies, in report order."""
    return _names(item for item in report["items"] if not item["admission"]["allowed"])


def pods_refused(report: Mapping[str, Any]) -> list[str]:
    """``namespace/name`` of every admitted InferenceService whose pods the namespace's Pod
    Security ``enforce`` level refuses, in report order."""
    items = report["items"]
    return _names(item for item in items if item["admission"]["allowed"] and refused(item))


def _names(items: Iterable[Mapping[str, Any]]) -> list[str]:
    return [f"{i['inferenceService']['namespace']}/{i['inferenceService']['name']}" for i in items]
