"""The InferenceReplica controller's writes of gang PodGroups (``core.instances.gangs``):
created before the pods that join them, deleted once their incarnation is gone. Each answer goes
to the record of the operator's writes, as a pod's does."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.errors import AlreadyExists, Conflict, NamespaceTerminating, Refused
from ..core.instances import PodRef
from ..core.instances.gangs import POD_GROUP_API_VERSION
from ..models.object_metadata import reference_to, with_owner

__all__ = ["PodGroupWrites"]


@dataclass
class PodGroupWrites:
    """One pass's PodGroup writes in ``namespace``; ``wrote`` records each answer."""

    api: KubeApi
    namespace: str | None
    wrote: Callable[[Mapping[str, Any]], None]
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def create(self, replica: Mapping[str, Any], groups: Sequence[Mapping[str, Any]]) -> str | None:
        """Create ``groups``, owned by ``replica``; the API server's answer when it refused one
        (the pass then creates no pod: a pod whose group does not exist is never placed)."""
        for group in groups:
            try:
                self.wrote(self.api.create(with_owner(group, replica)))
            except AlreadyExists:
                continue  # made before; the watch shows it soon
            except NamespaceTerminating:
                raise  # its InferenceReplicas go with it
            except Refused as exc:
                return exc.message
            self.created.append(group["metadata"]["name"])
        return None

    def delete(self, refs: Sequence[PodRef]) -> None:
        """Delete each group, only while it is that very group (its uid)."""
        for ref in refs:
            with contextlib.suppress(Conflict):  # another group of that name now: not ours
                group = reference_to(POD_GROUP_API_VERSION, "PodGroup", self.namespace, ref.name)
                self.api.delete(group, uid=ref.uid)
            self.deleted.append(ref.name)
