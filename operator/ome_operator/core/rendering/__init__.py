"""Workload rendering (docs/reference/workloads.md): pure functions from a resolved component to
manifests.

Renderers return plain dicts with sorted label and annotation maps; the same inputs always give
the same objects. They never call an API, read the clock or set owner references.
"""

from .components import render_component
from .context import Budget, ComponentContext
from .disruption_budgets import resolve_pdb
from .errors import (
    ComponentRenderError,
    PdbPreflightError,
    PdbResolutionError,
    PlaceholderError,
    PodPolicyDenied,
    ResourceQuantityError,
)
from .inference_replicas import revision_hash
from .instance_pods import SERVING_GATE, render_instance_pods
from .naming import component_url, entry_url, object_name
from .services import (
    component_service,
    entry_component,
    render_entry_service,
    service_selector,
)

__all__ = [
    "SERVING_GATE",
    "Budget",
    "ComponentContext",
    "ComponentRenderError",
    "PdbPreflightError",
    "PdbResolutionError",
    "PlaceholderError",
    "PodPolicyDenied",
    "ResourceQuantityError",
    "component_service",
    "component_url",
    "entry_component",
    "entry_url",
    "object_name",
    "render_component",
    "render_entry_service",
    "render_instance_pods",
    "resolve_pdb",
    "revision_hash",
    "service_selector",
]
