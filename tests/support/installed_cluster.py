"""The control plane with the operator installed from ``manifests/`` as a user would, and what the
control-plane tests do to it and read back.

Resources are named like ``apps/v1/deployments`` (group/version/plural; ``v1/...`` for the core
group). Seeding goes through ``kubectl apply`` (so admission runs, and its output is what a user
sees) or the REST API as the cluster admin.
"""

from __future__ import annotations

import ipaddress
import json
import os
import pathlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from tests.support.control_plane import (
    ControlPlane,
    kept_port,
    user_requests,
    write_kubeconfig,
)
from tests.support.leader_worker_set_controller import install_crds

if TYPE_CHECKING:
    from tests.support.kwok_nodes import KwokNodes

T = TypeVar("T")

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPERATOR_USER = "system:serviceaccount:ome:ome-operator"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")

ISVC = "ome.io/v1beta1/inferenceservices"
SR = "ome.io/v1beta1/servingruntimes"
CSR = "ome.io/v1beta1/clusterservingruntimes"
BM = "ome.io/v1beta1/basemodels"
CBM = "ome.io/v1beta1/clusterbasemodels"
REPLICA = "ome.io/v1beta1/inferencereplicas"
DEPLOYMENT = "apps/v1/deployments"
SERVICE = "v1/services"
PDB = "policy/v1/poddisruptionbudgets"
LWS = "leaderworkerset.x-k8s.io/v1/leaderworkersets"
EVENT = "v1/events"
SECRET = "v1/secrets"
APISERVICE = "apiregistration.k8s.io/v1/apiservices"
VWC = "admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MWC = "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
CLUSTER_SCOPED = (CSR, CBM, APISERVICE, VWC, MWC, "v1/namespaces")
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


