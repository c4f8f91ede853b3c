"""The monitoring assets of manifests/monitoring/, read once, for the monitoring tests: the
PrometheusRule's alerts, the dashboard's panels, the operator's metric names, and the names a
PromQL expression selects."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

from ome_operator.metrics import Metrics
from tests.manifests.manifest_files import MANIFESTS, ROOT

MONITORING = MANIFESTS / "monitoring"
DASHBOARD = MONITORING / "ome-operator-dashboard.json"
RUNBOOKS = ROOT / "docs" / "runbooks"
#: A metric name in a PromQL expression: every one of the operator's starts with ``ome_``.
METRIC = re.compile(r"\bome_[a-z0-9_]+")
#: A name in PromQL that is not a function's (no ``(`` after it).
NAME = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()")
#: PromQL's operators that are words.
OPERATORS = frozenset({"and", "or", "unless", "bool", "offset"})
#: Each label matcher ``label="value"``, ``label=~"regex"`` of an expression.
MATCHER = re.compile(r'\b([a-z_]+)\s*(=~|=)\s*"([^"]*)"')


def load(name: str) -> dict[str, Any]:
    [document] = list(yaml.safe_load_all((MONITORING / name).read_text()))
    return document


@functools.cache
def metric_families() -> dict[str, frozenset[str]]:
    """Each metric family a fresh ``Metrics`` registers, with the sample names it can expose
    (a counter's family drops its ``_total``)."""
    registry = CollectorRegistry()
    Metrics(registry)
    suffixes = {
        "counter": ("_total",),
        "gauge": ("",),
        "histogram": ("_bucket", "_sum", "_count"),
    }
    return {
        family.name: frozenset(family.name + suffix for suffix in suffixes[family.type])
        for family in registry.collect()
    }


@functools.cache
def metric_names() -> frozenset[str]:
    """Every sample name a fresh ``Metrics`` can expose."""
    return frozenset().union(*metric_families().values())


def selected(expr: str) -> set[str]:
    """The series names ``expr`` selects: its names left once strings, matchers, ranges and
    grouping labels are taken out, but for functions (a name before ``(``) and operators."""
    text = re.sub(r'"[^"]*"', "", expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    return set(NAME.findall(text)) - OPERATORS


def matchers(expr: str) -> set[tuple[str, str, str]]:
    return set(MATCHER.findall(expr))


RULES = load("prometheusrule.yaml")
ALERTS = {rule["alert"]: rule for group in RULES["spec"]["groups"] for rule in group["rules"]}
BOARD = json.loads(DASHBOARD.read_text())
PANELS = [panel for panel in BOARD["panels"] if panel["type"] != "row"]
