"""Components that need an API the cluster does not serve (docs/reference/status-and-events.md,
Component failures): MultiNode needs the LeaderWorkerSet CRD, the KEDA autoscaler class the
ScaledObject CRD.

Both APIs are looked up when the operator starts, so no retry can succeed before a restart: the
pass parks, and the component's condition and a Warning event say what to install.
"""

from __future__ import annotations

from .rendering import ComponentRenderError

__all__ = ["KEDA_NOT_INSTALLED", "LWS_NOT_INSTALLED", "ApiMissing", "KedaMissing", "LwsMissing"]

#: Reason of the condition and the Warning event of a MultiNode component without its API.
LWS_NOT_INSTALLED = "LeaderWorkerSetNotInstalled"
#: Reason of the condition and the Warning event of a KEDA-scaled component without its API.
KEDA_NOT_INSTALLED = "KEDANotInstalled"


class ApiMissing(ComponentRenderError):
    """A component needs an API the cluster does not serve; ``reason`` names the condition."""

    reason = ""

    def advice(self, component: str) -> str:
        """What the author reads on the InferenceService and in its event."""
        raise NotImplementedError


class LwsMissing(ApiMissing):
    reason = LWS_NOT_INSTALLED

    def __init__(self) -> None:
        super().__init__("the LeaderWorkerSet CRD (leaderworkerset.x-k8s.io/v1) is not installed")

    def advice(self, component: str) -> str:
        return (
            f"{component} component runs as MultiNode, which needs the LeaderWorkerSet CRD "
            "(leaderworkerset.x-k8s.io/v1); it is not installed: install it and restart the "
            "operator, or move the component to OMENative"
        )


class KedaMissing(ApiMissing):
    reason = KEDA_NOT_INSTALLED

    def __init__(self, why: str) -> None:
        super().__init__("the KEDA ScaledObject CRD (keda.sh/v1alpha1) is not installed")
        self.why = why

    def advice(self, component: str) -> str:
        return (
            f"{component} component is scaled by KEDA ({self.why}), which needs the "
            "ScaledObject CRD (keda.sh/v1alpha1); it is not installed: install KEDA and restart "
            f"the operator, or set the annotation ome.io/autoscalerClass to hpa"
        )
