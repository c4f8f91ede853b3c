"""kubectl's standard connection flags (docs/reference/cli.md, Common behaviour), parsed the way
kubectl parses them.

Pure: the flags become a Kubernetes client in ``reading.api_client_from_flags``.
"""

import dataclasses
import re

from ome_operator.cluster.objects import ReadError

__all__ = ["ConnectionFlags", "parse_request_timeout", "parse_user_extra"]


@dataclasses.dataclass(frozen=True)
class ConnectionFlags:
    """The values of kubectl's connection flags; ``None`` or empty means "not given"."""

    namespace: str | None = None
    context: str | None = None
    kubeconfig: str | None = None
    cluster: str | None = None
    user: str | None = None
    server: str | None = None
    token: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    tls_server_name: str | None = None
    insecure_skip_tls_verify: bool = False
    as_user: str | None = None
    as_uid: str | None = None
    as_groups: tuple[str, ...] = ()
    #: ``key=value`` items; a key may repeat to carry several values.
    as_user_extra: tuple[str, ...] = ()
    #: kubectl's ``--request-timeout``: ``0`` (no timeout), plain seconds, or a Go duration.
    request_timeout: str = "0"
    #: Accepted for kubectl compatibility; this CLI keeps no discovery cache.
    cache_dir: str | None = None
    #: Accepted for kubectl compatibility; responses are small JSON documents.
    disable_compression: bool = False


_TIMEOUT_ERROR = (
    "invalid timeout value. Timeout must be a single integer in seconds, "
    "or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)"
)
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_GO_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_request_timeout(text: str) -> float | None:
    """Seconds to wait for one request, or ``None`` for no timeout (kubectl's ``0``)."""
    text = text.strip()
    if text.isdigit():
        seconds = float(text)
    elif text and _GO_DURATION_PART.sub("", text) == "":
        parts = _GO_DURATION_PART.findall(text)
        seconds = sum(float(number) * _GO_UNIT_SECONDS[unit] for number, unit in parts)
    else:
        raise ReadError(_TIMEOUT_ERROR)
    return seconds or None


def parse_user_extra(items: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``--as-user-extra key=value`` items grouped by key, values in flag order."""
    extra: dict[str, tuple[str, ...]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ReadError(f'invalid --as-user-extra "{item}": expected key=value')
        extra[key] = (*extra.get(key, ()), value)
    return extra
