"""The webhook's serving certificate, kept in a Secret, and the CA bundle the API server trusts.

Without ``--webhook-cert-dir`` the operator manages both itself:

- one self-signed certificate (it is its own CA) lives in the Secret ``ome-webhook-server-cert``
  of the operator's namespace (``tls.crt``, ``tls.key``, ``ca.crt``); every start and every
  renewal check reuses it while it covers the webhook's host names and has more than
  ``RENEW_BEFORE`` left, and replaces it otherwise;
- the ``caBundle`` of every webhook in the operator's ValidatingWebhookConfiguration is patched
  to that certificate when it differs (so a restart that reuses the certificate writes nothing).

A Secret written concurrently by another process wins: the update carries the resourceVersion
it read, and a conflict re-reads the Secret.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .api import KubeApi
from .errors import Conflict, NotFound

__all__ = [
    "RENEW_BEFORE",
    "VALIDITY",
    "ServingCertificate",
    "ensure_certificate",
    "inject_ca_bundle",
    "issue_certificate",
    "needs_renewal",
]

logger = logging.getLogger("ome_operator.certificates")

#: How long a certificate the operator issues is valid, and how long before its end it is renewed.
VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=30)


@dataclass(frozen=True)
class ServingCertificate:
    """PEM certificate and key; the certificate is self-signed, so it is also the CA bundle."""

    cert: bytes
    key: bytes


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def issue_certificate(hosts: Sequence[str], now: datetime.datetime) -> ServingCertificate:
    """A new self-signed certificate for ``hosts`` (the first is the common name)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )
    return ServingCertificate(
        certificate.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def needs_renewal(
    found: ServingCertificate, hosts: Sequence[str], now: datetime.datetime
) -> str | None:
    """Why ``found`` cannot be served any longer (None: it can)."""
    try:
        certificate = x509.load_pem_x509_certificate(found.cert)
        serialization.load_pem_private_key(found.key, password=None)
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, TypeError, x509.ExtensionNotFound):
        return "it is not a PEM certificate and key"
    missing = [h for h in hosts if _san(h) not in names]
    if missing:
        return f"it does not cover {', '.join(missing)}"
    if certificate.not_valid_after_utc - now < RENEW_BEFORE:
        return f"it expires at {certificate.not_valid_after_utc:%Y-%m-%dT%H:%M:%SZ}"
    return None


def _secret(namespace: str, name: str, found: ServingCertificate) -> dict[str, Any]:
    def encoded(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "ome-operator"},
        },
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": encoded(found.cert),
            "tls.key": encoded(found.key),
            "ca.crt": encoded(found.cert),
        },
    }


def _stored(secret: dict[str, Any]) -> ServingCertificate:
    data = secret.get("data") or {}
    try:
        return ServingCertificate(
            base64.b64decode(data.get("tls.crt", "")), base64.b64decode(data.get("tls.key", ""))
        )
    except ValueError:
        return ServingCertificate(b"", b"")


def ensure_certificate(
    api: KubeApi, namespace: str, name: str, hosts: Sequence[str], now: datetime.datetime
) -> ServingCertificate:
    """The certificate in Secret ``namespace/name``, issued or renewed there when it must be."""
    ref = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace}}
    for _ in range(3):
        try:
            secret = api.get(ref)
        except NotFound:
            fresh = issue_certificate(hosts, now)
            try:
                api.create(_secret(namespace, name, fresh))
            except Conflict:
                continue  # written by someone else meanwhile: read theirs
            logger.info("Issued the webhook certificate", extra={"secret": f"{namespace}/{name}"})
            return fresh
        found = _stored(secret)
        why = needs_renewal(found, hosts, now)
        if why is None:
            return found
        fresh = issue_certificate(hosts, now)
        update = _secret(namespace, name, fresh)
        update["metadata"]["resourceVersion"] = secret["metadata"]["resourceVersion"]
        try:
            api.merge_patch(update, update)
        except Conflict:
            continue
        logger.info(
            "Renewed the webhook certificate",
            extra={"secret": f"{namespace}/{name}", "because": why},
        )
        return fresh
    raise Conflict(409, f"Secret {namespace}/{name} kept changing while it was being renewed")


def inject_ca_bundle(api: KubeApi, configuration: str, ca: bytes) -> bool:
    """Set ``caBundle`` to ``ca`` on every webhook of the ValidatingWebhookConfiguration
    ``configuration`` whose bundle differs; True when it was written. A configuration that
    does not exist is logged."""
    ref = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": configuration},
    }
    try:
        found = api.get(ref)
    except NotFound:
        logger.warning(
            "No ValidatingWebhookConfiguration to inject the CA bundle into",
            extra={"validatingWebhookConfiguration": configuration},
        )
        return False
    bundle = base64.b64encode(ca).decode("ascii")
    stale = [
        hook["name"]
        for hook in found.get("webhooks") or []
        if (hook.get("clientConfig") or {}).get("caBundle") != bundle
    ]
    if not stale:
        return False
    patch = {"webhooks": [{"name": n, "clientConfig": {"caBundle": bundle}} for n in stale]}
    api.strategic_merge_patch(ref, patch)
    logger.info(
        "Injected the CA bundle",
        extra={"validatingWebhookConfiguration": configuration, "webhooks": stale},
    )
    return True
