"""The admission webhook called by the API server itself, as kubectl shows its answers, with the
serving certificate and CA bundle the operator manages (or the mounted ones it is given); with
no replica answering, a runtime's delete still goes through (failurePolicy Ignore) and a create
is refused (failurePolicy Fail)."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509

from ome_operator.cluster.serving_certificates import issue_certificate
from ome_operator.handlers.certificates import webhook_hosts
from ome_operator.settings import RunOptions
from tests.builders import runtime_manifest
from tests.controlplane.conftest import start_operator
from tests.controlplane.scenarios import admitted, isvc, model, runtime
from tests.support.installed_cluster import ISVC, SECRET, VWC, Cluster, eventually

pytestmark = pytest.mark.controlplane

DENIED = (
    'Error from server: error when creating "STDIN": admission webhook '
    '"{webhook}.ome-webhook-server.validator" denied the request: {message}\n'
)
SECRET_NAME = "ome-webhook-server-cert"
WEBHOOKS = [
    "inferenceservice.ome-webhook-server.validator",
    "clusterservingruntime.ome-webhook-server.validator",
    "servingruntime.ome-webhook-server.validator",
    "clusterservingruntime-delete.ome-webhook-server.validator",
    "servingruntime-delete.ome-webhook-server.validator",
]
#: kubectl's line for a write the API server refused because no replica answered its webhook.
UNANSWERED = (
    'Error from server (InternalError): error when creating "STDIN": Internal error occurred: '
    'failed calling webhook "{webhook}.ome-webhook-server.validator": failed to call webhook: '
    'Post "https://127.0.0.1:{port}/validate-{webhook}?timeout=10s": dial tcp 127.0.0.1:{port}: '
    "connect: connection refused\n"
)


def _bundles(cluster: Cluster) -> dict[str, str]:
    config = cluster.stored(VWC, None, "ome-webhook-server")
    return {h["name"]: h["clientConfig"].get("caBundle", "") for h in config["webhooks"]}


def _secret_certificate(cluster: Cluster) -> str:
    return cluster.stored(SECRET, "ome", SECRET_NAME)["data"]["tls.crt"]


def _denial(cluster: Cluster, manifest: dict) -> tuple[int, str]:
    done = cluster.apply(manifest, check=False)
    return done.returncode, done.stderr


def test_a_denial_reads_as_kubectl_prints_it(cluster, namespace, operator):
    manifest = isvc(namespace, model=None)

    assert _denial(cluster, manifest) == (
        1,
        DENIED.format(
            webhook="inferenceservice",
            message="at least one of spec.model or spec.runtime must be set",
        ),
    )
    assert cluster.get(ISVC, namespace, "chat") is None


def test_a_warning_reads_as_kubectl_prints_it(cluster, namespace, operator):
    cluster.apply(model(namespace), runtime(namespace))
    manifest = isvc(namespace)

    done = eventually(lambda: (d := cluster.apply(manifest, check=False)).returncode == 0 and d)

    assert done.stderr == "Warning: Runtime vllm will be auto-selected for model llama\n"
    assert done.stdout == "inferenceservice.ome.io/chat created\n"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param(
            "3b-llama",
            'metadata.name "3b-llama" must be a DNS-1035 label (lower case letters, digits and '
            "'-', starting with a letter and ending with a letter or digit): it names the "
            "InferenceService's Services",
            id="a name starting with a digit makes no Service name",
        ),
        pytest.param(
            "llama.v2",
            'metadata.name "llama.v2" must be a DNS-1035 label (lower case letters, digits and '
            "'-', starting with a letter and ending with a letter or digit): it names the "
            "InferenceService's Services",
            id="a dotted name makes no Service name",
        ),
        pytest.param(
            "l" * 64,
            "metadata.name must be no more than 63 characters (got 64): it is the value of the "
            "ome.io/inferenceservice label on every object the InferenceService owns",
            id="a 64-character name makes no label value",
        ),
    ],
)
def test_a_name_the_server_would_refuse_for_its_objects_is_denied(
    cluster, namespace, operator, name, message
):
    cluster.apply(model(namespace), runtime(namespace))

    assert _denial(cluster, isvc(namespace, name)) == (
        1,
        DENIED.format(webhook="inferenceservice", message=message),
    )


def test_a_runtime_naming_unknown_accelerator_classes_is_denied(cluster, namespace, operator):
    manifest = runtime(namespace, "gpu")
    manifest["spec"]["acceleratorRequirements"] = {"acceleratorClasses": ["h100", "h200"]}

    assert _denial(cluster, manifest) == (
        1,
        DENIED.format(
            webhook="servingruntime",
            message="unknown accelerator classes referenced in AcceleratorRequirements: "
            "[h100 h200]",
        ),
    )


def test_the_operator_keeps_its_certificate_in_a_secret_and_injects_the_ca_bundle(
    cluster, namespace, operator
):
    secret = cluster.stored(SECRET, "ome", SECRET_NAME)

    assert secret["type"] == "kubernetes.io/tls"
    assert secret["data"]["ca.crt"] == secret["data"]["tls.crt"]
    assert _bundles(cluster) == dict.fromkeys(WEBHOOKS, secret["data"]["tls.crt"])
    certificate = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(n.value) for n in names] == [
        "ome-webhook-server.ome.svc",
        "ome-webhook-server.ome.svc.cluster.local",
        "localhost",
        "127.0.0.1",
    ]


def _certificate_requests(cluster, mark) -> list[dict]:
    """The operator's requests about its certificate: Secrets and webhook configurations, but
    not its look at OME's webhook configurations (``<kind>.ome.io``) at start."""
    return [
        r
        for r in cluster.operator_requests(mark)
        if (ref := r.get("objectRef") or {}).get("resource")
        in ("secrets", "validatingwebhookconfigurations")
        and not (ref.get("name") or "").endswith(".ome.io")
    ]


