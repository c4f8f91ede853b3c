"""What both command-line tools share: usage errors, the parser, and the ``error:`` edge.

Errors never leave as tracebacks: a known error prints ``error: <message>`` on stderr and the
command exits 1; a usage error exits ``usage_status`` (kubectl-ome: 1, docs/reference/cli.md;
ome-operator: 2, argparse's). A reader that closes the pipe (``| head -1``) ends the command
quietly (141, as SIGPIPE would); Ctrl-C exits 130, also without a traceback
(``console_scripts`` handles it from the process's start). Anything else is a bug: it prints
``error: internal error: <type>: <message>`` and exits 1 (the fuzz suite asserts it never
happens), rather than a traceback.

A closed pipe is 141 however much was written: as the process's command, stdout writes through
``_WholeWrites``. Python's own stdout loses the rest of a write silently when the reader leaves
during it: write(2) of more than the pipe holds then returns short, without an error, and
``TextIOWrapper`` ignores the count its buffer returns (a large document piped to ``head -1``
exited 0). Output is flushed before the command returns, so that an error in the last flush is
a closed pipe like any other, not one the interpreter reports at exit.

Run as the process's own command (the console scripts: no ``argv`` given), a command keeps
what it allocates till it exits, so the cyclic collector would mostly walk live objects: it
collects every ``_COMMAND_THRESHOLDS[0]`` allocations instead of 700, and at the end what was
allocated is frozen out of it (``gc.freeze``), so that the interpreter exits without walking
every object once more. That took 27 of the 160 ms ``kubectl ome runtime explain -f`` ran, and
0.3 of the 3 s of ``ome-operator render`` of 5,000 InferenceServices. ``ome-operator run``,
which lives on, collects as usual (``collect_as_usual``). Nothing is left unflushed. Nor does
such a command let pydantic look for plugins it would not use, nor import what looking for
them takes (``_plugin_loader_without_metadata``).

Where the rest of the time goes (``explain -f`` of the samples, measured in phases on a loaded
2-core machine): about half is importing pydantic, pydantic-core and PyYAML (pydantic-core's
schema types are hundreds of TypedDicts; PyYAML compiles its regular expressions at import),
30% importing this project's modules (half of that is pydantic making the models' classes,
much of the rest the core's dataclasses and the parser of every subcommand), 7% building the
two validators ``explain`` uses, 6% reading and selecting, 9% the interpreter's own start.
The first half alone is about 1.3 times kubectl's whole run (``tests/bench/cli.py``).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

__all__ = [
    "SHELLS",
    "BareCommand",
    "DefaultsHelpFormatter",
    "Errors",
    "Parser",
    "RawDescriptionHelpFormatter",
    "UsageError",
    "collect_as_usual",
    "offer",
    "run_command",
]

#: The shells ``completion`` writes a script for (``completion.completion_script``).
SHELLS = ("bash", "zsh")
#: Exceptions a command fails with for a reason of the user's.
Errors = tuple[type[Exception], ...]
#: The collector's thresholds while a command runs as its process, and the interpreter's own.
_COMMAND_THRESHOLDS = (100_000, 10, 10)
_USUAL_THRESHOLDS = gc.get_threshold()
#: The values of ``PYDANTIC_DISABLE_PLUGINS`` with which pydantic loads no plugin at all.
_NO_PLUGINS = ("__all__", "1", "true")
#: pydantic's module that finds plugins; its ``get_plugins`` is all pydantic imports of it.
_PLUGIN_LOADER = "pydantic.plugin._loader"


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
    text that already shows it.

    As wide as argparse makes it (the terminal's columns less 2), measured without importing
    ``shutil``, which argparse imports for it (with bz2 and lzma: 3 ms of every command, for
    argparse makes a formatter for each argument it adds)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **options: Any,
    ) -> None:
        width = _terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width, **options)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text is None or "%(default)" in text or not _says_something(action.default):
            return text
        return f"{text} (default: %(default)s)"


class RawDescriptionHelpFormatter(argparse.RawDescriptionHelpFormatter, DefaultsHelpFormatter):
    """``DefaultsHelpFormatter`` that keeps the description and epilog as written."""


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``COLUMNS`` when it is a positive number, else
    the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _says_something(default: object) -> bool:
    if default is None or default is argparse.SUPPRESS or isinstance(default, bool):
        return False
    return not (isinstance(default, (str, list, tuple)) and len(default) == 0)


def offer(action: argparse.Action, words: tuple[str, ...]) -> argparse.Action:
    """Complete ``action``'s value to ``words`` (as argcomplete's ``completer``, an attribute of
    the action: argparse has no place for it). Here, not in ``completion``, so that a parser is
    built without importing the completion scripts."""
    action.completions = words  # type: ignore[attr-defined]
    return action


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
    process = argv is None  # the process's own command line: it exits next
    if process:
        gc.set_threshold(*_COMMAND_THRESHOLDS)
        # pydantic looks for plugins (every installed distribution's entry points) when it
        # builds its first validator: 11 ms of a 130 ms command, for plugins nothing here uses.
        if os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__") in _NO_PLUGINS:
            _plugin_loader_without_metadata()
        if stdout is None:
            sys.stdout = _whole_writes(sys.stdout)
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    try:
        status = _status(parser, run, argv, errors, usage_status, (stdin, stdout, stderr))
        stdout.flush()
        return status
    except BrokenPipeError:
        _silence(stdout)
        return 141
    except KeyboardInterrupt:
        return 130
    finally:
        if process:
            gc.freeze()


def _status(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace, TextIO, TextIO, TextIO], int],
    argv: Sequence[str] | None,
    errors: Errors | Callable[[], Errors],
    usage_status: int,
    streams: tuple[TextIO, TextIO, TextIO],
) -> int:
    """The command's exit status; a closed pipe and Ctrl-C go on to ``run_command``."""
    stdin, stdout, stderr = streams
    try:
        return run(parser.parse_args(argv), stdin, stdout, stderr)
    except BareCommand as bare:
        stdout.write(bare.help_text)
        return 0
    except UsageError as exc:
        print(f"error: {exc}", file=stderr)
        return usage_status
    except BrokenPipeError:
        raise
    except Exception as exc:
        if isinstance(exc, errors() if callable(errors) else errors):
            print(f"error: {exc}", file=stderr)
        else:  # a bug: still one line, not a traceback
            print(f"error: internal error: {type(exc).__name__}: {_one_line(exc)}", file=stderr)
        return 1


