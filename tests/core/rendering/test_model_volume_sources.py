"""The model volume of each source (docs/configuration.md, ``modelVolumes``), and what Pod
Security ``baseline`` refuses in the pods of every mode: with the node's ``hostPath`` (the
default, as OME) the model volume alone; with any other source, nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from ome_operator.core.model_volumes import ModelVolumeSource
from ome_operator.core.rendering import render_component, render_instance_pods
from ome_operator.core.rendering.pod_specs import render_pod_spec
from tests.core.rendering.test_golden import load_case

MODEL_PATH = "/raid/models/llama-3-2-3b-instruct"
VOLUME = "llama-3-2-3b-instruct"
CLAIM = ModelVolumeSource("persistentVolumeClaim", {"claimName": "models"})
CSI = {"driver": "models.example.com", "volumeAttributes": {"model": "llama"}}
TEMPLATE = {
    "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "8Gi"}}}
}
MOUNT = {"mountPath": MODEL_PATH, "name": VOLUME, "readOnly": True}


@pytest.mark.parametrize(
    ("source", "volume", "mount"),
    [
        pytest.param(
            ModelVolumeSource(),
            {"name": VOLUME, "hostPath": {"path": MODEL_PATH}},
            MOUNT,
            id="hostPath mounts the node directory of the model, as OME",
        ),
        pytest.param(
            CLAIM,
            {"name": VOLUME, "persistentVolumeClaim": {"claimName": "models", "readOnly": True}},
            MOUNT,
            id="a claim is attached read-only and mounted whole at the model path",
        ),
        pytest.param(
            replace(CLAIM, sub_path="llama"),
            {"name": VOLUME, "persistentVolumeClaim": {"claimName": "models", "readOnly": True}},
            {**MOUNT, "subPath": "llama"},
            id="a claim with a subPath mounts that directory of it",
        ),
        pytest.param(
            ModelVolumeSource("csi", CSI),
            {"name": VOLUME, "csi": CSI},
            MOUNT,
            id="a CSI inline volume as configured",
        ),
        pytest.param(
            ModelVolumeSource("ephemeral", {"volumeClaimTemplate": TEMPLATE}, "llama"),
            {"name": VOLUME, "ephemeral": {"volumeClaimTemplate": TEMPLATE}},
            {**MOUNT, "subPath": "llama"},
            id="a generic ephemeral volume, with a subPath",
        ),
    ],
)
def test_each_source_gives_its_volume_and_mount(
    source: ModelVolumeSource, volume: dict[str, Any], mount: dict[str, Any]
) -> None:
    ctx = replace(load_case("raw_deployment_cluster_base_model", "engine"), model_volume=source)
    spec = render_pod_spec(ctx, "default")
    assert (spec["volumes"], spec["containers"][0]["volumeMounts"]) == ([volume], [mount])
    assert {"name": "MODEL_PATH", "value": MODEL_PATH} in spec["containers"][0]["env"]


#: Capabilities ``baseline`` lets a container add (Pod Security Standards).
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)


def baseline_refusals(spec: dict[str, Any]) -> list[str]:
    """What Pod Security ``baseline`` refuses in one pod spec."""
    found = [f"{key}: true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    found += [f"hostPath volume {v['name']}" for v in spec.get("volumes", []) if "hostPath" in v]
    if (spec.get("securityContext") or {}).get("sysctls"):
        found.append("sysctls")
    for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
        context = container.get("securityContext") or {}
        name = container["name"]
        if context.get("privileged"):
            found.append(f"{name}: privileged")
        added = set((context.get("capabilities") or {}).get("add") or [])
        if added - BASELINE_CAPABILITIES:
            found.append(f"{name}: capabilities {sorted(added - BASELINE_CAPABILITIES)}")
        if context.get("procMount", "Default") != "Default":
            found.append(f"{name}: procMount")
        if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
            found.append(f"{name}: seccomp Unconfined")
        found += [f"{name}: hostPort" for p in container.get("ports", []) if p.get("hostPort")]
    return found


def pod_specs(found: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec in rendered objects (a map with ``containers``), wherever it sits."""
    if isinstance(found, dict):
        if isinstance(found.get("containers"), list):
            yield found
        for value in found.values():
            yield from pod_specs(value)
    elif isinstance(found, list):
        for value in found:
            yield from pod_specs(value)


#: Each golden case, the component rendered, and its model volume (None: no model volume).
CASES = [
    pytest.param("raw_deployment_cluster_base_model", "engine", VOLUME, id="RawDeployment"),
    pytest.param(
        "raw_deployment_base_model", "engine", "qwen2-5-7b", id="RawDeployment with a BaseModel"
    ),
    pytest.param("multi_node", "engine", "deepseek-r1", id="MultiNode leader and workers"),
    pytest.param("ome_native_single_pod", "engine", VOLUME, id="OMENative, one pod per Instance"),
    pytest.param(
        "ome_native_leader_worker", "engine", "qwen3-235b", id="OMENative leader and workers"
    ),
    pytest.param("ome_native_runtime_worker", "engine", None, id="OMENative worker of the runtime"),
    pytest.param("router_config", "router", None, id="a router"),
]


def rendered(case: str, component: str, source: ModelVolumeSource) -> list[dict[str, Any]]:
    """The component's objects and, for OMENative, the pods of Instance 0."""
    ctx = replace(load_case(case, component), model_volume=source)
    objects = render_component(ctx)
    if objects[0]["kind"] == "InferenceReplica":
        objects = [*objects, *render_instance_pods(objects[0], 0)]
    return objects


@pytest.mark.parametrize(("case", "component", "volume"), CASES)
def test_with_the_node_directory_baseline_refuses_only_the_model_volume(
    case: str, component: str, volume: str | None
) -> None:
    specs = list(pod_specs(rendered(case, component, ModelVolumeSource())))
    assert specs
    assert [baseline_refusals(spec) for spec in specs] == [
        [f"hostPath volume {volume}"] if volume else [] for _ in specs
    ]


@pytest.mark.parametrize(("case", "component", "volume"), CASES)
def test_with_a_claim_baseline_refuses_nothing(
    case: str, component: str, volume: str | None
) -> None:
    specs = list(pod_specs(rendered(case, component, CLAIM)))
    assert specs
    assert [baseline_refusals(spec) for spec in specs] == [[] for _ in specs]