def test_a_restart_reuses_the_certificate_and_writes_neither_secret_nor_webhooks(
    cluster, namespace
):
    first = start_operator(cluster, "first-of-two")
    before = (_secret_certificate(cluster), _bundles(cluster))
    assert first.stop() == 0
    mark = cluster.plane.audit_mark()

    second = start_operator(cluster, "second-of-two")
    try:
        assert (_secret_certificate(cluster), _bundles(cluster)) == before
        requests = _certificate_requests(cluster, mark)
        touched = [f"{r['verb']} {r['objectRef']['resource']}" for r in requests]
        assert touched == ["get secrets", "get validatingwebhookconfigurations"]
        assert _denial(cluster, isvc(namespace, model=None))[0] == 1  # still answering
    finally:
        assert second.stop() == 0


def test_a_certificate_near_its_end_is_renewed_and_the_ca_bundle_follows(cluster, namespace):
    hosts = webhook_hosts(RunOptions())
    old = issue_certificate(hosts, datetime.datetime.now(datetime.UTC) - datetime.timedelta(340))
    encoded = base64.b64encode(old.cert).decode()
    key = base64.b64encode(old.key).decode()
    cluster.patch(
        SECRET,
        "ome",
        SECRET_NAME,
        {"data": {"tls.crt": encoded, "tls.key": key, "ca.crt": encoded}},
    )

    process = start_operator(cluster, "renewing")
    try:
        renewed = _secret_certificate(cluster)
        assert renewed != encoded
        assert _bundles(cluster) == dict.fromkeys(WEBHOOKS, renewed)
        certificate = x509.load_pem_x509_certificate(base64.b64decode(renewed))
        left = certificate.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
        assert datetime.timedelta(days=364) < left <= datetime.timedelta(days=365)
        assert _denial(cluster, isvc(namespace, model=None))[0] == 1
        renewed_logs = "Renewed the webhook certificate"
        renewals = [r for r in process.records() if r["message"] == renewed_logs]
        assert [r["because"].split(" at ")[0] for r in renewals] == ["it expires"]
    finally:
        assert process.stop() == 0


def test_a_mounted_certificate_wins_and_nothing_is_patched(cluster, namespace, tmp_path):
    mounted = issue_certificate(["127.0.0.1"], datetime.datetime.now(datetime.UTC))
    (tmp_path / "tls.crt").write_bytes(mounted.cert)
    (tmp_path / "tls.key").write_bytes(mounted.key)
    bundle = base64.b64encode(mounted.cert).decode()
    config = cluster.stored(VWC, None, "ome-webhook-server")
    for hook in config["webhooks"]:
        hook["clientConfig"]["caBundle"] = bundle  # what cert-manager's CA injector does
    cluster.plane.request("PUT", f"/apis/{VWC}/ome-webhook-server", config)
    mark = cluster.plane.audit_mark()

    process = start_operator(cluster, "mounted", f"--webhook-cert-dir={tmp_path}")
    try:
        denial = _denial(cluster, isvc(namespace, model=None))
        assert denial[0] == 1, denial
        assert "at least one of spec.model or spec.runtime must be set" in denial[1]
        touched = [r["verb"] for r in _certificate_requests(cluster, mark)]
        assert touched == []
        assert _bundles(cluster) == dict.fromkeys(WEBHOOKS, bundle)
    finally:
        assert process.stop() == 0


def test_no_webhook_configuration_references_a_service(cluster):
    assert cluster.service_references() == []
    config = cluster.stored(VWC, None, "ome-webhook-server")
    assert {h["clientConfig"]["url"].split("/validate-")[0] for h in config["webhooks"]} == {
        f"https://127.0.0.1:{cluster.webhook_port}"
    }


def test_the_webhook_is_still_called_after_admitting(cluster, namespace, operator):
    cluster.apply(model(namespace), runtime(namespace))
    admitted(cluster, isvc(namespace))
    changed = isvc(namespace)
    changed["spec"]["runtime"] = {"name": "missing", "kind": "ServingRuntime"}

    code, text = _denial(cluster, changed)

    assert code == 1
    assert "denied the request" in text


@pytest.mark.parametrize(
    ("resource", "cluster_scoped"),
    [
        pytest.param("servingruntime", False, id="a ServingRuntime"),
        pytest.param("clusterservingruntime", True, id="a ClusterServingRuntime"),
    ],
)
def test_with_no_replica_answering_a_runtime_is_deleted_but_none_is_created(
    cluster, namespace, resource, cluster_scoped
):
    name = f"{namespace}-gone"
    manifest = runtime_manifest(name, cluster=cluster_scoped, namespace=namespace, disabled=True)
    process = start_operator(cluster, f"before-{resource}-delete")
    try:
        eventually(lambda: cluster.apply(manifest, check=False).returncode == 0)
    finally:
        assert process.stop() == 0
    scope = [] if cluster_scoped else ["-n", namespace]
    another = runtime_manifest(f"{name}-new", cluster=cluster_scoped, namespace=namespace)

    deleted = cluster.plane.kubectl("delete", resource, name, *scope, check=False)
    created = cluster.apply(another, check=False)

    assert (deleted.returncode, deleted.stderr, deleted.stdout) == (
        0,
        "",
        f'{resource}.ome.io "{name}" deleted\n',
    )
    assert (created.returncode, created.stderr) == (
        1,
        UNANSWERED.format(webhook=resource, port=cluster.webhook_port),
    )
