"""A small typed-free REST client over the official ``kubernetes`` ApiClient, for the operator.

Objects stay plain dicts end to end (no model deserialisation). Every failure is an ``ApiError``
carrying the HTTP status and the API server's message; transport failures have status 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import urllib3
from kubernetes import client as k8s_client

from .resources import resource_of

__all__ = [
    "ApiError",
    "KubeApi",
    "newer_version",
    "object_path",
    "resource_version",
]


def object_path(obj: Mapping[str, Any], subresource: str | None = None) -> str:
    meta = obj["metadata"]
    path = f"{resource_of(obj).collection(meta.get('namespace'))}/{meta['name']}"
    return f"{path}/{subresource}" if subresource else path


def resource_version(obj: Mapping[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("resourceVersion")


def newer_version(version: str | None, than: str | None) -> bool:
    """Whether resourceVersion ``version`` comes after ``than``. Only integer versions, as
    etcd-backed servers issue them, compare; any other form is never newer."""
    try:
        return int(version or "") > int(than or "")
    except ValueError:
        return False


class ApiError(Exception):
    """A failed API call: ``status`` (0 for transport failures) and the server's message."""

    def __init__(
        self, status: int, message: str, reason: str = "", causes: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        #: ``details.causes[].reason`` of the server's Status, e.g. ``NamespaceTerminating``.
        self.causes = causes

    @property
    def retriable(self) -> bool:
        return self.status == 0 or self.status == 429 or self.status >= 500


class KubeApi:
    """JSON in, JSON out; one place for timeouts, auth and error classification."""

    def __init__(self, api_client: k8s_client.ApiClient, timeout: tuple[float, float] = (5, 30)):
        self._client = api_client
        self._timeout = timeout

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
        return _answer(method, path, sent)

    def open_stream(
        self, path: str, query: Mapping[str, str], *, read_timeout: float
    ) -> urllib3.BaseHTTPResponse:
        """A GET whose body the caller reads as it arrives (a watch); the caller closes it."""
        response = self._send("GET", path, None, query=query, read_timeout=read_timeout)
        if response.status >= 400:
            _answer("GET", path, response)  # raises the failure
        return response.response

    def _send(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        content_type: str = "application/json",
        query: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> Any:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        method, url, headers, payload, post = self._client.param_serialize(
            method=method,
            resource_path=path,
            query_params=list(query.items()) if query else None,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        timeout = self._timeout if read_timeout is None else (self._timeout[0], read_timeout)
        try:
            return self._client.call_api(
                method, url, headers, payload, post, _request_timeout=timeout
            )
        except urllib3.exceptions.HTTPError as exc:
            raise _transport_failure(method, path, exc) from exc

    def get(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        return self.request("GET", object_path(obj))

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        namespace = obj["metadata"].get("namespace")
        return self.request("POST", resource_of(obj).collection(namespace), dict(obj))

    def merge_patch(
        self, obj: Mapping[str, Any], patch: Mapping[str, Any], subresource: str | None = None
    ) -> dict[str, Any]:
        return self.request(
            "PATCH",
            object_path(obj, subresource),
            dict(patch),
            content_type="application/merge-patch+json",
        )

    def strategic_merge_patch(
        self, obj: Mapping[str, Any], patch: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A patch that merges list items by their key (built-in kinds only)."""
        return self.request(
            "PATCH",
            object_path(obj),
            dict(patch),
            content_type="application/strategic-merge-patch+json",
        )

    def delete(self, obj: Mapping[str, Any]) -> None:
        try:
            self.request("DELETE", object_path(obj))
        except ApiError as exc:
            if exc.status != 404:
                raise


def _answer(method: str, path: str, response: Any) -> Any:
    """The decoded body of a finished response, or its failure as an ``ApiError``."""
    try:
        response.read()
    except urllib3.exceptions.HTTPError as exc:
        raise _transport_failure(method, path, exc) from exc
    text = response.data.decode() if response.data else ""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        if response.status < 400:
            raise
        data = {}
    if response.status < 400:
        return data
    if not isinstance(data, dict):
        data = {}
    details = data.get("details") if isinstance(data.get("details"), dict) else {}
    causes = tuple(
        str(c.get("reason"))
        for c in details.get("causes") or []
        if isinstance(c, dict) and c.get("reason")
    )
    message = data.get("message") or f"{method} {path}: HTTP {response.status}"
    raise ApiError(response.status, str(message), str(data.get("reason", "")), causes)


def _transport_failure(method: str, path: str, exc: Exception) -> ApiError:
    return ApiError(0, f"{method} {path}: {type(exc).__name__}: {exc}")
