"""The release tooling's modules (manifests/release/) import one another by their file names,
as ``python manifests/release/release.py`` runs them: their folder goes on ``sys.path``."""

import pathlib
import sys

RELEASE = pathlib.Path(__file__).resolve().parents[2] / "manifests" / "release"

if str(RELEASE) not in sys.path:
    sys.path.insert(0, str(RELEASE))
