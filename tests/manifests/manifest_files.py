"""The YAML documents under manifests/, read once, for the manifest tests."""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from typing import Any

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests"

#: The Kubernetes version built-in kinds are validated against (kubernetes-validate schemas).
KUBERNETES_VERSION = "1.33.0"

#: The CRDs, installed once and apart from the operator (manifests/crds/kustomization.yaml).
CRD_FOLDER = "crds"
#: The operator's namespace, installed once, after the CRDs and before the operator
#: (manifests/namespace/kustomization.yaml), so that removing the operator leaves it.
NAMESPACE_FOLDER = "namespace"
#: The operator's install folders, in the order manifests/kustomization.yaml applies them.
INSTALL_FOLDERS = ("rbac", "operator", "webhook")


@dataclasses.dataclass(frozen=True)
class Document:
    path: pathlib.Path
    index: int
    body: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(MANIFESTS)}#{self.index}"

    @property
    def kind(self) -> str:
        return self.body["kind"]

    @property
    def name(self) -> str:
        return self.body["metadata"]["name"]

    @property
    def namespace(self) -> str | None:
        return self.body["metadata"].get("namespace")

    @property
    def group(self) -> str:
        api_version = self.body["apiVersion"]
        return api_version.rpartition("/")[0] if "/" in api_version else ""


#: Below manifests/, what is not an object to apply: kustomize's own files, and the objects of
#: other tools (Prometheus operator kinds, the krew plugin manifest), which their own tests check.
NOT_OBJECTS = ("kustomization.yaml",)
THIRD_PARTY = ("monitoring", "krew")


def yaml_files(folder: pathlib.Path = MANIFESTS) -> list[pathlib.Path]:
    """Every YAML file of objects below ``folder``, in the order ``kubectl apply -f`` reads
    them."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in (".yaml", ".yml")
        and p.name not in NOT_OBJECTS
        and not set(p.relative_to(MANIFESTS).parts) & set(THIRD_PARTY)
    )


@functools.cache
def documents(folder: pathlib.Path = MANIFESTS) -> tuple[Document, ...]:
    """Every non-empty YAML document below ``folder`` (a YAML error fails the caller)."""
    found = []
    for path in yaml_files(folder):
        for index, body in enumerate(yaml.safe_load_all(path.read_text())):
            if body is not None:
                found.append(Document(path, index, body))
    return tuple(found)


def params(docs: tuple[Document, ...]) -> list[Any]:
    return [
        pytest.param(
            doc, id=f"{doc.where} {doc.body.get('kind')}/{doc.body.get('metadata', {}).get('name')}"
        )
        for doc in docs
    ]


def install_documents() -> list[Document]:
    """The documents the install commands apply, in apply order: the CRDs, the namespace, then
    the operator."""
    folders = (CRD_FOLDER, NAMESPACE_FOLDER, *INSTALL_FOLDERS)
    return [doc for folder in folders for doc in documents(MANIFESTS / folder)]


def operator_documents() -> list[Document]:
    """The documents of the operator's kustomization (everything but the CRDs), in apply order."""
    return [doc for folder in INSTALL_FOLDERS for doc in documents(MANIFESTS / folder)]


def find(
    kind: str, name: str, docs: tuple[Document, ...] | list[Document] | None = None
) -> Document:
    """The one document of ``kind`` named ``name``; fails the test if absent."""
    matches = [
        d for d in (documents() if docs is None else docs) if d.kind == kind and d.name == name
    ]
    assert len(matches) == 1, f"expected one {kind} {name!r} under manifests/, found {len(matches)}"
    return matches[0]
