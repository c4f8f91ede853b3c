"""Where the model volume comes from (docs/configuration.md, ``modelVolumes``): the ConfigMap
entry parsed, and the source chosen for one InferenceService's model.

A source is one of ``hostPath`` (the node directory ``spec.storage.path``, as OME mounts it: the
default), ``persistentVolumeClaim`` (a claim in the InferenceService's namespace), ``csi`` (a CSI
inline volume) or ``ephemeral`` (a generic ephemeral volume). Whatever the source, it is mounted
read-only at the model's ``spec.storage.path`` (a ``subPath`` of it, when one is set). The most
specific entry wins: the model's (``clusterBaseModels``, ``baseModels``), then the
InferenceService's namespace (``namespaces``), then ``default``, then ``hostPath``.

Pure: the caller reads the ConfigMap; every problem of the entry is reported at once, in a
``ModelVolumesConfigError`` with the exact text the operator logs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..models import ModelResource

__all__ = [
    "CSI",
    "EPHEMERAL",
    "HOST_PATH",
    "PERSISTENT_VOLUME_CLAIM",
    "SOURCE_KINDS",
    "ModelVolumeSource",
    "ModelVolumes",
    "ModelVolumesConfigError",
    "parse_model_volumes",
]

HOST_PATH = "hostPath"
PERSISTENT_VOLUME_CLAIM = "persistentVolumeClaim"
CSI = "csi"
EPHEMERAL = "ephemeral"
#: The volume sources a model may come from, in the order messages list them.
SOURCE_KINDS = (HOST_PATH, PERSISTENT_VOLUME_CLAIM, CSI, EPHEMERAL)

#: The entry's keys, in the order they are looked at.
_SECTIONS = ("default", "namespaces", "clusterBaseModels", "baseModels")
_PARSE = "unable to parse modelVolumes config json"


class ModelVolumesConfigError(ValueError):
    """``modelVolumes`` is unusable: every problem found, in the order of the entry."""

    def __init__(self, problems: tuple[str, ...]) -> None:
        self.problems = problems
        super().__init__("fails to create InferenceServicesConfig: " + "; ".join(problems))


@dataclass(frozen=True)
class ModelVolumeSource:
    """One source of the model volume: its kind and, but for ``hostPath``, its fields."""

    #: One of ``SOURCE_KINDS``.
    kind: str = HOST_PATH
    #: The volume source as configured: ``{"claimName": …}`` for a claim, a CSIVolumeSource for
    #: ``csi``, an EphemeralVolumeSource for ``ephemeral``; empty for ``hostPath``.
    fields: Mapping[str, Any] = field(default_factory=dict)
    #: The directory inside the volume mounted at the model path; None mounts the whole volume.
    sub_path: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            raise ValueError(f"kind must be one of {SOURCE_KINDS} (got {self.kind!r})")


@dataclass(frozen=True)
class ModelVolumes:
    """The ``modelVolumes`` entry: the default source and the more specific ones."""

    default: ModelVolumeSource = field(default_factory=ModelVolumeSource)
    #: InferenceService namespace -> source.
    namespaces: Mapping[str, ModelVolumeSource] = field(default_factory=dict)
    #: ClusterBaseModel name -> source.
    cluster_base_models: Mapping[str, ModelVolumeSource] = field(default_factory=dict)
    #: ``<namespace>/<name>`` of a BaseModel -> source.
    base_models: Mapping[str, ModelVolumeSource] = field(default_factory=dict)

    def source_for(self, namespace: str, model: ModelResource | None) -> ModelVolumeSource:
        """The source of ``model``'s volume in an InferenceService of ``namespace``: the
        model's entry, else the namespace's, else the default."""
        if model is not None:
            found = (
                self.cluster_base_models.get(model.name)
                if model.is_cluster
                else self.base_models.get(f"{model.metadata.namespace or namespace}/{model.name}")
            )
            if found is not None:
                return found
        return self.namespaces.get(namespace, self.default)


def parse_model_volumes(text: str | None) -> ModelVolumes:
    """The ``modelVolumes`` entry (absent or ``null``: every model from ``hostPath``)."""
    if text is None:
        return ModelVolumes()
    try:
        given = json.loads(text)
    except ValueError:
        raise ModelVolumesConfigError((_PARSE,)) from None
    if given is None:
        return ModelVolumes()
    if not isinstance(given, dict):
        raise ModelVolumesConfigError((_PARSE,))
    problems: list[str] = [
        f"modelVolumes.{key} is not a known key (known: {', '.join(_SECTIONS)})"
        for key in given
        if key not in _SECTIONS
    ]
    default = ModelVolumeSource()
    if given.get("default") is not None:
        default = _source(given["default"], "modelVolumes.default", problems)
    sections = {
        key: _section(given.get(key), key, problems)
        for key in ("namespaces", "clusterBaseModels", "baseModels")
    }
    for key in sections["baseModels"]:
        namespace, _, name = key.partition("/")
        if not namespace or not name or "/" in name:
            problems.append(
                f"modelVolumes.baseModels key {json.dumps(key)} is not <namespace>/<name>"
            )
    if problems:
        raise ModelVolumesConfigError(tuple(problems))
    return ModelVolumes(
        default, sections["namespaces"], sections["clusterBaseModels"], sections["baseModels"]
    )


def _section(given: Any, key: str, problems: list[str]) -> dict[str, ModelVolumeSource]:
    """One of the maps of sources (name -> source); absent or ``null`` is empty."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        problems.append(f"modelVolumes.{key} must be an object, got {json.dumps(given)}")
        return {}
    return {
        name: _source(value, f"modelVolumes.{key}.{name}", problems)
        for name, value in given.items()
    }


