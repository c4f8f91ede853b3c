"""One key set for every operator log line: the structured fields the code logs (``extra=`` of
a logging call, the fields of the core's LogRecords) are all from ``LOG_FIELDS``, and each of
them is used; none is an attribute every LogRecord has (``logging`` refuses such an ``extra=``
with a KeyError, which failed the pass that logged it). docs/troubleshooting.md lists them with
their meaning."""

from __future__ import annotations

import ast
import logging
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "operator" / "ome_operator"

#: Every structured log field, by what it names.
LOG_FIELDS = {
    # which object
    "namespace", "inferenceService", "inferenceReplica", "component", "kind", "resource",
    "model", "secret", "validatingWebhookConfiguration", "webhooks", "path", "identity",
    # what happened
    "error", "status", "retryIn", "because", "createdPods", "adoptedPods", "deletedPods",
    "createdPodGroups", "deletedPodGroups", "leaderWorkerSet", "keda", "podGroups",
    "gangPlacement", "renewedAgo", "noticedBy", "fields",
    # the runtime a pass selected
    "runtime", "score", "isCluster",
}  # fmt: skip


def _logged_fields() -> dict[str, set[str]]:
    """field -> the modules that log it."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            keys: list[ast.expr] = []
            for keyword in node.keywords:
                if keyword.arg == "extra" and isinstance(keyword.value, ast.Dict):
                    keys += [k for k in keyword.value.keys if k is not None]
            if getattr(node.func, "id", None) == "LogRecord" and len(node.args) >= 3:
                fields = node.args[2]
                if isinstance(fields, ast.Tuple):
                    keys += [e.elts[0] for e in fields.elts if isinstance(e, ast.Tuple) and e.elts]
            for key in keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found.setdefault(key.value, set()).add(str(path.relative_to(PACKAGE)))
    return found


def test_every_logged_field_is_in_the_key_set():
    logged = _logged_fields()
    assert {k: sorted(v) for k, v in logged.items() if k not in LOG_FIELDS} == {}


def test_every_field_of_the_key_set_is_logged_somewhere():
    assert LOG_FIELDS - set(_logged_fields()) == set()


def test_no_field_is_an_attribute_of_every_log_record():
    record = logging.LogRecord("ome_operator", logging.INFO, __file__, 1, "message", (), None)
    reserved = {*vars(record), "message", "asctime"}
    assert sorted(LOG_FIELDS & reserved) == []