def eventually(check: Callable[[], T], timeout: float = 30.0, interval: float = 0.2) -> T:
    """The first truthy result of ``check`` within ``timeout``; else the last failure."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
        except (AssertionError, KeyError, TypeError, IndexError):
            if time.monotonic() > deadline:
                raise
        else:
            if result:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"not true within {timeout} s: {result!r}")
        time.sleep(interval)


def path(resource: str, namespace: str | None = None, name: str | None = None) -> str:
    *group_version, plural = resource.split("/")
    root = "/api/v1" if group_version == ["v1"] else "/apis/" + "/".join(group_version)
    scoped = f"/namespaces/{namespace}" if namespace and resource not in CLUSTER_SCOPED else ""
    return f"{root}{scoped}/{plural}" + (f"/{name}" if name else "")


def webhook_configuration(port: int) -> dict[str, Any]:
    """The shipped ValidatingWebhookConfiguration, each webhook called at 127.0.0.1:``port``
    (never through a Service: its ClusterIP would be dialled)."""
    shipped = ROOT / "manifests" / "webhook" / "validating-webhook-configuration.yaml"
    config = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    for hook in config["webhooks"]:
        service = hook["clientConfig"].pop("service")
        hook["clientConfig"]["url"] = f"https://127.0.0.1:{port}{service['path']}"
    return config


def loopback_overlay(
    folder: pathlib.Path, port: int, base: pathlib.Path = ROOT / "manifests"
) -> pathlib.Path:
    """A kustomization over ``base`` (the operator's install: manifests/ or an overlay of it)
    whose webhooks call 127.0.0.1:``port`` (never through a Service: its ClusterIP would be
    dialled)."""
    folder.mkdir(parents=True, exist_ok=True)
    hooks = webhook_configuration(port)["webhooks"]
    patch = [
        {"op": "replace", "path": f"/webhooks/{n}/clientConfig", "value": hook["clientConfig"]}
        for n, hook in enumerate(hooks)
    ]
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(base, folder)],
        "patches": [
            {
                "target": {"kind": "ValidatingWebhookConfiguration", "name": "ome-webhook-server"},
                "patch": json.dumps(patch),
            }
        ],
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(kustomization), encoding="utf-8")
    return folder


def _owner_kinds_mapped(plane: ControlPlane, token: str, namespace: str = "default") -> bool:
    """Whether the API server's admission maps the new CRDs' kinds yet. Until its RESTMapper is
    next refreshed (every 30 s), an owner reference to an InferenceService with
    ``blockOwnerDeletion`` is refused ("cannot find RESTMapping"), so the operator's first
    writes would wait out its backoff. Asked with a dry run, as the operator."""
    probe = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "owner-kinds-probe",
            "ownerReferences": [
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "InferenceService",
                    "name": "probe",
                    "uid": "00000000-0000-0000-0000-000000000000",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "selector": {"matchLabels": {"app": "probe"}},
            "template": {
                "metadata": {"labels": {"app": "probe"}},
                "spec": {"containers": [{"name": "probe", "image": "probe"}]},
            },
        },
    }
    status, _ = plane.raw(
        "POST", path("apps/v1/deployments", namespace) + "?dryRun=All", probe, token=token
    )
    return status == 201


@dataclass
class Cluster:
    plane: ControlPlane
    folder: pathlib.Path
    webhook_port: int
    operator_kubeconfig: pathlib.Path
    #: The tier's GPU nodes (``kwok_nodes``), once they run.
    nodes: KwokNodes | None = None

    @classmethod
    def install(
        cls,
        plane: ControlPlane,
        folder: pathlib.Path,
        base: pathlib.Path = ROOT / "manifests",
        watched: str = "default",
    ) -> Cluster:
        """The shipped install's three commands: ``kubectl apply -k manifests/crds/``,
        ``kubectl apply -k manifests/namespace/``, then ``kubectl apply -k`` of the operator
        (manifests/kustomization.yaml, or the overlay ``base``) through an overlay that points
        the webhook at loopback, after the LeaderWorkerSet project's own CRDs; a kubeconfig with
        a token of the operator's ServiceAccount (``watched``: a namespace where it may
        write)."""
        install_crds(plane)
        plane.kubectl("apply", "-k", str(ROOT / "manifests" / "crds"))
        plane.kubectl("apply", "-k", str(ROOT / "manifests" / "namespace"))
        port = kept_port()  # the webhook's, for the whole session
        overlay = loopback_overlay(folder / "install", port, base)
        plane.kubectl("apply", "-k", str(overlay))
        plane.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
        token = plane.token("ome-operator", "ome")
        eventually(lambda: _owner_kinds_mapped(plane, token, watched), timeout=60, interval=0.5)
        kubeconfig = write_kubeconfig(
            folder / "operator.kubeconfig", plane.url, plane.ca_file, token
        )
        return cls(plane, folder, port, kubeconfig)

    # -- reading and writing -----------------------------------------------------------------

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        status, found = self.plane.raw("GET", path(resource, namespace, name))
        if status == 404:
            return None
        assert status == 200, f"GET {resource} {namespace}/{name}: HTTP {status}: {found}"
        return found

    def stored(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        found = self.get(resource, namespace, name)
        assert found is not None, f"no {resource} {namespace}/{name}"
        return found

    def list(
        self, resource: str, namespace: str | None = None, selector: str | None = None
    ) -> list[dict[str, Any]]:
        """The items, each with its kind and apiVersion (a real list leaves them out)."""
        query = f"?labelSelector={selector}" if selector else ""
        listed = self.plane.request("GET", path(resource, namespace) + query)
        kind = listed["kind"].removesuffix("List")
        return [
            {"apiVersion": listed["apiVersion"], "kind": kind, **item} for item in listed["items"]
        ]

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        body: dict[str, Any],
        *,
        subresource: str | None = None,
        strategic: bool = False,
    ) -> dict[str, Any]:
        """A merge patch (a strategic one for built-in kinds' lists merged by key)."""
        kind = "strategic-merge-patch" if strategic else "merge-patch"
        return self.plane.request(
            "PATCH",
            path(resource, namespace, name) + (f"/{subresource}" if subresource else ""),
            body,
            content_type=f"application/{kind}+json",
        )

    def delete(self, resource: str, namespace: str | None, name: str) -> None:
        status, answer = self.plane.raw("DELETE", path(resource, namespace, name))
        assert status in (200, 202, 404), f"DELETE {resource} {namespace}/{name}: {answer}"

    def apply(self, *manifests: dict[str, Any], check: bool = True) -> Any:
        """``kubectl apply -f -`` as the admin: the webhook answers, kubectl prints it."""
        text = yaml.safe_dump_all(list(manifests), sort_keys=False)
        return self.plane.kubectl("apply", "-f", "-", stdin=text, check=check)

    def namespace(self, name: str) -> None:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        self.plane.request("POST", path("v1/namespaces"), namespace)

    # -- what the operator did ---------------------------------------------------------------

    def operator_requests(
        self, mark: int = 0, verbs: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        return user_requests(self.plane.audit_since(mark), OPERATOR_USER, verbs)

    def operator_writes(self, mark: int = 0, namespace: str | None = None) -> list[str]:
        """``verb resource namespace/name`` of every write the operator sent since ``mark``."""
        found = []
        for record in self.operator_requests(mark, WRITE_VERBS):
            ref = record.get("objectRef") or {}
            if namespace is not None and ref.get("namespace") != namespace:
                continue
            if ref.get("resource") == "events":
                where = f"{ref.get('namespace')}"
            else:
                where = f"{ref.get('namespace')}/{ref.get('name')}"
            resource = ref.get("resource", "") + (
                f"/{ref['subresource']}" if ref.get("subresource") else ""
            )
            found.append(f"{record['verb']} {resource} {where}")
        return found

    def quiet_writes(
        self, namespace: str, window: float = 4.0, *, since: int | None = None
    ) -> list[str]:
        """The operator's writes in ``namespace`` until ``window`` seconds from now, from
        ``since`` (an audit mark taken before the change that causes them: the operator's first
        write may land before this call) or from now."""
        mark = self.plane.audit_mark() if since is None else since
        time.sleep(window)
        return self.operator_writes(mark, namespace)

    def service_references(self) -> list[str]:
        """What in the cluster would make the API server dial a Service somewhere else than
        127.0.0.0/8: each webhook (``<configuration>/<webhook>``) that calls a Service, and
        each APIService (``<name> -> <namespace>/<service>``, with why) whose Service is
        missing, an ExternalName, or has a ClusterIP outside 127.0.0.0/8. An APIService on a
        loopback ClusterIP (``resource_metrics``) is allowed: the aggregator dials that IP."""
        found = []
        for resource in (VWC, MWC):
            for config in self.list(resource):
                for hook in config.get("webhooks") or []:
                    if "service" in (hook.get("clientConfig") or {}):
                        found.append(f"{config['metadata']['name']}/{hook['name']}")
        for api_service in self.list(APISERVICE):
            ref = (api_service.get("spec") or {}).get("service")
            if ref:
                where = f"{api_service['metadata']['name']} -> {ref['namespace']}/{ref['name']}"
                found += [f"{where} ({why})" for why in self._off_loopback(ref)]
        return found

    def _off_loopback(self, ref: dict[str, Any]) -> list[str]:
        """Why the Service ``ref`` names would be dialled off loopback (nothing when not)."""
        service = self.get(SERVICE, ref["namespace"], ref["name"])
        if service is None:
            return ["no such Service"]
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return [f"ExternalName {spec.get('externalName')}"]
        address = spec.get("clusterIP") or ""
        try:
            loopback = ipaddress.ip_address(address) in LOOPBACK
        except ValueError:
            loopback = False
        return [] if loopback else [f"ClusterIP {address or 'none'}"]


def owners(obj: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(kind, name, controller) of each owner reference."""
    return [
        (ref["kind"], ref["name"], bool(ref.get("controller")))
        for ref in obj["metadata"].get("ownerReferences") or []
    ]
