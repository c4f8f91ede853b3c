"""Component specs: what an InferenceService declares per component and a runtime per config.

EngineSpec, DecoderSpec and RouterSpec share one model here: pod fields and everything not read
stay as preserved extras; the fields the operator reads are typed. Unset stays ``None``.
"""

from typing import Annotated, Any

from pydantic import ConfigDict, StrictBool, StrictInt, StrictStr, WrapValidator
from typing_extensions import TypedDict

from .base import CRDModel, IntOrString, JsonDict

__all__ = [
    "AcceleratorSelector",
    "ComponentSpec",
    "KedaAuthenticationRef",
    "KedaConfig",
    "LeaderSpec",
    "Runner",
    "WorkerSpec",
]


class _EnvVar(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]
    name: StrictStr
    value: StrictStr
    valueFrom: JsonDict


class _ContainerPort(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]
    name: StrictStr
    containerPort: StrictInt
    protocol: StrictStr


class _VolumeMount(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]
    name: StrictStr
    mountPath: StrictStr
    readOnly: StrictBool
    subPath: StrictStr


class _Container(TypedDict, total=False):
    """The fields of a core/v1 Container the API server types and the pods copy as they
    are: of the wrong type, a pod would be refused when written, so the runtime or
    InferenceService holding them is refused when read (``image: 12`` is not an image)."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]
    name: StrictStr
    image: StrictStr
    imagePullPolicy: StrictStr
    workingDir: StrictStr
    command: list[StrictStr]
    args: list[StrictStr]
    env: list[_EnvVar]
    envFrom: list[JsonDict]
    ports: list[_ContainerPort]
    volumeMounts: list[_VolumeMount]
    resources: JsonDict
    livenessProbe: JsonDict
    readinessProbe: JsonDict
    startupProbe: JsonDict
    lifecycle: JsonDict
    securityContext: JsonDict


def _as_written(value: Any, handler: Any) -> Any:
    """Checked against ``_Container``, kept as written (key order and all)."""
    handler(value)
    return value


#: A runner container: a plain dict, its typed fields checked (``_Container``).
Runner = Annotated[_Container, WrapValidator(_as_written)]


class AcceleratorSelector(CRDModel):
    accelerator_class: StrictStr | None = None


class LeaderSpec(CRDModel):
    """Inline PodSpec (extras) plus the leader's runner container."""

    runner: Runner | None = None


class WorkerSpec(CRDModel):
    """Inline PodSpec (extras) plus the worker count and runner container."""

    size: StrictInt | None = None
    runner: Runner | None = None


class KedaAuthenticationRef(CRDModel):
    """A KEDA TriggerAuthentication or ClusterTriggerAuthentication, by name."""

    name: StrictStr | None = None
    kind: StrictStr | None = None


class KedaConfig(CRDModel):
    """KEDA settings of a component or an InferenceService (docs/autoscaling.md): what the
    ScaledObject's Prometheus trigger asks, and whether KEDA scales the component at all."""

    enable_keda: StrictBool | None = None
    prom_server_address: StrictStr | None = None
    custom_prom_query: StrictStr | None = None
    scaling_threshold: StrictStr | None = None
    scaling_operator: StrictStr | None = None
    authentication_ref: KedaAuthenticationRef | None = None
    auth_modes: StrictStr | None = None


class ComponentSpec(CRDModel):
    """An engine, decoder or router, as declared or as merged with a runtime config."""

    annotations: dict[str, StrictStr] = {}
    labels: dict[str, StrictStr] = {}
    min_replicas: StrictInt | None = None
    max_replicas: StrictInt | None = None
    scale_target: StrictInt | None = None
    scale_metric: StrictStr | None = None
    keda_config: KedaConfig | None = None
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    deployment_strategy: JsonDict | None = None
    lifecycle: JsonDict | None = None
    runner: Runner | None = None
    leader: LeaderSpec | None = None
    worker: WorkerSpec | None = None
    accelerator_override: AcceleratorSelector | None = None
    node_selector: dict[str, StrictStr] = {}
    scheduler_name: StrictStr | None = None
    config: dict[str, StrictStr] = {}
