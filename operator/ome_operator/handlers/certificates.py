"""The webhook's certificate files: mounted (``--webhook-cert-dir``), or managed by the operator.

Managed, the certificate comes from the Secret of ``cluster.serving_certificates``; it is written
to a private folder that kopf's webhook server reloads when the files change, and it is checked
again every ``CHECK_INTERVAL`` (renewed before it expires; the CA bundle re-injected if someone
removed it). Mounted, the files are the cert-manager's (or anyone's) to renew, and kopf reloads
them just the same; nothing is patched.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import pathlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from ..cluster.api import KubeApi
from ..cluster.serving_certificates import ServingCertificate, ensure_certificate, inject_ca_bundle
from ..settings import RunOptions

__all__ = ["CHECK_INTERVAL", "ManagedCertificate", "webhook_hosts"]

logger = logging.getLogger("ome_operator.certificates")

#: Seconds between checks of the managed certificate (renewal, CA bundle): two reads, so that a
#: webhook configuration created after the operator started gets its CA bundle within a minute.
CHECK_INTERVAL = 60.0

#: The Service that fronts the webhook (manifests/operator/services.yaml).
WEBHOOK_SERVICE = "ome-webhook-server"


def webhook_hosts(options: RunOptions) -> list[str]:
    """The names the certificate covers: ``--webhook-host``, the webhook Service, loopback."""
    service = f"{WEBHOOK_SERVICE}.{options.operator_namespace}.svc"
    hosts = [options.webhook_host] if options.webhook_host else []
    hosts += [service, f"{service}.cluster.local", "localhost", "127.0.0.1"]
    return list(dict.fromkeys(hosts))


def _write(path: pathlib.Path, data: bytes) -> None:
    """Replace ``path`` whole, so the webhook server never reads half a file."""
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.chmod(0o600)
    os.replace(partial, path)


@dataclass
class ManagedCertificate:
    api: Callable[[], KubeApi]
    options: RunOptions
    folder: pathlib.Path = field(
        default_factory=lambda: pathlib.Path(tempfile.mkdtemp(prefix="ome-webhook-"))
    )
    _served: ServingCertificate | None = None

    @property
    def certfile(self) -> str:
        return str(self.folder / "tls.crt")

    @property
    def keyfile(self) -> str:
        return str(self.folder / "tls.key")

    def refresh(self) -> None:
        """Read (issue, renew) the certificate, write its files and inject the CA bundle."""
        options, api = self.options, self.api()
        now = datetime.datetime.now(datetime.UTC)
        found = ensure_certificate(
            api, options.operator_namespace, options.webhook_secret, webhook_hosts(options), now
        )
        if found != self._served:
            _write(self.folder / "tls.key", found.key)
            _write(self.folder / "tls.crt", found.cert)
            self._served = found
        inject_ca_bundle(api, options.webhook_configuration, found.cert)

    async def keep_fresh(self, interval: float = CHECK_INTERVAL) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await asyncio.to_thread(self.refresh)
            except Exception as exc:  # the next check tries again; serving goes on meanwhile
                logger.error(
                    "Failed to check the webhook certificate",
                    extra={"error": str(exc), "retryIn": interval},
                )
