"""The programs the tests build from Go modules (the control plane, KWOK, the LeaderWorkerSet
controller, helm: ``tests/controlplane/build.sh``; promtool: ``tests/manifests/promtool/
build.sh``), each script a no-op once its programs are cached by version and pins.

``run`` runs one script, hands each line it reports on stderr to ``progress`` as it comes
(``building kwok from ...``, ``built kwok in 312 s``), and returns what it prints on stdout as
``name=value`` lines. tests/conftest.py runs the scripts the collected tests need before any test
starts, outside every test's timeout, showing those lines: a first run does not sit silent.
"""

from __future__ import annotations

import pathlib
import subprocess
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTROL_PLANE = ROOT / "tests" / "controlplane" / "build.sh"
PROMTOOL = ROOT / "tests" / "manifests" / "promtool" / "build.sh"


def run(script: pathlib.Path, progress: Callable[[str], None] | None = None) -> dict[str, str]:
    """Run a build script; its ``name=value`` lines. A failed build raises with its status."""
    with subprocess.Popen(
        ["bash", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as build:
        assert build.stderr is not None and build.stdout is not None
        for line in build.stderr:
            if progress is not None:
                progress(line.rstrip("\n"))
        printed = build.stdout.read()
    if build.returncode:
        raise subprocess.CalledProcessError(build.returncode, build.args, printed)
    return dict(line.split("=", 1) for line in printed.strip().splitlines() if "=" in line)
