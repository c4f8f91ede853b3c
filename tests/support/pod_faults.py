"""Faults a control-plane test chooses per pod, through its container images.

The KWOK nodes of the tier (``kwok_nodes``) act as a kubelet for every container, unless the
repository of its image (the image without its tag or digest) ends in one of these markers. A
test puts a marker in the image of the ServingRuntime or InferenceService it applies, so that a
leader and a worker, or two components, can fail differently. What each marker shows, as a
kubelet words it (``kwok_stages`` writes it):

- ``IMAGE_PULL``: the container waits with ``ErrImagePull`` (a containerd "not found"), then,
  from the next status KWOK writes, ``ImagePullBackOff`` (``Back-off pulling image "<image>":
  ErrImagePull: ...``); the pod stays ``Pending``, never ready.
- ``CRASH_LOOP``: ``restartCount`` 1, ``lastState.terminated`` (exit code 1, reason ``Error``),
  ``state.waiting.reason`` ``CrashLoopBackOff`` (``back-off 10s restarting failed
  container=<name> pod=<pod>_<namespace>(<uid>)``); the pod is ``Running``, not ContainersReady.
- ``OOM_KILLED``: the same, its last termination ``OOMKilled`` with exit code 137.
- ``NEVER_READY``: running (``started``) but never ready, as a container whose readiness probe
  fails: ContainersReady False, reason ``ContainersNotReady``.

The states are steady: ``restartCount`` does not grow.
"""

from __future__ import annotations

IMAGE_PULL = "fault-image-pull"
CRASH_LOOP = "fault-crash-loop"
OOM_KILLED = "fault-oom-killed"
NEVER_READY = "fault-never-ready"
MARKERS = (IMAGE_PULL, CRASH_LOOP, OOM_KILLED, NEVER_READY)


def fault_image(marker: str, registry: str = "registry.test/ome", tag: str = "1") -> str:
    """An image whose container shows ``marker``'s fault (``registry.test/ome/<marker>:1``)."""
    assert marker in MARKERS, f"{marker!r} is not one of {MARKERS}"
    return f"{registry}/{marker}:{tag}"


def image_pattern(marker: str) -> str:
    """The regular expression (Go's RE2, as KWOK's templates run it) of images with ``marker``:
    the repository ends in it, a tag and a digest may follow."""
    return f"{marker}(:[^/@]*)?(@[^@]+)?$"
