"""How ``ome-operator run`` is started: flags, with their defaults (S1.10, S10)."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["RunOptions", "RunOptionsError", "parse_bind_address", "run_option_problems"]


class RunOptionsError(ValueError):
    """A flag of ``ome-operator run`` that cannot work; the message names the flag and value."""


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


def parse_bind_address(
    address: str, flag: str = "--metrics-bind-address"
) -> tuple[str, int] | None:
    """``":8080"`` → ("0.0.0.0", 8080); ``"127.0.0.1:9"`` → ("127.0.0.1", 9); ``"0"`` → None."""
    if address in ("0", ""):
        return None
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise RunOptionsError(
            f'{flag} "{address}" is not HOST:PORT or :PORT with a port from 1 to 65535 '
            "(or 0 to disable)"
        )
    return (host or "0.0.0.0", int(port))


def _bind_address_problem(flag: str, address: str) -> str | None:
    try:
        parse_bind_address(address, flag)
    except RunOptionsError as exc:
        return str(exc)
    return None


def _cert_dir_problem(folder: str | None) -> str | None:
    if folder is None:
        return None
    missing = [f for f in ("tls.crt", "tls.key") if not os.path.isfile(os.path.join(folder, f))]
    return f'--webhook-cert-dir "{folder}" has no {" or ".join(missing)}' if missing else None


def run_option_problems(options: RunOptions) -> list[str]:
    """Why ``options`` cannot run, one sentence per flag, in flag order (empty: they can)."""
    found = [
        _bind_address_problem("--metrics-bind-address", options.metrics_bind_address),
        _bind_address_problem("--health-probe-bind-address", options.health_probe_bind_address),
        None
        if 1 <= options.webhook_port <= 65535
        else f"--webhook-port must be from 1 to 65535 (got {options.webhook_port})",
        _cert_dir_problem(options.webhook_cert_dir),
        None
        if options.config_cache_ttl > 0
        else f"--config-cache-ttl must be more than 0 seconds (got {options.config_cache_ttl:g})",
        None if options.workers >= 1 else f"--workers must be at least 1 (got {options.workers})",
    ]
    return [problem for problem in found if problem is not None]
