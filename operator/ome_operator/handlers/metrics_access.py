"""Who may read ``/metrics`` when it is served securely (``--metrics-secure``;
docs/metrics-and-alerts.md, "Who can read /metrics"), as controller-runtime's
``WithAuthenticationAndAuthorization`` filter decides:

1. no ``Authorization: Bearer <token>`` header: 401;
2. a TokenReview of the token that does not authenticate it: 401;
3. a SubjectAccessReview of the user it names (name, uid, groups, extra) for the non-resource
   URL ``/metrics``, verb ``get``, that does not allow it: 403;
4. otherwise the scrape is served. An API server that does not answer either review: 503.

Each verdict but the last is kept per token (its SHA-256: the token itself is never stored) for
``ALLOWED_SECONDS`` (allowed) or ``REFUSED_SECONDS`` (401, 403), for at most ``CACHED_TOKENS``
tokens (the oldest go first), so a Prometheus scraping every 15 s costs the API server two
reviews a minute. The endpoint is then HTTPS, with the webhook's serving certificate, read again
when its files change (``ServingContext``).
"""

from __future__ import annotations

import collections
import hashlib
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

from ..cluster.api import KubeApi
from ..cluster.credentials import kube_api
from ..cluster.errors import ApiError

__all__ = [
    "ALLOWED_SECONDS",
    "CACHED_TOKENS",
    "METRICS_PATH",
    "REFUSED_SECONDS",
    "MetricsAccess",
    "ServingContext",
    "secured_serving",
]

#: The non-resource URL a scraper must be allowed to ``get`` (the ClusterRole
#: ``ome-operator-metrics-reader`` grants it).
METRICS_PATH = "/metrics"
#: Seconds an allowed token is let through without asking again (controller-runtime keeps an
#: authentication a minute).
ALLOWED_SECONDS = 60.0
#: Seconds a refused token is refused without asking again: a grant just given shows soon.
REFUSED_SECONDS = 10.0
#: Tokens whose verdicts are kept: far more than the scrapers of one operator.
CACHED_TOKENS = 256
#: Seconds to connect and to read a review's answer: a scrape waits for it.
_REVIEW_TIMEOUT = (2.0, 5.0)
_TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

logger = logging.getLogger("ome_operator.metrics")

#: (HTTP status, the plain text answered when it is not 200).
Verdict = tuple[int, str]


class MetricsAccess:
    """The module's steps, callable with a request's ``Authorization`` header from any thread."""

    def __init__(
        self,
        api: Callable[[], KubeApi],
        *,
        clock: Callable[[], float] = time.monotonic,
        size: int = CACHED_TOKENS,
    ) -> None:
        self._api = api
        self._clock = clock
        self._size = size
        self._lock = threading.Lock()
        #: SHA-256 of a token -> (until when, its verdict); oldest first.
        self._kept: collections.OrderedDict[bytes, tuple[float, Verdict]] = (
            collections.OrderedDict()
        )

    def __call__(self, authorization: str | None) -> Verdict:
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return 401, "Unauthorized: a bearer token is required"
        key = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] > now:
                return kept[1]
        try:
            verdict = self._review(token)
        except ApiError as exc:
            logger.warning("Failed to review a metrics scrape's token", extra={"error": str(exc)})
            return 503, "Service Unavailable: the API server did not review the token"
        seconds = ALLOWED_SECONDS if verdict[0] == 200 else REFUSED_SECONDS
        with self._lock:
            self._kept.pop(key, None)
            self._kept[key] = (now + seconds, verdict)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return verdict

    def _review(self, token: str) -> Verdict:
        api = self._api()
        reviewed = api.request(
            "POST",
            _TOKEN_REVIEWS,
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            },
        )
        status = reviewed.get("status") or {}
        user = status.get("user") or {}
        if not status.get("authenticated") or not isinstance(user, dict):
            return 401, "Unauthorized: the token is not authenticated"
        spec: dict[str, Any] = {
            "user": user.get("username", ""),
            "uid": user.get("uid", ""),
            "groups": user.get("groups") or [],
            "extra": user.get("extra") or {},
            "nonResourceAttributes": {"path": METRICS_PATH, "verb": "get"},
        }
        decided = api.request(
            "POST",
            _ACCESS_REVIEWS,
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {k: v for k, v in spec.items() if v},
            },
        )
        if not (decided.get("status") or {}).get("allowed"):
            return 403, f'Forbidden: user "{spec["user"]}" may not get {METRICS_PATH}'
        return 200, ""


class ServingContext:
    """The TLS context of a certificate's files, built again once they change (a renewal)."""

    def __init__(self, certfile: str, keyfile: str) -> None:
        self._files = (certfile, keyfile)
        self._lock = threading.Lock()
        self._stamp: tuple[int, ...] | None = None
        self._context: ssl.SSLContext | None = None

    def __call__(self) -> ssl.SSLContext:
        try:
            stamp = tuple(os.stat(path).st_mtime_ns for path in self._files)
        except OSError:  # being replaced: the context of the files before
            stamp = self._stamp
        with self._lock:
            if self._context is None or stamp != self._stamp:
                context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
                context.load_cert_chain(*self._files)
                self._context, self._stamp = context, stamp
            return self._context


def secured_serving(secure: bool, server: Any, user_agent: str | None = None) -> dict[str, Any]:
    """``serve_metrics``'s ``access`` and ``tls`` for ``--metrics-secure`` (none without it):
    the reviews through a client of their own (never fenced: every replica is scraped), the
    certificate files of the webhook ``server``."""
    if not secure:
        return {}
    client: list[KubeApi] = []

    def api() -> KubeApi:
        if not client:
            client.append(kube_api(timeout=_REVIEW_TIMEOUT, user_agent=user_agent))
        return client[0]

    return {
        "access": MetricsAccess(api),
        "tls": ServingContext(str(server.certfile), str(server.pkeyfile)),
    }
