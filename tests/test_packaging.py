"""`pip install ome-operator` gives both commands: the sdist and the wheel build from the tree,
the wheel holds the package and both entry points, and installed in a fresh virtual environment
(its dependencies taken from this one) both commands answer `version`."""

from __future__ import annotations

import os
import pathlib
import site
import subprocess
import sys
import tarfile
import zipfile

import pytest
from setuptools import build_meta

from ome_operator import OME_VERSION, __version__

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, pathlib.Path]:
    out = tmp_path_factory.mktemp("dist")
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        wheel = build_meta.build_wheel(str(out))
        sdist = build_meta.build_sdist(str(out))
    finally:
        os.chdir(here)
    return {"wheel": out / wheel, "sdist": out / sdist}


def test_the_wheel_holds_the_package_and_both_commands(built):
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = wheel.namelist()
        (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
        scripts = wheel.read(entry_points).decode()
    assert "ome_operator/__init__.py" in names
    assert not any(n.startswith(("tests/", "operator/")) for n in names)
    assert "kubectl-ome = ome_operator.console_scripts:kubectl_ome" in scripts
    assert "ome-operator = ome_operator.console_scripts:ome_operator" in scripts


def test_the_sdist_holds_the_source_tree(built):
    with tarfile.open(built["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "operator/ome_operator/__init__.py"} <= names


def test_both_commands_answer_version_from_a_fresh_environment(built, tmp_path):
    fresh = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(fresh)], check=True, timeout=120)
    python = fresh / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", built["wheel"]],
        check=True,
        timeout=120,
    )
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies (kopf, pydantic, ...) from this environment, after the fresh one's own.
    pathlib.Path(purelib, "dependencies.pth").write_text("\n".join(site.getsitepackages()))
    answers = []
    for command in ("kubectl-ome", "ome-operator"):
        done = subprocess.run(
            [fresh / "bin" / command, "version"], capture_output=True, text=True, timeout=60
        )
        answers.append((done.returncode, done.stdout, done.stderr))
    where = subprocess.run(
        [python, "-c", "import ome_operator; print(ome_operator.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert answers == [
        (0, f"kubectl-ome {__version__} (OME {OME_VERSION})\n", ""),
        (0, f"ome-operator {__version__} (OME {OME_VERSION})\n", ""),
    ]
    assert where.startswith(purelib)  # the wheel's copy, not this tree's
