"""Validating admission webhooks (docs/reference/admission.md): the pure rules of
``core.admission``, served.

A denial raises ``kopf.AdmissionError`` with the exact text (kubectl prints it after
``denied the request: ``); warnings go in the response's ``warnings`` list. DELETE is never
validated: a runtime's DELETE is reviewed only to warn which InferenceServices it moves. A
malformed object is denied with the message that names its field and value. Each review is
timed (``ome_webhook_request_duration_seconds``).

An InferenceService or ServingRuntime of a namespace the operator does not watch (``run -n``) is
admitted unreviewed and uncounted: its caches know nothing of that namespace, and another
operator may serve it. ClusterServingRuntimes are always reviewed.

An InferenceService is reviewed against the operator configuration (its pod policy and its
bound of copied metadata, docs/configuration.md) and its namespace's labels, which a review does
not carry: ``controller.namespace_labels`` reads and keeps them.

An InferenceService whose component is about to get a workload beside one of another mode (a
mode change, or OME's before the operator took over) is warned about from the controller's
caches of the workloads (``controller.owned``): no request per review.

An admitted runtime change is warned about from the controller's caches
(``controller.runtime_changes``): the InferenceServices it moves and the runtimes it
ties with. That decision runs in a thread, from what was taken on the event loop; it
never denies, and a failure of it costs only its warnings.

kopf logs every denial as a handler that "failed permanently", at ERROR; a denial is the webhook
doing its work, so it is logged at INFO (a review refused while the caches fill, at WARNING).
Nor does a liveness probe leave an access-log line per request (one every few seconds, forever).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import kopf

from ..cluster.resources import INFERENCE_SERVICE
from ..controller.namespace_labels import NamespaceLabels
from ..controller.runtime_changes import gather
from ..controller.snapshot import Caches
from ..core.admission import AdmissionVerdict, review_inference_service, review_serving_runtime
from ..core.impact import RuntimeChange, runtime_key
from ..core.operator_config import OperatorConfig
from ..core.requeue import decision_inputs_changed
from ..core.workload_leftovers import WorkloadLookup
from ..models import InferenceService, InvalidResourceError, ServingRuntime, storable_manifest
from ..models.object_metadata import metadata_of
from ..settings import RunOptions

__all__ = [
    "denial_level",
    "is_probe_line",
    "validate_cluster_serving_runtime",
    "validate_inference_service",
    "validate_serving_runtime",
]

#: kopf registers these in the webhook configuration but serves every operation it is sent,
#: so the handlers also pass anything else (DELETE above all) unvalidated.
_OPERATIONS = ["CREATE", "UPDATE"]
#: A runtime's DELETE is reviewed too, for its warnings only.
_RUNTIME_OPERATIONS = [*_OPERATIONS, "DELETE"]
_DENIED = 403
GROUP, VERSION = INFERENCE_SERVICE.group, INFERENCE_SERVICE.version
#: Seconds a review waits for the first listings at start (the API server gives it 10).
SYNC_WAIT = 5.0
_STARTING = (
    "the ome-operator is still reading the cluster's runtimes and models; try again in a moment"
)
#: The handler ids: kopf serves each at ``/<id>`` and names it so in its log lines.
_ISVC_ID, _CSR_ID, _SR_ID = (
    "validate-inferenceservice",
    "validate-clusterservingruntime",
    "validate-servingruntime",
)
_HANDLER_IDS = (_ISVC_ID, _CSR_ID, _SR_ID)
#: The path of the liveness endpoint (``operator_command``: ``liveness_endpoint``).
PROBE_PATH = "/healthz"


def denial_level(message: str) -> int | None:
    """The level of kopf's log line ``message`` when it reports a review these handlers refused
    (None: any other line)."""
    for handler_id in _HANDLER_IDS:
        prefix = f"Webhook {handler_id!r} failed permanently: "
        if message.startswith(prefix):
            return logging.WARNING if message[len(prefix) :] == _STARTING else logging.INFO
    return None


def is_probe_line(record: logging.LogRecord) -> bool:
    """Whether an aiohttp access-log ``record`` is of a request to the liveness endpoint."""
    words = str(getattr(record, "first_request_line", "")).split()
    return len(words) > 1 and words[1].partition("?")[0] == PROBE_PATH


class _DenialsAtInfo(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        level = denial_level(record.getMessage())
        if level is None:
            return True
        record.levelno, record.levelname = level, logging.getLevelName(level)
        return logging.getLogger(record.name).isEnabledFor(level)


class _NoProbeLines(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not is_probe_line(record)


logger = logging.getLogger("ome_operator.admission")
logging.getLogger("kopf.objects").addFilter(_DenialsAtInfo())
logging.getLogger("aiohttp.access").addFilter(_NoProbeLines())


@contextlib.contextmanager
def _timed(kind: str, operation: str, memo: kopf.Memo) -> Iterator[None]:
    """Time the review inside, answered or raised."""
    started = time.monotonic()
    try:
        yield
    finally:
        seconds = time.monotonic() - started
        memo.controller.metrics.record_admission_duration(kind, operation, seconds)


def _elsewhere(body: kopf.Body, memo: kopf.Memo) -> bool:
    """Whether ``body`` is in a namespace this operator does not watch (``run -n``)."""
    watched = memo.options.namespaces
    return bool(watched) and metadata_of(body).get("namespace") not in watched


async def _caches(memo: kopf.Memo) -> Caches:
    """The controller's caches, once every watch has listed: a review never answers from a
    half-read cluster."""
    controller = memo.controller
    try:
        await asyncio.wait_for(controller.watches.synced.wait(), SYNC_WAIT)
    except TimeoutError:
        raise kopf.AdmissionError(_STARTING, code=503) from None
    return controller.caches


def _answer(
    verdict: AdmissionVerdict, kind: str, operation: str, warnings: list[str], memo: kopf.Memo
) -> None:
    warnings.extend(verdict.warnings)
    kinds = list(verdict.warning_kinds)
    metrics = memo.controller.metrics
    metrics.record_admission(kind, operation, verdict.allowed, kinds)
    if verdict.selection is not None:
        selection = verdict.selection
        metrics.record_selection(
            "webhook", selection.outcome, selection.scope, exclusions=selection.exclusions
        )
    if not verdict.allowed:
        raise kopf.AdmissionError(verdict.message, code=_DENIED)


def _parse(body: kopf.Body, kind: str, operation: str, memo: kopf.Memo) -> Any:
    """The object's model; a denial naming the field for one that does not parse, is nested
    too deep or is too big to store (``models.limits``)."""
    try:
        return storable_manifest(dict(body))
    except InvalidResourceError as exc:
        memo.controller.metrics.record_admission(kind, operation, False)
        raise kopf.AdmissionError(str(exc), code=_DENIED) from None


async def _policy_inputs(memo: kopf.Memo, namespace: str) -> tuple[OperatorConfig, Mapping]:
    """The operator configuration (the controller's, kept current by its watch) and the labels
    of ``namespace``, which the pod policy's exceptions select on (held for
    ``config_cache_ttl``): as held, or read in a thread when they must be read again (a read is
    a request)."""
    labels = memo.controller.namespace_labels or memo.get("namespace_labels")
    if labels is None:  # a controller built without one (tests)
        options: RunOptions = memo.get("options") or RunOptions()
        labels = memo.namespace_labels = NamespaceLabels(
            memo.controller.api_factory, ttl=options.config_cache_ttl
        )

    source = memo.controller.config_source
    config, found = _peeked(source), _peeked(labels, namespace)
    if config is not None and found is not None:
        return config, found  # a thread hop would cost more than the rules themselves

    def read() -> tuple[OperatorConfig, Mapping]:
        return source(), labels(namespace)

    return await asyncio.to_thread(read)


def _workloads(caches: Caches, namespace: str) -> WorkloadLookup:
    """The workloads the controller's caches hold in ``namespace``, by kind and name."""
    return lambda kind, name: caches.objects.caches[kind].named(namespace, name)


