"""A self-signed serving certificate for the webhook when none is mounted.

In a cluster the certificate comes from ``--webhook-cert-dir`` (a Secret, e.g. cert-manager's);
without one the webhook still serves TLS, with a key made at start-up.
"""

from __future__ import annotations

import datetime
import ipaddress
import pathlib
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["self_signed_certificate"]


def self_signed_certificate(hosts: list[str]) -> tuple[str, str]:
    """Write a certificate and key for ``hosts`` to a private temp dir; return their paths."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    alternatives: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alternatives.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ome-webhook-"))
    certfile, keyfile = folder / "tls.crt", folder / "tls.key"
    certfile.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    keyfile.chmod(0o600)
    return str(certfile), str(keyfile)
