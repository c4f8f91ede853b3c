"""Why runtime selection failed; each error renders the exact user-facing sentence
(docs/reference/selection.md, Messages).

SelectionError
├── ModelSpecError            the model pre-checks
│   ├── InvalidModelSpecError
│   └── ShardedModelError
├── NoRuntimeFoundError       nothing qualifies
├── RuntimeNotFoundError      the named runtime does not exist
└── RuntimeDisabledError      the named runtime is disabled
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Exclusion",
    "InvalidModelSpecError",
    "ModelSpecError",
    "NoRuntimeFoundError",
    "RuntimeDisabledError",
    "RuntimeNotFoundError",
    "SelectionError",
    "ShardedModelError",
]


@dataclass(frozen=True)
class Exclusion:
    """A runtime that failed one of the five checks, with that check's reason."""

    runtime: str
    is_cluster: bool
    check: str  # disabled | accelerator_class | deployment_mode | model_format | model_size
    reason: str


class SelectionError(Exception):
    """Selection could not produce a runtime."""


class ModelSpecError(SelectionError):
    """The model fails a pre-check, before any runtime is looked at."""


class InvalidModelSpecError(ModelSpecError):
    def __init__(self) -> None:
        super().__init__(
            "invalid model specification: modelFormat.name: model format name is required"
        )


class ShardedModelError(ModelSpecError):
    def __init__(self, model: str) -> None:
        self.model = model
        super().__init__(
            f"model {model} uses distribution Sharded: "
            "no model cache provider is configured for sharded model loading"
        )


class NoRuntimeFoundError(SelectionError):
    """No runtime qualifies for auto-selection (docs/reference/selection.md, No runtime found)."""

    def __init__(
        self,
        model_format: str,
        namespace: str,
        namespaced: int,
        cluster: int,
        excluded: tuple[Exclusion, ...],
    ) -> None:
        self.model_format = model_format
        self.namespace = namespace
        self.namespaced = namespaced
        self.cluster = cluster
        self.excluded = tuple(sorted(excluded, key=lambda e: (e.is_cluster, e.runtime)))
        super().__init__(self._render())

    def _render(self) -> str:
        text = (
            f"no runtime found to support model {self.model_format} "
            f"with format {self.model_format} in namespace {self.namespace}"
        )
        total = self.namespaced + self.cluster
        if total > 0:
            text += (
                f". Checked {total} runtimes ({self.namespaced} namespace-scoped, "
                f"{self.cluster} cluster-scoped)"
            )
        if self.excluded:
            listed = "; ".join(f"{e.runtime} ({e.reason})" for e in self.excluded)
            text += f". Excluded runtimes: {listed}"
        return text


class RuntimeNotFoundError(SelectionError):
    """The runtime ``spec.runtime.name`` names does not exist."""

    def __init__(self, name: str, namespace: str, kind: str) -> None:
        self.name = name
        self.namespace = namespace
        self.kind = kind
        if kind == "ServingRuntime":
            text = f"ServingRuntime {name} not found in namespace {namespace}"
        else:
            text = f"runtime {name} not found in namespace {namespace} or at cluster scope"
        super().__init__(text)


class RuntimeDisabledError(SelectionError):
    """The named runtime is disabled."""

    def __init__(self, name: str, is_cluster: bool) -> None:
        self.name = name
        self.is_cluster = is_cluster
        scope = "cluster-scoped" if is_cluster else "namespace-scoped"
        super().__init__(f"{scope} runtime {name} is disabled")
