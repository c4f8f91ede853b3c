"""The release's version is operator/ome_operator/__init__.py's, and release.py refuses a tree
whose other files name another one (manifests/release/versions.py)."""

from __future__ import annotations

import pathlib

import pytest
from versions import package_version, version_disagreements

from ome_operator import __version__
from tests.manifests.manifest_files import ROOT

TREE = {
    "operator/ome_operator/__init__.py": '"""The package."""\n\n__version__ = "0.1.0"\n',
    "Dockerfile": "FROM python:3.11.11-slim-bookworm\nARG VERSION=0.1.0\n",
    "manifests/kustomization.yaml": "images:\n  - name: ome-operator\n    newTag: '0.1.0'\n",
    "manifests/krew/ome.yaml": "spec:\n  version: v0.1.0\n",
    "chart/Chart.yaml": "name: ome-operator\nversion: 0.3.0\nappVersion: '0.1.0'\n",
}


def tree(tmp_path: pathlib.Path, changed: dict[str, str]) -> pathlib.Path:
    for name, text in {**TREE, **changed}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_repository_names_one_version_everywhere():
    chart = ROOT / "charts" / "ome-operator"
    assert (package_version(ROOT), version_disagreements(ROOT, __version__, None, chart)) == (
        __version__,
        [],
    )


@pytest.mark.parametrize(
    ("asked", "changed", "expected"),
    [
        pytest.param(None, {}, [], id="a tree that agrees with itself is released"),
        pytest.param("0.1.0", {}, [], id="the version asked for is the tree's"),
        pytest.param(
            None,
            {"chart/Chart.yaml": "name: ome-operator\nversion: 0.3.0\nappVersion: v0.1.0\n"},
            [],
            id="a chart's appVersion may start with v",
        ),
        pytest.param(
            None,
            {"chart/Chart.yaml": "name: ome-operator\nversion: 0.3.0\n"},
            [],
            id="a chart without appVersion is not compared",
        ),
        pytest.param(
            "0.2.0",
            {},
            ["--version 0.2.0, but operator/ome_operator/__init__.py says 0.1.0"],
            id="another version asked for is refused",
        ),
        pytest.param(
            None,
            {
                "Dockerfile": "FROM python:3.11.11-slim-bookworm\nARG VERSION=0.0.9\n",
                "manifests/krew/ome.yaml": "spec:\n  version: v0.2.0\n",
                "chart/Chart.yaml": "name: ome-operator\nversion: 0.1.0\nappVersion: 0.2.0\n",
            },
            [
                "Dockerfile (ARG VERSION) says '0.0.9', operator/ome_operator/__init__.py says "
                "'0.1.0'",
                "manifests/krew/ome.yaml (spec.version without its v) says '0.2.0', "
                "operator/ome_operator/__init__.py says '0.1.0'",
                "chart/Chart.yaml (appVersion) says '0.2.0', operator/ome_operator/__init__.py "
                "says '0.1.0'",
            ],
            id="each file that names another version is one sentence",
        ),
        pytest.param(
            None,
            {"Dockerfile": "FROM python:3.11.11-slim-bookworm\n"},
            ["Dockerfile (ARG VERSION) says None, operator/ome_operator/__init__.py says '0.1.0'"],
            id="a Dockerfile without ARG VERSION is refused",
        ),
    ],
)
def test_version_disagreements(tmp_path, asked: str | None, changed: dict, expected: list[str]):
    root = tree(tmp_path, changed)
    assert version_disagreements(root, "0.1.0", asked, root / "chart") == expected
