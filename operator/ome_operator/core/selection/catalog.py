"""RuntimeCatalog: the snapshot of runtimes selection decides on (fetched once, never re-read)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...models import ServingRuntime

__all__ = ["RuntimeCatalog"]


@dataclass(frozen=True)
class RuntimeCatalog:
    """The ServingRuntimes of one namespace and every ClusterServingRuntime, each sorted by name."""

    namespaced: tuple[ServingRuntime, ...] = ()
    cluster: tuple[ServingRuntime, ...] = ()
    #: Selection's memo of what was decided over this catalog (``selecting``): it lives and
    #: dies with the catalog, so a runtime change, which makes a new catalog, frees it.
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    #: Selection's memo of what each runtime says about each model (``selecting``): it depends
    #: on that runtime and that model only, so a catalog changed from this one shares it.
    fits: dict[Any, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def of(cls, runtimes: Iterable[ServingRuntime]) -> RuntimeCatalog:
        ordered = sorted(runtimes, key=lambda r: r.name)
        return cls(
            namespaced=tuple(r for r in ordered if not r.is_cluster),
            cluster=tuple(r for r in ordered if r.is_cluster),
        )

    def changed(
        self, removed: Callable[[ServingRuntime], bool], added: Iterable[ServingRuntime]
    ) -> RuntimeCatalog:
        """This catalog without the runtimes ``removed`` picks and with ``added``: the
        catalog a runtime change leaves, knowing what this one knew about each runtime."""
        changed = RuntimeCatalog.of([*(r for r in self if not removed(r)), *added])
        return RuntimeCatalog(changed.namespaced, changed.cluster, fits=self.fits)

    def __iter__(self):
        yield from self.namespaced
        yield from self.cluster

    def __len__(self) -> int:
        return len(self.namespaced) + len(self.cluster)

    def find(self, name: str, kind: str) -> ServingRuntime | None:
        """The named-runtime lookup (docs/reference/selection.md, Lookup): a ClusterServingRuntime
        (the default kind) first, then a ServingRuntime."""
        scopes = (self.namespaced,) if kind == "ServingRuntime" else (self.cluster, self.namespaced)
        for scope in scopes:
            for runtime in scope:
                if runtime.name == name:
                    return runtime
        return None
