"""The CRDs (manifests/crds/): the kinds of SPEC S1.1, their printer columns (S1.1, S5.4.9,
S16.4), and schemas an API server accepts as structural."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import pytest

from tests.manifests.manifest_files import MANIFESTS, documents
from tests.support.crd_schema import load_crds, to_json_schema, version_schema

#: SPEC S1.1: plural, kind, scope, short names, whether status is a subresource.
KINDS = [
    ("inferenceservices", "InferenceService", "Namespaced", ["isvc"], True),
    ("servingruntimes", "ServingRuntime", "Namespaced", [], True),
    ("clusterservingruntimes", "ClusterServingRuntime", "Cluster", [], True),
    ("basemodels", "BaseModel", "Namespaced", [], True),
    ("clusterbasemodels", "ClusterBaseModel", "Cluster", [], True),
    ("acceleratorclasses", "AcceleratorClass", "Cluster", [], True),
    ("inferencereplicas", "InferenceReplica", "Namespaced", ["irep"], True),
]


def _crd(plural: str) -> dict[str, Any]:
    (found,) = [crd for crd in load_crds() if crd["spec"]["names"]["plural"] == plural]
    return found


def _version(plural: str) -> dict[str, Any]:
    (version,) = _crd(plural)["spec"]["versions"]
    return version


def _columns(plural: str, priority: int = 0) -> list[tuple[str, str, str]]:
    """The columns ``kubectl get`` prints (priority 0), or those only ``-o wide`` adds."""
    return [
        (c["name"].upper(), c["jsonPath"], c["type"])
        for c in _version(plural).get("additionalPrinterColumns", [])
        if c.get("priority", 0) == priority
    ]


def test_there_is_one_crd_file_per_kind_and_nothing_else() -> None:
    files = sorted(p.name for p in (MANIFESTS / "crds").glob("*.yaml"))
    files.remove("kustomization.yaml")  # kustomize's, not an object
    assert files == sorted(f"{plural}.yaml" for plural, *_ in KINDS)
    assert [d.kind for d in documents(MANIFESTS / "crds")] == ["CustomResourceDefinition"] * len(
        KINDS
    )


@pytest.mark.parametrize(
    ("plural", "kind", "scope", "short_names", "status"), [pytest.param(*k, id=k[1]) for k in KINDS]
)
def test_each_kind_is_served_and_stored_as_ome_io_v1beta1(
    plural: str, kind: str, scope: str, short_names: list[str], status: bool
) -> None:
    crd = _crd(plural)
    spec = crd["spec"]
    assert crd["metadata"]["name"] == f"{plural}.ome.io"
    assert (spec["group"], spec["scope"]) == ("ome.io", scope)
    assert spec["names"] == {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
        **({"shortNames": short_names} if short_names else {}),
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1beta1", True, True)
    assert ("status" in version.get("subresources", {})) is status


def test_inference_service_columns_add_engine_mode_and_selected_runtime() -> None:
    assert _columns("inferenceservices") == [
        ("URL", ".status.url", "string"),
        ("READY", ".status.conditions[?(@.type=='Ready')].status", "string"),
        ("BASEMODEL", ".spec.model.name", "string"),
        ("RUNTIME", ".spec.runtime.name", "string"),
        ("ENGINE-MODE", ".status.components.engine.deploymentMode", "string"),
        ("SELECTED-RUNTIME", ".status.runtime.name", "string"),
        ("AGE", ".metadata.creationTimestamp", "date"),
    ]


def test_the_traffic_columns_the_operator_never_fills_are_in_wide_output_only() -> None:
    traffic = ".status.components.engine.traffic"
    assert _columns("inferenceservices", priority=1) == [
        ("PREV", f"{traffic}[?(@.tag=='prev')].percent", "integer"),
        ("LATEST", f"{traffic}[?(@.latestRevision==true)].percent", "integer"),
        ("PREVROLLEDOUTREVISION", f"{traffic}[?(@.tag=='prev')].revisionName", "string"),
        ("LATESTREADYREVISION", f"{traffic}[?(@.latestRevision==true)].revisionName", "string"),
    ]


def test_inference_replica_columns_are_those_of_kubectl_get_irep() -> None:
    # NAME is always printed first by kubectl; the CRD declares the rest (S5.4.9).
    assert _columns("inferencereplicas") == [
        ("COMPONENT", ".spec.component", "string"),
        ("DESIRED", ".spec.replicas", "integer"),
        ("CURRENT", ".status.replicas", "integer"),
        ("READY", ".status.readyReplicas", "integer"),
        ("AVAILABLE", ".status.availableReplicas", "integer"),
        ("AGE", ".metadata.creationTimestamp", "date"),
    ]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("ServingRuntime", "ClusterServingRuntime", id="runtimes"),
        pytest.param("BaseModel", "ClusterBaseModel", id="models"),
    ],
)
def test_namespaced_and_cluster_twins_share_one_schema(first: str, second: str) -> None:
    def schema(kind: str) -> dict[str, Any]:
        return {
            k: v for k, v in version_schema("ome.io/v1beta1", kind).items() if k != "description"
        }

    assert schema(first) == schema(second)


def _component_schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    isvc = version_schema("ome.io/v1beta1", "InferenceService")["properties"]["spec"]["properties"]
    runtime = version_schema("ome.io/v1beta1", "ServingRuntime")["properties"]["spec"]["properties"]
    for component in ("engine", "decoder", "router"):
        yield f"InferenceService spec.{component}", isvc[component]
        yield f"ServingRuntime spec.{component}Config", runtime[f"{component}Config"]


def test_every_component_spec_and_runtime_config_has_one_schema() -> None:
    def shape(node: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in node.items() if k != "description"}

    (_, first), *rest = _component_schemas()
    assert [where for where, node in rest if shape(node) != shape(first)] == []


# ------------------------------------------------------------------- structural-schema rules


def _nodes(node: Mapping[str, Any], path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _nodes(child, f"{path}.{name}")
    if isinstance(node.get("items"), Mapping):
        yield from _nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from _nodes(node["additionalProperties"], f"{path}{{}}")


def _structural_problems(node: Mapping[str, Any], path: str) -> Iterator[str]:
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if "type" not in node and not (int_or_string or preserve):
        yield f"{path}: has no type"
    if int_or_string and "type" in node:
        yield f"{path}: int-or-string must not set a type"
    if preserve not in (None, True):
        yield f"{path}: x-kubernetes-preserve-unknown-fields may only be true"
    if "properties" in node and "additionalProperties" in node:
        yield f"{path}: properties and additionalProperties exclude each other"
    if node.get("type") != "object" and ("properties" in node or "additionalProperties" in node):
        yield f"{path}: properties on a non-object"
    if node.get("type") == "array" and "items" not in node:
        yield f"{path}: an array needs items"
    missing = set(node.get("required", ())) - set(node.get("properties", {}))
    if missing:
        yield f"{path}: requires undeclared {sorted(missing)}"
    if "default" in node:
        errors = jsonschema.Draft202012Validator(to_json_schema(node, is_root=False)).iter_errors(
            node["default"]
        )
        yield from (f"{path}: default {node['default']!r}: {e.message}" for e in errors)
    if "enum" in node:
        errors = [
            e
            for value in node["enum"]
            for e in jsonschema.Draft202012Validator({"type": node.get("type")}).iter_errors(value)
        ]
        yield from (f"{path}: enum value {e.instance!r}: {e.message}" for e in errors)


@pytest.mark.parametrize("plural", [pytest.param(k[0], id=k[1]) for k in KINDS])
def test_each_schema_is_structural_with_valid_defaults_and_enums(plural: str) -> None:
    schema = _version(plural)["schema"]["openAPIV3Schema"]
    assert schema["properties"]["metadata"] == {"type": "object"}
    problems = [
        p for path, node in _nodes(schema, plural) for p in _structural_problems(node, path)
    ]
    assert problems == []


@pytest.mark.parametrize("plural", [pytest.param(k[0], id=k[1]) for k in KINDS])
def test_unmodelled_spec_and_status_fields_are_preserved(plural: str) -> None:
    schema = _version(plural)["schema"]["openAPIV3Schema"]
    assert all(
        schema["properties"][part].get("x-kubernetes-preserve-unknown-fields") is True
        for part in ("spec", "status")
        if part in schema["properties"]
    )


@pytest.mark.parametrize(
    ("plural", "column"),
    [
        pytest.param(plural, column, id=f"{kind} {column['name']}")
        for plural, kind, *_ in KINDS
        for column in _version(plural).get("additionalPrinterColumns", [])
    ],
)
def test_printer_columns_read_fields_the_schema_declares(
    plural: str, column: dict[str, Any]
) -> None:
    path = column["jsonPath"]
    if path.startswith(".metadata.") or ".traffic" in path:
        return  # metadata is the API server's; v1.3's traffic columns read preserved fields
    node: Mapping[str, Any] = _version(plural)["schema"]["openAPIV3Schema"]
    for part in path.split("[")[0].strip(".").split("."):
        node = node.get("properties", {}).get(part) or node.get("additionalProperties", {})
        assert node, f"{path} reads a field the schema does not declare"
