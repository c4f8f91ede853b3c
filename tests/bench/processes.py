"""The processes a benchmark starts and ends: this checkout's operator is run with the
environment ``operator_env`` gives, and every process is ended by ``stop``."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
from typing import Any

#: The checkout these benchmarks belong to.
ROOT = pathlib.Path(__file__).resolve().parents[2]
#: Seconds a process has to exit after SIGTERM before it is killed.
STOP_SECONDS = 30


def operator_env(kubeconfig: pathlib.Path) -> dict[str, str]:
    """The environment of an operator that reaches the cluster of ``kubeconfig`` and runs this
    checkout's code, not an installed one."""
    return {
        "KUBECONFIG": str(kubeconfig),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": f"{ROOT / 'operator'}:{ROOT}",
    }


def stop(process: subprocess.Popen[Any]) -> None:
    """End ``process`` if it still runs: SIGTERM, as Kubernetes stops a pod, then a kill after
    ``STOP_SECONDS``."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
