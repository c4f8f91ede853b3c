"""The ``modelVolumes`` entry of the operator configuration (docs/configuration.md): what parses,
the exact text of every problem, and which source a model gets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ome_operator.core import model_volumes
from ome_operator.core.model_volumes import (
    ModelVolumes,
    ModelVolumesConfigError,
    ModelVolumeSource,
    parse_model_volumes,
)
from ome_operator.core.operator_config import OperatorConfig, parse_operator_config
from ome_operator.models import ModelResource

PREFIX = "fails to create InferenceServicesConfig: "
HOST = ModelVolumeSource()
CLAIM = ModelVolumeSource("persistentVolumeClaim", {"claimName": "models"})
LLAMA_CLAIM = ModelVolumeSource("persistentVolumeClaim", {"claimName": "models"}, "llama")
CSI = ModelVolumeSource("csi", {"driver": "models.example.com", "readOnly": True})
TEMPLATE = {
    "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}}
}
EPHEMERAL = ModelVolumeSource("ephemeral", {"volumeClaimTemplate": TEMPLATE})


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(model_volumes.__all__) == [
        "CSI",
        "EPHEMERAL",
        "HOST_PATH",
        "ModelVolumeSource",
        "ModelVolumes",
        "ModelVolumesConfigError",
        "PERSISTENT_VOLUME_CLAIM",
        "SOURCE_KINDS",
        "parse_model_volumes",
    ]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(None, ModelVolumes(), id="an absent entry mounts every model from the node"),
        pytest.param("null", ModelVolumes(), id="null is the same as absent"),
        pytest.param("{}", ModelVolumes(), id="an empty object is the same as absent"),
        pytest.param(
            {"default": {"hostPath": {}}},
            ModelVolumes(),
            id="hostPath as the default is the built-in default",
        ),
        pytest.param(
            {"default": {"persistentVolumeClaim": {"claimName": "models"}}},
            ModelVolumes(default=CLAIM),
            id="a claim as the default",
        ),
        pytest.param(
            {"namespaces": {"team-a": {"persistentVolumeClaim": {"claimName": "models"}}}},
            ModelVolumes(namespaces={"team-a": CLAIM}),
            id="a claim for one namespace",
        ),
        pytest.param(
            {
                "clusterBaseModels": {
                    "llama": {"persistentVolumeClaim": {"claimName": "models"}, "subPath": "llama"}
                }
            },
            ModelVolumes(cluster_base_models={"llama": LLAMA_CLAIM}),
            id="a claim with a subPath for one ClusterBaseModel",
        ),
        pytest.param(
            {"baseModels": {"team-a/mistral": {"csi": CSI.fields}}},
            ModelVolumes(base_models={"team-a/mistral": CSI}),
            id="a CSI inline volume for one BaseModel, its fields kept as given",
        ),
        pytest.param(
            {"default": {"ephemeral": {"volumeClaimTemplate": TEMPLATE}}},
            ModelVolumes(default=EPHEMERAL),
            id="a generic ephemeral volume as the default",
        ),
        pytest.param(
            {"default": None, "namespaces": None, "clusterBaseModels": None, "baseModels": None},
            ModelVolumes(),
            id="null sections are the same as absent ones",
        ),
    ],
)
def test_an_entry_that_parses(given: Any, expected: ModelVolumes) -> None:
    text = given if given is None or isinstance(given, str) else json.dumps(given)
    assert parse_model_volumes(text) == expected


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        pytest.param("{", ["unable to parse modelVolumes config json"], id="not JSON"),
        pytest.param("[]", ["unable to parse modelVolumes config json"], id="not an object"),
        pytest.param(
            '{"namespace": {}}',
            [
                "modelVolumes.namespace is not a known key "
                "(known: default, namespaces, clusterBaseModels, baseModels)"
            ],
            id="a misspelt key is refused, not ignored",
        ),
        pytest.param(
            '{"namespaces": []}',
            ["modelVolumes.namespaces must be an object, got []"],
            id="a section that is not an object",
        ),
        pytest.param(
            '{"default": "pvc"}',
            ['modelVolumes.default must be an object, got "pvc"'],
            id="a source that is not an object",
        ),
        pytest.param(
            '{"default": {}}',
            [
                "modelVolumes.default must set exactly one of hostPath, persistentVolumeClaim, "
                "csi or ephemeral, got none"
            ],
            id="a source of no kind",
        ),
        pytest.param(
            '{"default": {"hostPath": {}, "csi": {"driver": "x"}}}',
            [
                "modelVolumes.default must set exactly one of hostPath, persistentVolumeClaim, "
                "csi or ephemeral, got hostPath, csi"
            ],
            id="a source of two kinds",
        ),
        pytest.param(
            '{"default": {"nfs": {"server": "x"}}}',
            [
                "modelVolumes.default.nfs is not a known field",
                "modelVolumes.default must set exactly one of hostPath, persistentVolumeClaim, "
                "csi or ephemeral, got none",
            ],
            id="another volume kind",
        ),
        pytest.param(
            '{"default": {"hostPath": {"path": "/"}}}',
            [
                "modelVolumes.default.hostPath must be {} (the path is the model's "
                'spec.storage.path), got {"path": "/"}'
            ],
            id="a hostPath with a path of its own",
        ),
        pytest.param(
            '{"default": {"hostPath": {}, "subPath": "llama"}}',
            ["modelVolumes.default.subPath cannot be used with hostPath"],
            id="a hostPath with a subPath",
        ),
        pytest.param(
            '{"namespaces": {"a": {"persistentVolumeClaim": {"claimName": ""}}}}',
            [
                "modelVolumes.namespaces.a.persistentVolumeClaim.claimName must be a non-empty "
                'string, got ""'
            ],
            id="a claim without a name",
        ),
        pytest.param(
            '{"namespaces": {"a": {"persistentVolumeClaim": '
            '{"claimName": "m", "readOnly": false}}}}',
            ["modelVolumes.namespaces.a.persistentVolumeClaim.readOnly is not a known field"],
            id="a claim the author would attach read-write",
        ),
        pytest.param(
            '{"default": {"persistentVolumeClaim": {"claimName": "m"}, "subPath": "../etc"}}',
            ['modelVolumes.default.subPath must be a relative path without "..", got "../etc"'],
            id="a subPath that leaves the volume",
        ),
        pytest.param(
            '{"default": {"persistentVolumeClaim": {"claimName": "m"}, "subPath": "/models"}}',
            ['modelVolumes.default.subPath must be a relative path without "..", got "/models"'],
            id="an absolute subPath",
        ),
        pytest.param(
            '{"clusterBaseModels": {"llama": {"csi": {"readOnly": true}}}}',
            [
                "modelVolumes.clusterBaseModels.llama.csi.driver must be a non-empty string, "
                "got null"
            ],
            id="a CSI volume without a driver",
        ),
        pytest.param(
            '{"default": {"ephemeral": {"volumeClaimTemplate": {}}}}',
            [
                "modelVolumes.default.ephemeral.volumeClaimTemplate must be an object with a "
                "spec, got {}"
            ],
            id="an ephemeral volume without a claim template spec",
        ),
        pytest.param(
            '{"baseModels": {"mistral": {"hostPath": {}}, "a/b/c": {"hostPath": {}}}}',
            [
                'modelVolumes.baseModels key "mistral" is not <namespace>/<name>',
                'modelVolumes.baseModels key "a/b/c" is not <namespace>/<name>',
            ],
            id="BaseModel keys that are not namespace/name",
        ),
        pytest.param(
            '{"default": {}, "namespaces": {"a": {"csi": {}}}}',
            [
                "modelVolumes.default must set exactly one of hostPath, persistentVolumeClaim, "
                "csi or ephemeral, got none",
                "modelVolumes.namespaces.a.csi.driver must be a non-empty string, got null",
            ],
            id="every problem is reported at once, in the order of the entry",
        ),
    ],
)
def test_each_problem_has_its_exact_text(text: str, problems: list[str]) -> None:
    with pytest.raises(ModelVolumesConfigError) as raised:
        parse_model_volumes(text)
    assert (raised.value.problems, str(raised.value)) == (
        tuple(problems),
        PREFIX + "; ".join(problems),
    )


def model(name: str, namespace: str | None = None) -> ModelResource:
    kind = "BaseModel" if namespace else "ClusterBaseModel"
    return ModelResource.model_validate(
        {"kind": kind, "metadata": {"name": name, "namespace": namespace}}
    )


CONFIGURED = ModelVolumes(
    default=CSI,
    namespaces={"team-a": CLAIM},
    cluster_base_models={"llama": LLAMA_CLAIM},
    base_models={"team-a/mistral": EPHEMERAL},
)


@pytest.mark.parametrize(
    ("volumes", "namespace", "found", "expected"),
    [
        pytest.param(ModelVolumes(), "team-a", model("llama"), HOST, id="hostPath by default"),
        pytest.param(
            CONFIGURED, "team-a", model("llama"), LLAMA_CLAIM, id="the model over the namespace"
        ),
        pytest.param(
            CONFIGURED,
            "team-a",
            model("mistral", "team-a"),
            EPHEMERAL,
            id="a BaseModel by its namespace and name",
        ),
        pytest.param(
            CONFIGURED,
            "team-a",
            model("mistral", "team-b"),
            CLAIM,
            id="a BaseModel of another namespace is another model",
        ),
        pytest.param(
            CONFIGURED, "team-a", model("qwen"), CLAIM, id="the namespace over the default"
        ),
        pytest.param(
            CONFIGURED,
            "team-b",
            model("mistral"),
            CSI,
            id="a ClusterBaseModel named like a configured BaseModel is not that model",
        ),
        pytest.param(CONFIGURED, "team-b", None, CSI, id="the default without a model"),
    ],
)
def test_the_most_specific_source_wins(
    volumes: ModelVolumes, namespace: str, found: ModelResource | None, expected: ModelVolumeSource
) -> None:
    assert volumes.source_for(namespace, found) == expected


def test_the_operator_configuration_carries_the_entry() -> None:
    entry = {"default": {"persistentVolumeClaim": {"claimName": "models"}}}
    assert parse_operator_config({"modelVolumes": json.dumps(entry)}) == OperatorConfig(
        model_volumes=ModelVolumes(default=CLAIM)
    )


def test_an_unusable_entry_stalls_reconciles_with_its_text() -> None:
    config = parse_operator_config({"modelVolumes": '{"default": {}}'})
    assert (config.model_volumes, str(config.problem)) == (
        ModelVolumes(),
        PREFIX + "modelVolumes.default must set exactly one of hostPath, "
        "persistentVolumeClaim, csi or ephemeral, got none",
    )
