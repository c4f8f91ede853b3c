"""Runtime selection (docs/reference/selection.md): pure functions over a RuntimeCatalog."""

from .catalog import RuntimeCatalog
from .errors import (
    Exclusion,
    InvalidModelSpecError,
    ModelSpecError,
    NoRuntimeFoundError,
    RuntimeDisabledError,
    RuntimeNotFoundError,
    SelectionError,
    ShardedModelError,
)
from .matching import CHECKS, Request, first_exclusion, model_label
from .scoring import explain_priority, explain_weight
from .selecting import (
    Advisory,
    NamedRuntime,
    RuntimeVerdict,
    Selection,
    check_model,
    find_named_runtime,
    may_qualify,
    resolve_named_runtime,
    select_runtime,
)

__all__ = [
    "CHECKS",
    "Advisory",
    "Exclusion",
    "InvalidModelSpecError",
    "ModelSpecError",
    "NamedRuntime",
    "NoRuntimeFoundError",
    "Request",
    "RuntimeCatalog",
    "RuntimeDisabledError",
    "RuntimeNotFoundError",
    "RuntimeVerdict",
    "Selection",
    "SelectionError",
    "ShardedModelError",
    "check_model",
    "explain_priority",
    "explain_weight",
    "find_named_runtime",
    "first_exclusion",
    "may_qualify",
    "model_label",
    "resolve_named_runtime",
    "select_runtime",
]
