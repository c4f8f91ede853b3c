"""The install manifests (manifests/crds/, manifests/namespace/, then
manifests/{rbac,operator,webhook}/) parse, are valid objects for a pinned Kubernetes version, fit
together, and install in the README's order."""

from __future__ import annotations

import json
import re
import shlex

import kubernetes_validate
import pytest
import yaml

from tests.manifests.manifest_files import (
    CRD_FOLDER,
    INSTALL_FOLDERS,
    KUBERNETES_VERSION,
    MANIFESTS,
    NAMESPACE_FOLDER,
    Document,
    documents,
    find,
    install_documents,
    params,
    yaml_files,
)

BUILT_IN = tuple(doc for doc in documents() if doc.group != "ome.io")


def test_every_yaml_file_under_manifests_parses_into_objects_with_kind_and_name() -> None:
    assert yaml_files(), "no YAML under manifests/"
    problems = [
        f"{doc.where}: needs apiVersion, kind and metadata.name"
        for doc in documents()
        if not (
            isinstance(doc.body, dict)
            and isinstance(doc.body.get("apiVersion"), str)
            and isinstance(doc.body.get("kind"), str)
            and isinstance(doc.body.get("metadata", {}).get("name"), str)
        )
    ]
    assert problems == []


@pytest.mark.parametrize("doc", params(BUILT_IN))
def test_built_in_objects_validate_strictly_against_the_pinned_kubernetes_version(
    doc: Document,
) -> None:
    try:
        kubernetes_validate.validate(doc.body, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(map(str, exc.path)) or "(root)"
        pytest.fail(f"{doc.where}: {path}: {exc.message}")


def test_every_install_folder_holds_manifests() -> None:
    folders = (CRD_FOLDER, NAMESPACE_FOLDER, *INSTALL_FOLDERS)
    assert [f for f in folders if not documents(MANIFESTS / f)] == []


def _readme_install_commands() -> list[list[str]]:
    """The `kubectl apply` commands of manifests/README.md's first code block."""
    readme = (MANIFESTS / "README.md").read_text()
    block = re.search(r"^```sh\n(.*?)^```$", readme, flags=re.MULTILINE | re.DOTALL)
    assert block, "manifests/README.md shows no sh block"
    return [shlex.split(line) for line in re.findall(r"^kubectl apply .*$", block[1], re.M)]


def test_the_readme_installs_the_crds_then_the_operator_each_with_its_kustomization() -> None:
    assert _readme_install_commands() == [
        ["kubectl", "apply", "-k", "manifests/crds/"],
        ["kubectl", "apply", "-k", "manifests/namespace/"],
        ["kubectl", "apply", "-k", "manifests/"],
    ]


def test_the_operator_kustomization_keeps_the_folders_in_order_and_holds_no_crd() -> None:
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    folders = [r.split("/")[0] for r in kustomization["resources"] if r != "../config"]
    assert list(dict.fromkeys(folders)) == list(INSTALL_FOLDERS)


def test_the_crd_kustomization_holds_every_crd_file_and_nothing_else() -> None:
    kustomization = yaml.safe_load((MANIFESTS / CRD_FOLDER / "kustomization.yaml").read_text())
    files = [p.name for p in yaml_files(MANIFESTS / CRD_FOLDER)]
    assert kustomization["resources"] == files


#: What the API server stores in an object's annotations in all: client-side apply records the
#: whole object in one (kubectl.kubernetes.io/last-applied-configuration). Each CRD stays under
#: half of it, room to grow before the install would need --server-side.
ANNOTATIONS_LIMIT = 256 * 1024


def test_every_crd_fits_client_side_apply_so_no_server_side_apply_is_needed() -> None:
    sizes = {
        doc.name: len(json.dumps(doc.body, separators=(",", ":")))
        for doc in documents(MANIFESTS / CRD_FOLDER)
    }
    assert {name: size for name, size in sizes.items() if size >= ANNOTATIONS_LIMIT // 2} == {}


def test_every_crd_is_kept_by_helm_when_a_release_is_removed() -> None:
    kept = {
        doc.name: (doc.body["metadata"].get("annotations") or {}).get("helm.sh/resource-policy")
        for doc in documents(MANIFESTS / CRD_FOLDER)
    }
    assert kept == dict.fromkeys(kept, "keep")


def test_in_install_order_each_namespace_is_created_before_anything_is_put_in_it() -> None:
    created: set[str] = set()
    problems = []
    for doc in install_documents():
        if doc.kind == "Namespace":
            created.add(doc.name)
        elif doc.namespace is not None and doc.namespace not in created:
            problems.append(f"{doc.where} {doc.kind}/{doc.name} needs namespace {doc.namespace}")
    assert problems == []


def test_the_webhook_configuration_is_applied_after_the_server_it_calls() -> None:
    order = [(doc.kind, doc.name) for doc in install_documents()]
    webhook = order.index(("ValidatingWebhookConfiguration", "ome-webhook-server"))
    assert order.index(("Deployment", "ome-operator")) < webhook
    assert order.index(("Service", "ome-webhook-server")) < webhook


def test_namespaced_objects_all_live_in_the_operator_namespace() -> None:
    namespaces = {doc.namespace for doc in install_documents() if doc.namespace is not None}
    assert namespaces == {"ome"}


# ------------------------------------------------------------------------------ the Deployment


def _container() -> dict:
    (container,) = find("Deployment", "ome-operator").body["spec"]["template"]["spec"]["containers"]
    return container


def test_two_replicas_elect_a_leader_and_roll_one_at_a_time() -> None:
    spec = find("Deployment", "ome-operator").body["spec"]
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    assert (spec["replicas"], spec["strategy"], _container()["command"][-1]) == (
        2,
        rolling,
        "--leader-elect",
    )


def test_the_operator_container_runs_the_operator_image_and_command() -> None:
    container = _container()
    assert (container["image"], container["command"]) == (
        "ome-operator",  # its tag is set in one place: manifests/kustomization.yaml images:
        ["ome-operator", "run", "--leader-elect"],
    )


def test_the_operator_exposes_metrics_liveness_and_webhook_ports() -> None:
    ports = {p["name"]: p["containerPort"] for p in _container()["ports"]}
    assert ports == {"metrics": 8080, "healthz": 8081, "webhook": 9443}


def test_the_liveness_probe_asks_kopf_healthz_on_its_own_port() -> None:
    probe = _container()["livenessProbe"]["httpGet"]
    assert (probe["path"], probe["port"]) == ("/healthz", "healthz")


def test_the_operator_runs_as_its_service_account() -> None:
    pod = find("Deployment", "ome-operator").body["spec"]["template"]["spec"]
    find("ServiceAccount", pod["serviceAccountName"])
    assert pod["serviceAccountName"] == "ome-operator"


def _pod_labels() -> dict[str, str]:
    return find("Deployment", "ome-operator").body["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize(
    ("kind", "name", "selector"),
    [
        pytest.param("Service", "ome-webhook-server", ("spec", "selector"), id="webhook Service"),
        pytest.param("Service", "ome-operator-metrics", ("spec", "selector"), id="metrics Service"),
        pytest.param(
            "PodDisruptionBudget",
            "ome-operator",
            ("spec", "selector", "matchLabels"),
            id="PodDisruptionBudget",
        ),
        pytest.param(
            "Deployment", "ome-operator", ("spec", "selector", "matchLabels"), id="Deployment"
        ),
    ],
)
def test_selectors_select_the_operator_pod(kind: str, name: str, selector: tuple[str, ...]) -> None:
    found = find(kind, name).body
    for key in selector:
        found = found[key]
    assert found.items() <= _pod_labels().items()


@pytest.mark.parametrize(
    ("service", "port", "target", "container_port"),
    [
        pytest.param("ome-webhook-server", 443, "webhook", 9443, id="webhook 443 to 9443"),
        pytest.param("ome-operator-metrics", 8080, "metrics", 8080, id="metrics 8080"),
    ],
)
def test_services_reach_the_named_container_ports(
    service: str, port: int, target: str, container_port: int
) -> None:
    ports = {p["port"]: p["targetPort"] for p in find("Service", service).body["spec"]["ports"]}
    named = {p["name"]: p["containerPort"] for p in _container()["ports"]}
    assert ports == {port: target}
    assert named[target] == container_port


def test_the_pod_disruption_budget_never_blocks_a_drain_of_the_single_replica() -> None:
    assert find("PodDisruptionBudget", "ome-operator").body["spec"]["maxUnavailable"] == 1
