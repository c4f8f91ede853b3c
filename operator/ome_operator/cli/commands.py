"""What both command-line tools share: usage errors, the parser, and the ``error:`` edge.

Errors never leave as tracebacks: a known error prints ``error: <message>`` on stderr and the
command exits 1; a usage error exits ``usage_status`` (kubectl-ome: 1, S12.3; ome-operator: 2,
argparse's). A reader that closes the pipe (``| head -1``) ends the command quietly (141, as
SIGPIPE would); Ctrl-C exits 130, also without a traceback. Anything else is a bug: it prints
``error: internal error: <type>: <message>`` and exits 1 (the fuzz suite asserts it never
happens), rather than a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

import yaml

__all__ = [
    "BareCommand",
    "DefaultsHelpFormatter",
    "Parser",
    "UsageError",
    "run_command",
    "yaml_text",
]

#: libyaml's emitter where PyYAML was built with it (the same text, about 4x faster than the
#: pure-Python one on a render report), else the pure-Python one.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def yaml_text(document: Any, *, allow_unicode: bool = True) -> str:
    """``document`` as YAML, keys in their order."""
    return yaml.dump(document, Dumper=_DUMPER, sort_keys=False, allow_unicode=allow_unicode)


class UsageError(ValueError):
    """A command line that cannot run; printed as ``error: <message>``, exit 1."""


class BareCommand(Exception):
    """A command given without its subcommand: its help is printed, and it exits 0."""

    def __init__(self, help_text: str) -> None:
        super().__init__(help_text)
        self.help_text = help_text


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors raised as UsageError instead of exiting 2, and the help of a
    command given without its subcommand (``kubectl ome``, ``kubectl ome runtime``)."""

    def error(self, message: str) -> NoReturn:
        missing = message.removeprefix("the following arguments are required: ")
        subcommands = {
            action.dest
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
        }
        if missing in subcommands:
            raise BareCommand(self.format_help())
        raise UsageError(message)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that ends each option's text with ``(default: ...)`` when the default says
    something: not for ``None``, a flag's ``False``/``True``, an empty list or string, nor a
    text that already shows it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text is None or "%(default)" in text or not _says_something(action.default):
            return text
        return f"{text} (default: %(default)s)"


def _says_something(default: object) -> bool:
    if default is None or default is argparse.SUPPRESS or isinstance(default, bool):
        return False
    return not (isinstance(default, (str, list, tuple)) and len(default) == 0)


def run_command(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace, TextIO, TextIO, TextIO], int],
    argv: Sequence[str] | None,
    errors: tuple[type[Exception], ...],
    *,
    usage_status: int = 1,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Parse ``argv`` and run; ``errors`` print as ``error: ...`` (exit 1), a UsageError too
    (exit ``usage_status``)."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    try:
        return run(parser.parse_args(argv), stdin, stdout, stderr)
    except BareCommand as bare:
        stdout.write(bare.help_text)
        return 0
    except UsageError as exc:
        print(f"error: {exc}", file=stderr)
        return usage_status
    except errors as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    except BrokenPipeError:
        _silence(stdout)
        return 141
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: still one line, not a traceback
        print(f"error: internal error: {type(exc).__name__}: {_one_line(exc)}", file=stderr)
        return 1


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _silence(stdout: TextIO) -> None:
    """Point the closed stdout at /dev/null, so that the interpreter's last flush is quiet."""
    try:
        descriptor = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)
