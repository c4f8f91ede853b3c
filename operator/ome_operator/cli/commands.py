"""What both command-line tools share: usage errors, the parser, and the ``error:`` edge.

Errors never leave as tracebacks: a known error prints ``error: <message>`` on stderr and the
command exits 1 (never argparse's 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

__all__ = ["Parser", "UsageError", "run_command"]


class UsageError(ValueError):
    """A command line that cannot run; printed as ``error: <message>``, exit 1."""


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors raised as UsageError instead of exiting 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def run_command(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace, TextIO, TextIO, TextIO], int],
    argv: Sequence[str] | None,
    errors: tuple[type[Exception], ...],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Parse ``argv`` and run; ``errors`` (and UsageError) print as ``error: ...``, exit 1."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    try:
        return run(parser.parse_args(argv), stdin, stdout, stderr)
    except (UsageError, *errors) as exc:
        print(f"error: {exc}", file=stderr)
        return 1