def _peeked(source: Any, *args: Any) -> Any:
    """What ``source.peek`` holds without a read (None: it must be called)."""
    peek = getattr(source, "peek", None)
    return peek(*args) if peek is not None else None


@kopf.on.validate(GROUP, VERSION, "inferenceservices", id=_ISVC_ID, operations=_OPERATIONS)
async def validate_inference_service(
    body: kopf.Body, operation: str, warnings: list[str], memo: kopf.Memo, **_: Any
) -> None:
    if operation not in _OPERATIONS or _elsewhere(body, memo):
        return
    with _timed("InferenceService", operation, memo):
        caches = await _caches(memo)
        isvc: InferenceService = _parse(body, "InferenceService", operation, memo)
        model = isvc.spec.model.name if isvc.spec.model else ""
        config, labels = await _policy_inputs(memo, isvc.namespace)
        verdict = review_inference_service(
            isvc,
            caches.models(isvc.namespace, model),
            caches.runtimes(isvc.namespace),
            config,
            labels,
            _workloads(caches, isvc.namespace),
        )
        _answer(verdict, "InferenceService", operation, warnings, memo)


async def _change_warnings(
    runtime: ServingRuntime,
    kind: str,
    operation: str,
    warnings: list[str],
    memo: kopf.Memo,
    old: Any = None,
) -> None:
    """The runtime warnings of a change the review admits: what it moves, what it ties with. An
    update that no decision reads (``core.requeue``: labels, annotations) moves nothing."""
    controller = memo.controller
    if operation == "DELETE":
        change = RuntimeChange(deleted=frozenset({runtime_key(runtime)}))
    elif operation == "UPDATE" and not decision_inputs_changed(_parsed_or_none(old), runtime):
        change = RuntimeChange()
    else:
        change = RuntimeChange(applied=(runtime,))
    proposed = runtime if operation != "DELETE" else None
    try:
        inputs = gather(change, controller.store, controller.caches, proposed)
        impact, found = await asyncio.to_thread(inputs.warnings)
    except Exception:  # a review never fails for its warnings
        logger.exception(
            "Failed to work out what a runtime change moves",
            extra={"kind": kind, "namespace": runtime.namespace, "runtime": runtime.name},
        )
        return
    controller.metrics.record_runtime_change(kind, operation, impact.changed)
    warnings.extend(found)


