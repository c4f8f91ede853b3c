"""Why a component's objects could not be rendered; each error renders the exact sentence.

ComponentRenderError              a component fails: no workload for it or any later one
├── PlaceholderError              malformed Go-style template in a runner string
├── PdbResolutionError            the budget's fields conflict or a value is invalid
├── PdbPreflightError             a same-named budget exists that this service did not create
├── ResourceQuantityError         a runner's GPU request is not a whole number
└── PodPolicyDenied               pod fields the pod policy refuses (docs/configuration.md)
"""

from __future__ import annotations

import json
from typing import ClassVar

__all__ = [
    "ComponentRenderError",
    "PdbPreflightError",
    "PdbResolutionError",
    "PlaceholderError",
    "PodPolicyDenied",
    "ResourceQuantityError",
]


class ComponentRenderError(Exception):
    """A component's objects cannot be rendered; the reconciler treats it as a component failure
    (docs/reference/status-and-events.md, Component failures). ``metric_reason`` is its
    ``reason`` label on ``ome_component_reconcile_errors_total``; ``condition_reason`` the reason
    of ``Ready=False`` and of the Warning event that say so."""

    metric_reason: ClassVar[str] = "other"
    condition_reason: ClassVar[str] = "ComponentRenderError"

    def condition_message(self, component: str, runtime: str) -> str:
        """What the InferenceService's author reads (the condition and the event)."""
        return f"{component} component: {self}"


class PlaceholderError(ComponentRenderError):
    """A runner string is not one of the template forms docs/troubleshooting.md lists
    (``RuntimeTemplateError``); ``container``: the runner's container name, once known."""

    condition_reason = "RuntimeTemplateError"

    def __init__(
        self, path: str, template: str, problem: str, container: str | None = None
    ) -> None:
        self.path = path
        self.template = template
        self.problem = problem
        self.container = container
        super().__init__(
            f"failed to render placeholders in {path}: "
            f"malformed template {json.dumps(template)}: {problem}"
        )

    def in_container(self, container: str) -> PlaceholderError:
        return PlaceholderError(self.path, self.template, self.problem, container)

    def condition_message(self, component: str, runtime: str) -> str:
        container = f"container {self.container} " if self.container else ""
        return f"{component} component: {container}(runtime {runtime}): {self}"


class PdbResolutionError(ComponentRenderError):
    """The PodDisruptionBudget cannot be resolved from the component and its runtime."""

    metric_reason = "pdb"
    condition_reason = "PodDisruptionBudgetError"

    def __init__(self, component: str, problem: str) -> None:
        self.component = component
        self.problem = problem
        super().__init__(f"failed to resolve {component} PodDisruptionBudget: {problem}")


class PdbPreflightError(ComponentRenderError):
    """A PodDisruptionBudget of the component's name exists that this InferenceService did
    not create (the preflight)."""

    metric_reason = "pdb"
    condition_reason = "PodDisruptionBudgetError"

    def __init__(self, component: str, budget: str) -> None:
        self.component = component
        self.budget = budget
        super().__init__(
            f"failed to preflight {component} PodDisruptionBudget: PodDisruptionBudget {budget} "
            "exists and was not created by this InferenceService"
        )


class ResourceQuantityError(ComponentRenderError):
    """A runner asks for a GPU count PARALLELISM_SIZE cannot be computed from."""

    condition_reason = "InvalidResourceQuantity"

    def __init__(self, path: str, value: object) -> None:
        self.path = path
        self.value = value
        super().__init__(f"{path} must be a whole number of GPUs (got {json.dumps(value)})")


class PodPolicyDenied(ComponentRenderError):
    """The component, as the InferenceService declares it, has pod fields the pod policy
    refuses: it got in before the policy, or past the webhook. ``denials``: the webhook's
    sentences (``core.pod_policy``)."""

    metric_reason = "pod_policy"
    condition_reason = "PodPolicyDenied"

    def __init__(self, denials: tuple[str, ...]) -> None:
        self.denials = denials
        super().__init__("; ".join(denials))
