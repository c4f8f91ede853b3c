"""TokenReview and SubjectAccessReview, answered as an API server answers them, for the emulator
(``ApiServerLikeEmulator.access_reviews``): a token is authenticated when it is one of
``users``; a user is allowed a non-resource path and verb when ``grants`` holds them. Both
answers are created, never stored (201, the review with its ``status``). ``asked`` records each
review by kind, in order, so a test can count what a cache saved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ACCESS_REVIEWS", "REVIEW_PATHS", "TOKEN_REVIEWS", "AccessReviews"]

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#: (method, path) of the requests answered.
REVIEW_PATHS = frozenset({("POST", TOKEN_REVIEWS), ("POST", ACCESS_REVIEWS)})


@dataclass
class AccessReviews:
    #: token -> the userInfo the API server authenticates it as.
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (username, non-resource path, verb) the API server allows.
    grants: set[tuple[str, str, str]] = field(default_factory=set)
    #: ("TokenReview", token) or ("SubjectAccessReview", username, path, verb), as asked.
    asked: list[tuple[str, ...]] = field(default_factory=list)

    def answer(self, path: str, review: dict[str, Any]) -> dict[str, Any]:
        spec = review.get("spec") or {}
        if path == TOKEN_REVIEWS:
            token = str(spec.get("token", ""))
            self.asked.append(("TokenReview", token))
            user = self.users.get(token)
            status: dict[str, Any] = (
                {"authenticated": True, "user": user}
                if user is not None
                else {"authenticated": False, "error": "invalid bearer token"}
            )
        else:
            attributes = spec.get("nonResourceAttributes") or {}
            asked = (
                str(spec.get("user")),
                str(attributes.get("path")),
                str(attributes.get("verb")),
            )
            self.asked.append(("SubjectAccessReview", *asked))
            status = {"allowed": asked in self.grants}
        return {**review, "status": status}
