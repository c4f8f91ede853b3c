"""Errors as the API server words them, and the faults tests inject.

An ``api_error`` is answered as a ``kind: Status`` body (``ApiServerLikeEmulator``
renders it without kmock's traceback). A ``Fault`` is answered before the emulator changes
any state, unlike a kmock DSL reaction, which answers after the write was stored.
"""

import dataclasses

import kmock

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def api_error(status: int, message: str, reason: str = "", **details: str) -> kmock.KubernetesError:
    """An error answered as the API server's ``kind: Status`` body."""
    reason = reason or _REASONS.get(status, "Unknown")
    return kmock.KubernetesError(status=status, reason=reason, message=message, details=details)


def not_found(resource: kmock.resource, name: str) -> kmock.KubernetesError:
    """The API server's NotFound: ``<plural>.<group> "<name>" not found``."""
    details = {"name": name, "group": resource.group or "", "kind": resource.plural or ""}
    return api_error(404, f'{qualified(resource)} "{name}" not found', "NotFound", **details)


def already_exists(resource: kmock.resource, name: str) -> kmock.KubernetesError:
    details = {"name": name, "group": resource.group or "", "kind": resource.plural or ""}
    message = f'{qualified(resource)} "{name}" already exists'
    return api_error(409, message, "AlreadyExists", **details)


def qualified(resource: kmock.resource) -> str:
    """``<plural>.<group>``, or the plural alone for the core group."""
    return f"{resource.plural}.{resource.group}" if resource.group else str(resource.plural)


def status_body(exc: kmock.KubernetesError) -> dict[str, object]:
    status: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": exc.message or "",
        "reason": exc.reason or "",
        "code": exc.status,
    }
    if exc.details:
        status["details"] = exc.details
    return status


@dataclasses.dataclass
class Fault:
    """The next ``times`` matching requests get ``status`` (``None``: none) after ``delay``.

    Every criterion left ``None`` matches anything; ``hits`` counts the faults answered. With
    ``cut_after`` (watches only) the watch is answered, then cut after a number of events drawn
    from that range: it ends, or with ``status`` it ends with an ERROR event of that code.
    """

    status: int | None
    action: kmock.action | None = None
    method: kmock.method | None = None
    resource: kmock.resource | None = None
    subresource: str | None = None
    times: int = 1
    delay: float = 0.0
    probability: float = 1.0
    message: str | None = None
    cut_after: tuple[int, int] | None = None
    hits: int = 0

    def matches(self, request: kmock.Request) -> bool:
        return (
            (self.action is None or request.action == self.action)
            and (self.method is None or request.method == self.method)
            and (self.resource is None or self.resource.check(request.resource))
            and (self.subresource is None or request.subresource == self.subresource)
        )

    def error(self) -> kmock.KubernetesError:
        assert self.status is not None
        return api_error(self.status, self.message or f"injected fault: HTTP {self.status}")

    def error_event(self) -> dict[str, object]:
        """The watch event that ends a cut watch with ``status`` (410: its version is gone)."""
        return {"type": "ERROR", "object": status_body(self.error())}
