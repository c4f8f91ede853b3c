"""Component specs: what an InferenceService declares per component and a runtime per config.

EngineSpec, DecoderSpec and RouterSpec share one model here: pod fields and everything not read
stay as preserved extras; the fields the operator reads are typed. Unset stays ``None``.
"""

from __future__ import annotations

from pydantic import StrictInt, StrictStr

from .base import CRDModel, IntOrString, JsonDict

__all__ = ["AcceleratorSelector", "ComponentSpec", "LeaderSpec", "WorkerSpec"]


class AcceleratorSelector(CRDModel):
    accelerator_class: StrictStr | None = None


class LeaderSpec(CRDModel):
    """Inline PodSpec (extras) plus the leader's runner container."""

    runner: JsonDict | None = None


class WorkerSpec(CRDModel):
    """Inline PodSpec (extras) plus the worker count and runner container."""

    size: StrictInt | None = None
    runner: JsonDict | None = None


class ComponentSpec(CRDModel):
    """An engine, decoder or router, as declared or as merged with a runtime config."""

    annotations: dict[str, StrictStr] = {}
    labels: dict[str, StrictStr] = {}
    min_replicas: StrictInt | None = None
    max_replicas: StrictInt | None = None
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    deployment_strategy: JsonDict | None = None
    lifecycle: JsonDict | None = None
    runner: JsonDict | None = None
    leader: LeaderSpec | None = None
    worker: WorkerSpec | None = None
    accelerator_override: AcceleratorSelector | None = None
    node_selector: dict[str, StrictStr] = {}
    scheduler_name: StrictStr | None = None
    config: dict[str, StrictStr] = {}
