"""The failures of an API call, typed by what the caller does about them.

``KubeApi`` (the one transport of the operator and the CLI) raises only these. Callers branch on
the class, never on a status number or a message::

    ApiError                  any failed call: ``status`` (0: no answer), the server's message
    ├── NotFound              404: the object (or the resource) does not exist
    ├── Conflict              409: a newer version was written meanwhile
    │   ├── AlreadyExists     a create found the name taken
    │   └── FieldConflict     an apply would change fields another field manager owns
    ├── Gone                  410: the version to resume a watch from has expired
    ├── Refused               400, 403, 413, 422: the server refuses the request as it is
    │   └── NamespaceTerminating  nothing is created in a namespace being deleted
    └── Unreachable           no answer: refused connection, timeout, broken stream
        └── TimedOut          the answer did not come within the request timeout

The Status ``reason`` and ``details.causes`` of an answer are read here, and only here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

__all__ = [
    "REFUSED_STATUSES",
    "AlreadyExists",
    "ApiError",
    "Conflict",
    "FieldConflict",
    "Gone",
    "NamespaceTerminating",
    "NotFound",
    "Refused",
    "TimedOut",
    "Unreachable",
    "api_error",
    "status_error",
]

#: Answers that a retry of the same request cannot change (bad request, forbidden, too large,
#: invalid).
REFUSED_STATUSES = frozenset({400, 403, 413, 422})


class ApiError(Exception):
    """A failed API call: ``status`` (0 without an answer) and the server's message."""

    def __init__(
        self,
        status: int,
        message: str,
        reason: str = "",
        causes: tuple[str, ...] = (),
        *,
        name: str | None = None,
        phrase: str = "",
        fields: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        #: The Status ``reason`` (``AlreadyExists``, ``Forbidden``...), "" when none was sent.
        self.reason = reason
        #: ``details.causes[].reason`` of the server's Status, e.g. ``NamespaceTerminating``.
        self.causes = causes
        #: ``details.name`` of the server's Status: the object the answer is about.
        self.name = name
        #: The HTTP reason phrase (``Not Found``), for answers that carry no message.
        self.phrase = phrase
        #: ``details.causes[].field``: the fields the answer is about (``.spec.replicas``).
        self.fields = fields
        #: Whether the server sent a message of its own (else ``message`` is made up here).
        self.from_server = False

    @property
    def retriable(self) -> bool:
        """Whether the same request may succeed later (no answer, throttled, server error)."""
        return self.status == 0 or self.status == 429 or self.status >= 500

    def reworded(self, message: str) -> Self:
        """The same failure (class and fields) with another message."""
        copy = type(self)(
            self.status,
            message,
            self.reason,
            self.causes,
            name=self.name,
            phrase=self.phrase,
            fields=self.fields,
        )
        copy.from_server = self.from_server
        return copy


class NotFound(ApiError):
    """404: what the call addresses does not exist."""


class Conflict(ApiError):
    """409: the object changed meanwhile (a failed precondition)."""


class AlreadyExists(Conflict):
    """409: a create found an object of that name."""


class FieldConflict(Conflict):
    """409: an apply without force would change fields another field manager owns
    (``fields``)."""


class Gone(ApiError):
    """410: the resource version asked for has expired; list again."""


class Refused(ApiError):
    """The server refuses the request as it is; sending it again cannot help."""


class NamespaceTerminating(Refused):
    """403: the namespace is being deleted; nothing new is created in it."""


class Unreachable(ApiError):
    """The server did not answer (status 0): ``__cause__`` holds the transport's exception."""


class TimedOut(Unreachable):
    """The server did not answer within the request timeout."""


_BY_STATUS: dict[int, type[ApiError]] = {
    404: NotFound,
    409: Conflict,
    410: Gone,
    **{status: Refused for status in REFUSED_STATUSES},
}


def _kind_of(status: int, reason: str, causes: tuple[str, ...]) -> type[ApiError]:
    if status == 409 and reason == "AlreadyExists":
        return AlreadyExists
    if status == 409 and "FieldManagerConflict" in causes:
        return FieldConflict
    if status in REFUSED_STATUSES and "NamespaceTerminating" in causes:
        return NamespaceTerminating
    return _BY_STATUS.get(status, ApiError)


def api_error(
    status: int,
    message: str | None,
    reason: str = "",
    causes: tuple[str, ...] = (),
    *,
    name: str | None = None,
    phrase: str = "",
    fallback: str = "",
    fields: tuple[str, ...] = (),
) -> ApiError:
    """The typed error for an answer with HTTP ``status``, its Status ``reason`` and its
    causes' reasons; ``fallback`` is the message when the server sent none."""
    error = _kind_of(status, reason, causes)(
        status, message or fallback, reason, causes, name=name, phrase=phrase, fields=fields
    )
    error.from_server = bool(message)
    return error


def status_error(
    code: int, status: Mapping[str, Any], *, phrase: str = "", fallback: str = ""
) -> ApiError:
    """The typed error for an answer with HTTP status ``code`` (400 or more) whose body is
    ``status``, the server's Status (empty when it sent none)."""
    details = status.get("details") if isinstance(status.get("details"), dict) else {}
    causes = [c for c in details.get("causes") or [] if isinstance(c, dict)]
    message = status.get("message")
    name = details.get("name")
    return api_error(
        code,
        message if isinstance(message, str) and message.strip() else None,
        str(status.get("reason") or ""),
        tuple(str(c["reason"]) for c in causes if c.get("reason")),
        name=name if isinstance(name, str) else None,
        phrase=phrase,
        fallback=fallback,
        fields=tuple(str(c["field"]) for c in causes if c.get("field")),
    )
