"""The failures of an API call, typed by what the caller does about them.

``KubeApi`` (the one transport of the operator and the CLI) raises only these. Callers branch on
the class, never on a status number or a message::

    ApiError          any failed call: ``status`` (0: no answer), the server's message, reason
    ├── NotFound      404: the object (or the resource) does not exist
    ├── Conflict      409: a newer version was written meanwhile, or the name is taken
    ├── Gone          410: the version to resume a watch from has expired
    ├── Refused       400, 403, 413, 422: the server refuses the request as it is
    └── Unreachable   no answer: refused connection, timeout, broken stream
        └── TimedOut  the answer did not come within the request timeout
"""

from __future__ import annotations

from typing import Self

__all__ = [
    "REFUSED_STATUSES",
    "ApiError",
    "Conflict",
    "Gone",
    "NotFound",
    "Refused",
    "TimedOut",
    "Unreachable",
    "api_error",
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
        #: Whether the server sent a message of its own (else ``message`` is made up here).
        self.from_server = False

    @property
    def retriable(self) -> bool:
        """Whether the same request may succeed later (no answer, throttled, server error)."""
        return self.status == 0 or self.status == 429 or self.status >= 500

    def reworded(self, message: str) -> Self:
        """The same failure (class and fields) with another message."""
        copy = type(self)(
            self.status, message, self.reason, self.causes, name=self.name, phrase=self.phrase
        )
        copy.from_server = self.from_server
        return copy


class NotFound(ApiError):
    """404: what the call addresses does not exist."""


class Conflict(ApiError):
    """409: the object changed meanwhile, or one of that name exists (``AlreadyExists``)."""


class Gone(ApiError):
    """410: the resource version asked for has expired; list again."""


class Refused(ApiError):
    """The server refuses the request as it is; sending it again cannot help."""


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


def api_error(
    status: int,
    message: str | None,
    reason: str = "",
    causes: tuple[str, ...] = (),
    *,
    name: str | None = None,
    phrase: str = "",
    fallback: str = "",
) -> ApiError:
    """The typed error for an answer with HTTP ``status``; ``fallback`` is the message when
    the server sent none."""
    error = _BY_STATUS.get(status, ApiError)(
        status, message or fallback, reason, causes, name=name, phrase=phrase
    )
    error.from_server = bool(message)
    return error