def _plugin_loader_without_metadata() -> None:
    """pydantic's plugin loader, for a process in which plugins are disabled: the module
    imports ``importlib.metadata`` (with email, socket, zipfile: 14 of 250 ms
    ``kubectl ome runtime explain -f`` took) before it reads that no plugin is wanted. This
    one answers as it does then (no plugin) without that import; pydantic imports it when
    it builds its first validator."""
    if _PLUGIN_LOADER not in sys.modules:
        loader = types.ModuleType(_PLUGIN_LOADER, "No pydantic plugin: they are disabled.")
        loader.get_plugins = tuple  # type: ignore[attr-defined]
        sys.modules[_PLUGIN_LOADER] = loader


def collect_as_usual() -> None:
    """The interpreter's own collector thresholds, for a command that lives on."""
    gc.set_threshold(*_USUAL_THRESHOLDS)


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


class _WholeWrites(io.RawIOBase):
    """A file descriptor whose ``write`` writes everything or raises (BrokenPipeError when
    the reader has gone): it writes again after a short write, which then fails."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self._descriptor = descriptor

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._descriptor

    def isatty(self) -> bool:
        return os.isatty(self._descriptor)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        total = view.nbytes
        while view.nbytes:
            view = view[os.write(self._descriptor, view) :]
        return total


def _whole_writes(stdout: TextIO) -> TextIO:
    """``stdout`` writing through ``_WholeWrites``, with its encoding and buffering; itself
    when it has no file descriptor."""
    try:
        descriptor = stdout.fileno()
        stdout.flush()
    except (AttributeError, OSError, ValueError):
        return stdout
    return io.TextIOWrapper(
        io.BufferedWriter(_WholeWrites(descriptor)),
        encoding=stdout.encoding,
        errors=stdout.errors,
        line_buffering=stdout.line_buffering,
    )


def _silence(stdout: TextIO) -> None:
    """Point the closed stdout at /dev/null, so that the interpreter's last flush is quiet."""
    try:
        descriptor = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)
