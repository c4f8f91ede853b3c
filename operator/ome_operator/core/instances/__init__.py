"""The InferenceReplica controller's decisions (docs/reference/workloads.md, OMENative), pure:
from an InferenceReplica and its pods to the pods to create and delete, the serving gates to set
and the status."""

from .observed import ObservedPod, observed_pods
from .planning import InstancePlan, PodRef, plan_instances
from .status import InstanceState, label_selector, replica_ready, replica_status

__all__ = [
    "InstancePlan",
    "InstanceState",
    "ObservedPod",
    "PodRef",
    "label_selector",
    "observed_pods",
    "plan_instances",
    "replica_ready",
    "replica_status",
]
