"""The test control plane's certificates: one CA (its key kept beside it, so that the tier can
sign more serving certificates, e.g. the LeaderWorkerSet controller's webhook), serving
certificates for 127.0.0.1, and the ServiceAccount key pair."""

from __future__ import annotations

import datetime
import ipaddress
import pathlib
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

CA_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ome-test-ca")])


def _pem(obj: Any) -> bytes:
    return obj.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(
        now + datetime.timedelta(days=7)
    )


def write_ca(folder: pathlib.Path) -> None:
    """``ca.crt`` and ``ca.key``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = _validity(
        x509.CertificateBuilder()
        .subject_name(CA_NAME)
        .issuer_name(CA_NAME)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    ).sign(key, hashes.SHA256())
    (folder / "ca.crt").write_bytes(_pem(ca))
    (folder / "ca.key").write_bytes(_key_pem(key))


def write_serving_certificate(
    ca_folder: pathlib.Path,
    cert_file: pathlib.Path,
    key_file: pathlib.Path,
    common_name: str,
    ips: tuple[str, ...] = ("127.0.0.1",),
    dns_names: tuple[str, ...] = ("localhost",),
) -> None:
    """A serving certificate for ``ips`` and ``dns_names``, signed by the CA in ``ca_folder``."""
    ca_key = serialization.load_pem_private_key((ca_folder / "ca.key").read_bytes(), None)
    assert isinstance(ca_key, rsa.RSAPrivateKey)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    names += [x509.DNSName(name) for name in dns_names]
    serving = _validity(
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(CA_NAME)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
    ).sign(ca_key, hashes.SHA256())
    cert_file.parent.mkdir(parents=True, exist_ok=True)
    cert_file.write_bytes(_pem(serving))
    key_file.write_bytes(_key_pem(key))


def write_service_account_keys(folder: pathlib.Path) -> None:
    """``sa.key`` and ``sa.pub``: the key pair ServiceAccount tokens are signed with."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (folder / "sa.key").write_bytes(_key_pem(key))
    (folder / "sa.pub").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def write_control_plane_certificates(folder: pathlib.Path) -> None:
    """A CA, the API server's serving certificate for 127.0.0.1, the ServiceAccount key pair."""
    write_ca(folder)
    write_serving_certificate(
        folder,
        folder / "apiserver.crt",
        folder / "apiserver.key",
        "kube-apiserver",
        ips=("127.0.0.1", "127.1.0.1"),
        dns_names=("localhost", "kubernetes.default.svc"),
    )
    write_service_account_keys(folder)