def _parsed_or_none(old: Any) -> ServingRuntime | None:
    """The runtime as it was (None: none given, or it did not parse)."""
    if old is None:
        return None
    try:
        return storable_manifest(dict(old))
    except InvalidResourceError:
        return None


async def _validate_runtime(
    body: kopf.Body,
    kind: str,
    operation: str,
    warnings: list[str],
    memo: kopf.Memo,
    old: Any = None,
) -> None:
    if kind == "ServingRuntime" and _elsewhere(body, memo):
        return
    if operation == "DELETE":
        await _deletion_warnings(body, kind, warnings, memo)
        return
    if operation not in _OPERATIONS:
        return
    with _timed(kind, operation, memo):
        caches = await _caches(memo)
        runtime: ServingRuntime = _parse(body, kind, operation, memo)
        verdict = review_serving_runtime(runtime, caches.accelerator_class_names())
        _answer(verdict, kind, operation, warnings, memo)
        await _change_warnings(runtime, kind, operation, warnings, memo, old)


async def _deletion_warnings(
    body: kopf.Body, kind: str, warnings: list[str], memo: kopf.Memo
) -> None:
    """A deletion is always admitted (neither counted nor timed as a review); warned
    about only once the caches have listed."""
    if not memo.controller.watches.synced.is_set():
        return
    runtime = _parsed_or_none(body)
    if runtime is None:
        return  # left out of every decision while it stood: its deletion moves nothing
    await _change_warnings(runtime, kind, "DELETE", warnings, memo)


@kopf.on.validate(
    GROUP, VERSION, "clusterservingruntimes", id=_CSR_ID, operations=_RUNTIME_OPERATIONS
)
async def validate_cluster_serving_runtime(
    body: kopf.Body,
    operation: str,
    warnings: list[str],
    memo: kopf.Memo,
    old: Any = None,
    **_: Any,
) -> None:
    await _validate_runtime(body, "ClusterServingRuntime", operation, warnings, memo, old)


@kopf.on.validate(GROUP, VERSION, "servingruntimes", id=_SR_ID, operations=_RUNTIME_OPERATIONS)
async def validate_serving_runtime(
    body: kopf.Body,
    operation: str,
    warnings: list[str],
    memo: kopf.Memo,
    old: Any = None,
    **_: Any,
) -> None:
    await _validate_runtime(body, "ServingRuntime", operation, warnings, memo, old)
