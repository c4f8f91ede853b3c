"""The console scripts as installed: ``kubectl-ome`` and ``ome-operator`` start here.

This is the first module of ours a command's process runs, so it handles Ctrl-C before it
imports anything heavy: from here on SIGINT ends the process at once with 130 (``os._exit``),
without the ``KeyboardInterrupt`` traceback it would print from inside whatever import or
write it interrupted, and without flushing output the user has abandoned. Only then is the
command imported. A command that handles signals itself replaces the handler
(``ome-operator run``: kopf stops the operator gracefully on SIGINT and SIGTERM).

It imports only ``os`` and ``signal`` (the interpreter has loaded ``os``; ``signal`` costs
well under a millisecond): the window in which Ctrl-C can still raise is the interpreter's
own start and the wrapper's import of this module.
"""

from __future__ import annotations

import os
import signal

__all__ = ["INTERRUPTED_EXIT", "kubectl_ome", "ome_operator"]

#: Exit status after Ctrl-C: 128 + SIGINT, what a shell reports for a command it interrupted.
INTERRUPTED_EXIT = 130


def kubectl_ome() -> int:
    """``kubectl-ome`` (``kubectl ome``)."""
    _exit_on_interrupt()
    from .cli.main import main

    return main()


def ome_operator() -> int:
    """``ome-operator``."""
    _exit_on_interrupt()
    from .operator_command import main

    return main()


def _exit_on_interrupt() -> None:
    signal.signal(signal.SIGINT, _interrupted)


def _interrupted(signum: int, frame: object) -> None:
    os._exit(INTERRUPTED_EXIT)  # no cleanup: the user asked the command to stop, not to finish
