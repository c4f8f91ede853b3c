"""What a Pod Security check finds wrong with a pod: its reason and, maybe, the detail."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Violation"]


@dataclass(frozen=True)
class Violation:
    """One check's refusal, as the API server words it.

    ``reason`` is short and always shown (``hostPath volumes``); ``detail`` names what was found
    (``volume "model"``) and follows it in parentheses when there is one.
    """

    reason: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.reason} ({self.detail})" if self.detail else self.reason
