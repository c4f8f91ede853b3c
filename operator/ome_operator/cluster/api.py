"""The one transport to the API server, for the operator and the CLI alike: a small REST client
over the official ``kubernetes`` ApiClient (its configuration, credentials and connection pool).

Objects stay plain dicts end to end (no model deserialisation). Every failure is one of the typed
errors of ``errors`` (``NotFound``, ``Conflict``, ``Gone``, ``Refused``, ``Unreachable``...)
carrying the HTTP status and the API server's message. Every request is counted by its verb and
answer (``on_request``: the operator's metrics count them).

Every request is sent once: urllib3's own retries (three, each waiting for the whole read
timeout) are off, as the callers retry with backoff and a leader must learn within its renew
deadline that the API server does not answer. A client given a ``fence`` (the controllers',
under leader election) asks it immediately before each write goes on the wire, and a write the
fence refuses is never sent (docs/configuration.md, "Leader election").
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import urllib3
from kubernetes import client as k8s_client

from ..models.object_metadata import metadata_of
from .errors import NotFound, TimedOut, Unreachable, status_error
from .fenced_sends import arm, fence_connections
from .resources import resource_of

__all__ = [
    "Decoder",
    "KubeApi",
    "RequestRecorder",
    "WriteFence",
    "newer_version",
    "object_path",
    "resource_version",
]


def object_path(obj: Mapping[str, Any], subresource: str | None = None) -> str:
    meta = obj["metadata"]
    path = f"{resource_of(obj).collection(meta.get('namespace'))}/{meta['name']}"
    return f"{path}/{subresource}" if subresource else path


def resource_version(obj: Mapping[str, Any]) -> str | None:
    return metadata_of(obj).get("resourceVersion")


def newer_version(version: str | None, than: str | None) -> bool:
    """Whether resourceVersion ``version`` comes after ``than``. Only integer versions, as
    etcd-backed servers issue them, compare; any other form is never newer."""
    try:
        return int(version or "") > int(than or "")
    except ValueError:
        return False


#: Turns an answer's body into its JSON value; raises ValueError for one that is not JSON.
Decoder = Callable[[bytes], Any]

#: A request timeout as the client library takes it: total seconds, (connect, read), or None.
Timeout = float | tuple[float, float] | None

#: Told of every request: its verb (the HTTP method, ``WATCH`` for a watch stream) and the HTTP
#: status of its answer (0: no answer came).
RequestRecorder = Callable[[str, int], None]

#: Asked immediately before each write (any request but a GET) is sent, with its method and
#: path: raises (an ``ApiError``) to refuse it, else answers how many seconds the write may wait
#: for its answer (a write still unanswered then is abandoned, its connection reset).
WriteFence = Callable[[str, str], float]

#: Seconds credentials are reused before the configuration is asked again (it refreshes them).
CREDENTIALS_SECONDS = 10.0

#: The verb a watch stream is counted under (its HTTP method is GET).
_WATCH = "WATCH"


def _json(body: bytes) -> Any:
    return json.loads(body)


class KubeApi:
    """JSON in, JSON out; one place for timeouts, auth, decoding and error classification.

    ``decode`` reads every answer's body (the CLI's refuses bodies no API server sends);
    ``timeout`` bounds each request; ``on_request`` counts each; ``header_lines`` are sent with
    each, one line per pair; ``fence`` is asked before each write; ``user_agent`` names the
    client in the API server's audit log.
    """

    def __init__(
        self,
        api_client: k8s_client.ApiClient,
        timeout: Timeout = (5, 30),
        *,
        decode: Decoder = _json,
        on_request: RequestRecorder | None = None,
        header_lines: Iterable[tuple[str, str]] = (),
        fence: WriteFence | None = None,
        user_agent: str | None = None,
    ):
        self._client = api_client
        #: Headers sent once per value (the CLI's impersonation: one line per group).
        self._header_lines: tuple[tuple[str, str], ...] = tuple(header_lines)
        self._timeout = timeout
        self._connections: Any = None
        #: (until when, the credential headers) read from the configuration.
        self._auth: tuple[float, tuple[tuple[str, str], ...]] | None = None
        self._decode = decode
        self._on_request = on_request
        self._fence = fence
        self._user_agent = user_agent

    @property
    def host(self) -> str:
        return str(self._client.configuration.host)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        query: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        sent = self._send(method, path, body, content_type=content_type, query=query)
        return self._answer(method, path, sent)

    def open_stream(
        self, path: str, query: Mapping[str, str], *, read_timeout: float
    ) -> urllib3.BaseHTTPResponse:
        """A GET whose body the caller reads as it arrives (a watch); the caller closes it."""
        response = self._send(
            "GET", path, None, query=query, read_timeout=read_timeout, verb=_WATCH
        )
        if response.status >= 400:
            self._answer("GET", path, response)  # raises the failure
        return response

    def _send(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        content_type: str = "application/json",
        query: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        verb: str | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """The response once its status came (its body unread); counted under ``verb``
        (default: ``method``).

        Sent through the client library's connection pool with its configuration's
        credentials (refreshed as it refreshes them) and default headers, but not through its
        request pipeline: the bodies are plain JSON already, and that pipeline's per-request
        work (serialising models, re-reading the configuration) was half the operator's CPU.
        """
        headers = urllib3.HTTPHeaderDict(self._client.default_headers)
        headers["Accept"] = "application/json"
        if self._user_agent:
            headers["User-Agent"] = self._user_agent
        for name, value in self._header_lines:
            headers.add(name, value)
        for name, value in self._credentials():
            headers[name] = value
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = json.dumps(body).encode()
        target = path + ("?" + urllib.parse.urlencode(list(query.items())) if query else "")
        fence = self._fence if method != "GET" else None
        if fence is not None:
            wait = fence(method, path)
            read_timeout = min(wait, read_timeout or _read_seconds(self._timeout) or wait)
            arm(lambda: fence(method, path))
        try:
            response = self._pool().urlopen(
                method,
                target,
                body=payload,
                headers=headers,
                timeout=self._urllib3_timeout(read_timeout),
                preload_content=False,
                redirect=False,
                retries=False,
            )
        except urllib3.exceptions.HTTPError as exc:
            if self._on_request is not None:
                self._on_request(verb or method, 0)
            raise _transport_failure(method, path, exc) from _answerless(exc)
        finally:
            arm(None)
        if self._on_request is not None:
            self._on_request(verb or method, response.status)
        return response

    def _credentials(self) -> tuple[tuple[str, str], ...]:
        """The bearer-token header, as the configuration gives it, read again every
        ``CREDENTIALS_SECONDS``: the client library refreshes expiring credentials (a kubeconfig's
        exec plugin, a projected ServiceAccount token) when it is asked, and asking re-reads the
        whole kubeconfig, which per request was a tenth of the operator's CPU."""
        now = time.monotonic()
        if self._auth is None or now >= self._auth[0]:
            configuration = self._client.configuration
            auth = configuration.auth_settings().get("BearerToken")
            found = ((auth["key"], auth["value"]),) if auth and auth.get("value") else ()
            self._auth = (now + CREDENTIALS_SECONDS, found)
        return self._auth[1]

    def _pool(self) -> urllib3.HTTPConnectionPool | urllib3.PoolManager:
        """The connection pool of the API server: looked up once, not per request (a proxied
        client keeps going through its manager, which needs whole URLs; its writes are fenced
        before the request only, not again at the send)."""
        if self._connections is None:
            manager = self._client.rest_client.pool_manager
            host = self._client.configuration.host
            if isinstance(manager, urllib3.ProxyManager):
                self._connections = _WholeUrls(manager, host)
            else:
                self._connections = manager.connection_from_url(host)
                if self._fence is not None:
                    fence_connections(self._connections)
        return self._connections

    def _urllib3_timeout(self, read_timeout: float | None) -> urllib3.Timeout | None:
        """This client's timeout, with ``read_timeout`` for the reads when given."""
        timeout = self._timeout
        if read_timeout is not None:
            connect = timeout[0] if isinstance(timeout, tuple) else timeout
            timeout = (connect, read_timeout) if connect else read_timeout
        if not timeout:
            return None
        if isinstance(timeout, tuple):
            return urllib3.Timeout(connect=timeout[0], read=timeout[1])
        return urllib3.Timeout(total=timeout)

    def get(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        return self.request("GET", object_path(obj))

    def create(self, obj: Mapping[str, Any], *, manager: str | None = None) -> dict[str, Any]:
        """Create ``obj`` (as field manager ``manager``: by default, the user agent's)."""
        namespace = obj["metadata"].get("namespace")
        query = {"fieldManager": manager} if manager else None
        return self.request("POST", resource_of(obj).collection(namespace), dict(obj), query=query)

    def merge_patch(
        self, obj: Mapping[str, Any], patch: Mapping[str, Any], subresource: str | None = None
    ) -> dict[str, Any]:
        return self.request(
            "PATCH",
            object_path(obj, subresource),
            dict(patch),
            content_type="application/merge-patch+json",
        )

    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        manager: str,
        force: bool = True,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` (its full intent) as field manager ``manager``; with
        ``force``, fields another manager owns are taken (``FieldConflict`` otherwise)."""
        query = {"fieldManager": manager, **({"force": "true"} if force else {})}
        return self.request(
            "PATCH",
            object_path(obj, subresource),
            dict(obj),
            content_type="application/apply-patch+yaml",
            query=query,
        )

    def json_patch(
        self, obj: Mapping[str, Any], operations: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """An RFC 6902 JSON patch (a failed ``test`` operation fails the whole patch)."""
        return self.request(
            "PATCH", object_path(obj), operations, content_type="application/json-patch+json"
        )

    def strategic_merge_patch(
        self, obj: Mapping[str, Any], patch: Mapping[str, Any], subresource: str | None = None
    ) -> dict[str, Any]:
        """A patch that merges list items by their key (built-in kinds only)."""
        return self.request(
            "PATCH",
            object_path(obj, subresource),
            dict(patch),
            content_type="application/strategic-merge-patch+json",
        )

    def delete(self, obj: Mapping[str, Any], *, uid: str | None = None) -> None:
        """Delete ``obj``; one already gone is no failure. With ``uid``, only while the object
        of that name is that one (a precondition: the server answers Conflict otherwise)."""
        body = {"preconditions": {"uid": uid}} if uid else None
        with contextlib.suppress(NotFound):
            self.request("DELETE", object_path(obj), body)

    def _answer(self, method: str, path: str, response: Any) -> Any:
        """The decoded body of a finished response, or its failure as a typed ``ApiError``."""
        try:
            body = response.data or b""
        except urllib3.exceptions.HTTPError as exc:
            raise _transport_failure(method, path, exc) from _answerless(exc)
        if response.status < 400:
            return self._decode(body) if body.strip() else {}
        try:
            data = self._decode(body) if body.strip() else {}
        except (ValueError, RecursionError):  # no Status to read
            data = {}
        raise status_error(
            response.status,
            data if isinstance(data, dict) else {},
            phrase=str(getattr(response, "reason", "") or ""),
            fallback=f"{method} {path}: HTTP {response.status}",
        )


class _WholeUrls:
    """A proxy manager answering ``urlopen`` with paths, as a connection pool does."""

    def __init__(self, manager: urllib3.ProxyManager, host: str) -> None:
        self._manager, self._host = manager, host

    def urlopen(self, method: str, target: str, **options: Any) -> urllib3.BaseHTTPResponse:
        return self._manager.urlopen(method, self._host + target, **options)


def _read_seconds(timeout: Timeout) -> float | None:
    """The read part of a client timeout (its total when it is one number)."""
    return timeout[1] if isinstance(timeout, tuple) else timeout


def _answerless(exc: Exception) -> BaseException:
    """Why a request got no answer: what urllib3's retry wrapper gave up on, else ``exc``."""
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        return exc.reason
    return exc


def _transport_failure(method: str, path: str, exc: Exception) -> Unreachable:
    """No answer (``TimedOut`` past the timeout); raised from ``_answerless(exc)``, from which
    the CLI words it as kubectl does."""
    cause = _answerless(exc)
    # urllib3 counts a refused connection (NewConnectionError) as a kind of timeout.
    timed_out = isinstance(cause, urllib3.exceptions.TimeoutError) and not isinstance(
        cause, urllib3.exceptions.NewConnectionError
    )
    kind = TimedOut if timed_out else Unreachable
    return kind(0, f"{method} {path}: {type(exc).__name__}: {exc}")
