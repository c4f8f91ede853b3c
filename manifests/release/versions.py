"""The release's version: ``__version__`` of operator/ome_operator/__init__.py, the one place a
release bumps it by hand, and the files that repeat it, which must agree before a release.

| file | what names the version |
|---|---|
| Dockerfile | ``ARG VERSION=<version>`` (the wheel the image installs, its version label) |
| manifests/kustomization.yaml | ``images[0].newTag``: the image the install runs |
| manifests/krew/ome.yaml | ``spec.version``: ``v<version>``, and the archive names in its uris |
| the chart's Chart.yaml | ``appVersion`` (a leading ``v`` aside), if the chart sets it |
"""

from __future__ import annotations

import pathlib
import re

import yaml

_VERSION = re.compile(r'^__version__ = "([^"]+)"', re.MULTILINE)
_DOCKERFILE_VERSION = re.compile(r"^ARG VERSION=(\S*)", re.MULTILINE)


def package_version(root: pathlib.Path) -> str:
    """``__version__`` as operator/ome_operator/__init__.py sets it."""
    found = _VERSION.search((root / "operator" / "ome_operator" / "__init__.py").read_text())
    if found is None:
        raise ValueError("operator/ome_operator/__init__.py sets no __version__")
    return found.group(1)


def version_disagreements(
    root: pathlib.Path, version: str, asked: str | None, chart: pathlib.Path
) -> list[str]:
    """One sentence per file that names another version than ``version`` (and one when the
    release was asked for another); none when all agree."""
    source = "operator/ome_operator/__init__.py"
    found = [] if asked in (None, version) else [f"--version {asked}, but {source} says {version}"]
    for where, named in _named_versions(root, chart).items():
        if named != version:
            found.append(f"{where} says {named!r}, {source} says {version!r}")
    return found


def _named_versions(root: pathlib.Path, chart: pathlib.Path) -> dict[str, str | None]:
    """The version each repeating file names, by file and field."""
    dockerfile = _DOCKERFILE_VERSION.search((root / "Dockerfile").read_text())
    kustomization = yaml.safe_load((root / "manifests" / "kustomization.yaml").read_text())
    krew = yaml.safe_load((root / "manifests" / "krew" / "ome.yaml").read_text())
    named = {
        "Dockerfile (ARG VERSION)": dockerfile.group(1) if dockerfile else None,
        "manifests/kustomization.yaml (images newTag)": kustomization["images"][0]["newTag"],
        "manifests/krew/ome.yaml (spec.version without its v)": krew["spec"]["version"][1:],
    }
    chart_file = chart / "Chart.yaml"
    if chart_file.is_file():
        meta = yaml.safe_load(chart_file.read_text())
        if "appVersion" in meta:
            named[f"{_shown(chart_file, root)} (appVersion)"] = str(
                meta["appVersion"]
            ).removeprefix("v")
    return named


def _shown(path: pathlib.Path, root: pathlib.Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
