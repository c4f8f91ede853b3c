"""How ``ome-operator run`` is started: flags, with their defaults (S1.10, S10)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunOptions", "parse_bind_address"]


@dataclass(frozen=True)
class RunOptions:
    #: Namespaces to watch; empty = every namespace.
    namespaces: tuple[str, ...] = ()
    #: Where the operator's own ConfigMap ``inferenceservice-config`` lives.
    operator_namespace: str = "ome"
    #: Prometheus metrics (``/metrics``); ``"0"`` disables them.
    metrics_bind_address: str = ":8080"
    #: kopf's liveness endpoint (``/healthz``); ``"0"`` disables it.
    health_probe_bind_address: str = ":8081"
    #: The admission webhook server (TLS): where it listens, and an extra name its managed
    #: certificate covers.
    webhook_port: int = 9443
    webhook_bind_address: str = "0.0.0.0"
    webhook_host: str | None = None
    #: ``tls.crt`` and ``tls.key`` for the webhook (e.g. cert-manager's). Without them the
    #: operator keeps its own certificate in ``webhook_secret`` (operator namespace) and injects
    #: its CA bundle into the ValidatingWebhookConfiguration ``webhook_configuration``.
    webhook_cert_dir: str | None = None
    webhook_secret: str = "ome-webhook-server-cert"
    webhook_configuration: str = "ome-webhook-server"
    #: Seconds between re-reads of the operator configuration.
    config_cache_ttl: float = 30.0
    #: Concurrent reconciles.
    workers: int = 4


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """``":8080"`` → ("0.0.0.0", 8080); ``"127.0.0.1:9"`` → ("127.0.0.1", 9); ``"0"`` → None."""
    if address in ("0", ""):
        return None
    host, _, port = address.rpartition(":")
    return (host or "0.0.0.0", int(port))