def _source(given: Any, where: str, problems: list[str]) -> ModelVolumeSource:
    """One source; its problems are appended to ``problems`` (the default source stands in)."""
    if not isinstance(given, dict):
        problems.append(f"{where} must be an object, got {json.dumps(given)}")
        return ModelVolumeSource()
    found = len(problems)
    problems.extend(
        f"{where}.{key} is not a known field"
        for key in given
        if key not in SOURCE_KINDS and key != "subPath"
    )
    kinds = [kind for kind in SOURCE_KINDS if kind in given]
    if len(kinds) != 1:
        problems.append(
            f"{where} must set exactly one of {', '.join(SOURCE_KINDS[:-1])} or "
            f"{SOURCE_KINDS[-1]}, got {', '.join(kinds) or 'none'}"
        )
        return ModelVolumeSource()
    kind, sub_path = kinds[0], given.get("subPath")
    fields = given[kind]
    problems.extend(_FIELD_RULES[kind](fields, f"{where}.{kind}"))
    if sub_path is not None and kind == HOST_PATH:
        problems.append(f"{where}.subPath cannot be used with hostPath")
    elif sub_path is not None and not _relative(sub_path):
        problems.append(
            f'{where}.subPath must be a relative path without "..", got {json.dumps(sub_path)}'
        )
    if len(problems) > found:
        return ModelVolumeSource()
    return ModelVolumeSource(kind, {} if kind == HOST_PATH else dict(fields), sub_path)


def _host_path(fields: Any, where: str) -> list[str]:
    if fields == {}:
        return []
    return [
        f"{where} must be {{}} (the path is the model's spec.storage.path), got "
        f"{json.dumps(fields)}"
    ]


def _claim(fields: Any, where: str) -> list[str]:
    if not isinstance(fields, dict):
        return [f"{where} must be an object, got {json.dumps(fields)}"]
    problems = [f"{where}.{key} is not a known field" for key in fields if key != "claimName"]
    claim = fields.get("claimName")
    if not isinstance(claim, str) or not claim:
        problems.append(f"{where}.claimName must be a non-empty string, got {json.dumps(claim)}")
    return problems


def _csi(fields: Any, where: str) -> list[str]:
    if not isinstance(fields, dict):
        return [f"{where} must be an object, got {json.dumps(fields)}"]
    driver = fields.get("driver")
    if isinstance(driver, str) and driver:
        return []
    return [f"{where}.driver must be a non-empty string, got {json.dumps(driver)}"]


def _ephemeral(fields: Any, where: str) -> list[str]:
    if not isinstance(fields, dict):
        return [f"{where} must be an object, got {json.dumps(fields)}"]
    template = fields.get("volumeClaimTemplate")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        return []
    return [
        f"{where}.volumeClaimTemplate must be an object with a spec, got {json.dumps(template)}"
    ]


#: Per kind, the rule of its fields: the problems found, empty when there is none.
_FIELD_RULES = {
    HOST_PATH: _host_path,
    PERSISTENT_VOLUME_CLAIM: _claim,
    CSI: _csi,
    EPHEMERAL: _ephemeral,
}


def _relative(path: Any) -> bool:
    """A non-empty relative path none of whose parts is ``..`` (what a volume mount accepts)."""
    return (
        isinstance(path, str)
        and bool(path)
        and not path.startswith("/")
        and ".." not in path.split("/")
    )
