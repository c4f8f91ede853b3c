"""What both command-line tools share: usage errors, the parser, and the ``error:`` edge.

Errors never leave as tracebacks: a known error prints ``error: <message>`` on stderr and the
command exits 1; a usage error exits ``usage_status`` (kubectl-ome: 1, S12.3; ome-operator: 2,
argparse's). A reader that closes the pipe (``| head -1``) ends the command quietly (141, as
SIGPIPE would); Ctrl-C exits 130, also without a traceback. Anything else is a bug: it prints
``error: internal error: <type>: <message>`` and exits 1 (the fuzz suite asserts it never
happens), rather than a traceback.

Run as the process's own command (the console scripts: no ``argv`` given), a command keeps
what it allocates till it exits, so the cyclic collector would mostly walk live objects: it
collects every ``_COMMAND_THRESHOLDS[0]`` allocations instead of 700, and at the end what was
allocated is frozen out of it (``gc.freeze``), so that the interpreter exits without walking
every object once more. That took 27 of the 160 ms ``kubectl ome runtime explain -f`` ran, and
0.3 of the 3 s of ``ome-operator render`` of 5,000 InferenceServices. ``ome-operator run``,
which lives on, collects as usual (``collect_as_usual``). Nothing is left unflushed. Nor does
such a command let pydantic look for plugins it would not use.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

__all__ = [
    "BareCommand",
    "DefaultsHelpFormatter",
    "Errors",
    "Parser",
    "UsageError",
    "collect_as_usual",
    "run_command",
]

#: Exceptions a command fails with for a reason of the user's.
Errors = tuple[type[Exception], ...]
#: The collector's thresholds while a command runs as its process, and the interpreter's own.
_COMMAND_THRESHOLDS = (100_000, 10, 10)
_USUAL_THRESHOLDS = gc.get_threshold()


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
    errors: Errors | Callable[[], Errors],
    *,
    usage_status: int = 1,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Parse ``argv`` and run; ``errors`` print as ``error: ...`` (exit 1), a UsageError too
    (exit ``usage_status``). ``errors`` may be a function, called once a command failed: a
    command that does not fail needs not import them."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    process = argv is None  # the process's own command line: it exits next
    if process:
        gc.set_threshold(*_COMMAND_THRESHOLDS)
        # pydantic looks for plugins (every installed distribution's entry points) when it
        # builds its first validator: 11 ms of a 130 ms command, for plugins nothing here uses.
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        return run(parser.parse_args(argv), stdin, stdout, stderr)
    except BareCommand as bare:
        stdout.write(bare.help_text)
        return 0
    except UsageError as exc:
        print(f"error: {exc}", file=stderr)
        return usage_status
    except BrokenPipeError:
        _silence(stdout)
        return 141
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if isinstance(exc, errors() if callable(errors) else errors):
            print(f"error: {exc}", file=stderr)
        else:  # a bug: still one line, not a traceback
            print(f"error: internal error: {type(exc).__name__}: {_one_line(exc)}", file=stderr)
        return 1
    finally:
        if process:
            gc.freeze()


def collect_as_usual() -> None:
    """The interpreter's own collector thresholds, for a command that lives on."""
    gc.set_threshold(*_USUAL_THRESHOLDS)


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
