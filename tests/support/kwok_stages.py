"""The stages the tier's KWOK plays: pods as a kubelet shows them, nodes as a kubelet keeps them.

Not KWOK's default stages: those set every readiness gate of a pod to True themselves, which a
kubelet never does. Here one stage, ``pod-status``, writes the whole status a kubelet would
write for a pod bound to the node, from the pod as it is now, and is played again on every
change of the pod (KWOK skips a patch that changes nothing, so it settles after one more pass):

- each container running and ready (``started``, a ``containerd://`` id, ``startedAt`` the pod's
  ``startTime``), unless its image carries a fault marker of ``pod_faults``;
- ``PodReadyToStartContainers`` and ``Initialized`` True (init containers Completed, sidecars
  running); ``ContainersReady`` True when every container is ready, else False with reason
  ``ContainersNotReady`` and ``containers with unready status: [<names>]``;
- ``Ready`` as the kubelet's ``GeneratePodReadyCondition`` (pkg/kubelet/status/generate.go)
  makes it: the ContainersReady status, reason and message when that is not True; else False,
  reason ``ReadinessGatesNotReady``, when a ``spec.readinessGates[*].conditionType`` condition
  is missing (``corresponding condition of pod readiness gate "<type>" does not exist.``) or not
  True (``the status of pod readiness gate "<type>" is not "True", but False``), messages joined
  by ``, ``; else True. A gate condition the operator writes later makes Ready True;
- a pod IP from the node's ``spec.podCIDR`` (inside 127.0.0.0/8), host IP 127.0.0.1, phase
  Running (Pending while an image cannot be pulled); ``lastTransitionTime`` kept while a
  condition's status holds.

``pod-delete`` removes a pod that has a deletionTimestamp at once (its containers stop at once),
as a kubelet does after they exit. Pods that are Succeeded or Failed are left alone.
"""

from __future__ import annotations

import pathlib
from typing import Any

from tests.support.pod_faults import CRASH_LOOP, IMAGE_PULL, NEVER_READY, OOM_KILLED, image_pattern

TEMPLATES = pathlib.Path(__file__).parent / "kwok_templates"
#: The status a kubelet writes for a pod (the fault markers' patterns are filled in).
POD_STATUS = TEMPLATES / "pod-status.gotmpl"
#: What a kubelet writes on a node it registers, then on each status update (every 10 min, as
#: KWOK's own heartbeat-with-lease stage; the lease, renewed apart, is what says it is alive).
NODE_STATUS = TEMPLATES / "node-status.gotmpl"


def _stage(name: str, kind: str, expressions: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": kind},
            "selector": {"matchExpressions": expressions},
            **spec,
        },
    }


def _status_patch(template: str) -> dict[str, Any]:
    return {"patch": {"subresource": "status", "root": "status", "template": template.strip()}}


def pod_status_template() -> str:
    markers = {
        "@IMAGE_PULL@": IMAGE_PULL,
        "@CRASH_LOOP@": CRASH_LOOP,
        "@OOM_KILLED@": OOM_KILLED,
        "@NEVER_READY@": NEVER_READY,
    }
    template = POD_STATUS.read_text(encoding="utf-8")
    for placeholder, marker in markers.items():
        template = template.replace(placeholder, image_pattern(marker))
    return template


def stages() -> list[dict[str, Any]]:
    """The Stage documents of the KWOK configuration."""
    ready = '.status.conditions.[] | select( .type == "Ready" ) | .status'
    return [
        _stage(
            "node-initialize",
            "Node",
            [{"key": ready, "operator": "NotIn", "values": ["True"]}],
            steps=[_status_patch(NODE_STATUS.read_text(encoding="utf-8"))],
        ),
        _stage(
            "node-heartbeat",
            "Node",
            [{"key": ready, "operator": "In", "values": ["True"]}],
            delay={"durationMilliseconds": 600000, "jitterDurationMilliseconds": 610000},
            steps=[_status_patch(NODE_STATUS.read_text(encoding="utf-8"))],
        ),
        _stage(
            "pod-status",
            "Pod",
            [
                {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                {"key": ".status.phase", "operator": "NotIn", "values": ["Succeeded", "Failed"]},
            ],
            steps=[_status_patch(pod_status_template())],
        ),
        _stage(
            "pod-delete",
            "Pod",
            [{"key": ".metadata.deletionTimestamp", "operator": "Exists"}],
            steps=[{"delete": True}],
        ),
    ]
