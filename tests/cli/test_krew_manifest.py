"""manifests/krew/: the krew plugin manifest of ``kubectl ome``, its launcher and the build
that fills in the archives' sha256."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tomllib
from types import ModuleType

import pytest
import yaml

from ome_operator import __version__

ROOT = pathlib.Path(__file__).resolve().parents[2]
KREW = ROOT / "manifests" / "krew"
MANIFEST = KREW / "ome.yaml"
PLATFORMS = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")]
SPEC_FIELDS = {"version", "homepage", "shortDescription", "description", "caveats", "platforms"}


def manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def build_archives() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_archives", KREW / "build_archives.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def placeholder_uri(os_name: str, arch: str) -> str:
    version = f"v{__version__}"
    return (
        f"https://releases.ome-operator.invalid/ome/{version}/"
        f"kubectl-ome_{version}_{os_name}_{arch}.zip"
    )


def test_the_manifest_is_a_krew_plugin_named_after_its_file() -> None:
    plugin = manifest()
    assert (
        plugin["apiVersion"],
        plugin["kind"],
        plugin["metadata"],
        MANIFEST.stem,
        set(plugin["spec"]),
    ) == (
        "krew.googlecontainertools.github.com/v1alpha2",
        "Plugin",
        {"name": "ome"},
        "ome",
        SPEC_FIELDS,
    )


def test_its_version_is_the_package_version() -> None:
    version = manifest()["spec"]["version"]
    assert (version, bool(re.fullmatch(r"v\d+\.\d+\.\d+", version))) == (f"v{__version__}", True)


def test_its_texts_are_set() -> None:
    spec = manifest()["spec"]
    texts = [spec[field] for field in ("shortDescription", "description", "caveats")]
    assert [type(text) is str and text.strip() != "" for text in texts] == [True] * 3
    assert (len(spec["shortDescription"]) <= 80, spec["homepage"].startswith("https://")) == (
        True,
        True,
    )


def test_every_platform_runs_kubectl_ome_from_a_placeholder_archive() -> None:
    platforms = manifest()["spec"]["platforms"]
    assert platforms == [
        {
            "selector": {"matchLabels": {"os": os_name, "arch": arch}},
            "uri": placeholder_uri(os_name, arch),
            "sha256": "0" * 64,
            "bin": "kubectl-ome",
        }
        for os_name, arch in PLATFORMS
    ]


def test_the_build_knows_every_platform_of_the_manifest() -> None:
    assert sorted(build_archives().PLATFORM_TAGS) == sorted(f"{o}/{a}" for o, a in PLATFORMS)


def test_the_release_manifest_names_each_built_archive_by_its_sha256() -> None:
    built = f"kubectl-ome_v{__version__}_linux_arm64.zip"
    text = build_archives()._release_manifest(
        MANIFEST.read_text(), {built: "ab" * 32}, "https://example.org/r/"
    )
    platforms = yaml.safe_load(text)["spec"]["platforms"]
    assert [(p["uri"], p["sha256"]) for p in platforms] == [
        (placeholder_uri("linux", "amd64"), "0" * 64),
        (f"https://example.org/r/v{__version__}/{built}", "ab" * 32),
        (placeholder_uri("darwin", "amd64"), "0" * 64),
        (placeholder_uri("darwin", "arm64"), "0" * 64),
    ]


def test_the_launcher_runs_the_console_script_of_the_package() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["kubectl-ome"].partition(":")
    assert f"from {module} import {function}" in (KREW / "kubectl-ome").read_text()
    assert os.access(KREW / "kubectl-ome", os.X_OK)


def fake_archive(root: pathlib.Path, python_version: str) -> pathlib.Path:
    """An unpacked archive whose lib/ holds a stand-in package, linked from bin/ as krew does."""
    store, bin_dir = root / "store", root / "bin"
    entry = store / "lib" / "ome_operator" / "console_scripts.py"
    entry.parent.mkdir(parents=True)
    (entry.parent / "__init__.py").write_text("")
    entry.write_text(
        "import sys\n\ndef kubectl_ome():\n    print('lib', *sys.argv[1:])\n    return 0\n"
    )
    (store / "kubectl-ome").write_text(build_archives()._launcher(python_version))
    bin_dir.mkdir()
    (bin_dir / "kubectl-ome").symlink_to(store / "kubectl-ome")
    return bin_dir / "kubectl-ome"


@pytest.mark.parametrize(
    ("python_version", "expected"),
    [
        pytest.param(
            "{}.{}".format(*sys.version_info[:2]),
            (0, "lib version\n", ""),
            id="through krew's link, lib/ beside the real file comes first",
        ),
        pytest.param(
            "3.0",
            (
                1,
                "",
                "error: kubectl-ome needs Python 3.0 (python3.0 on PATH); this is Python "
                "{}.{}\n".format(*sys.version_info[:2]),
            ),
            id="another Python, and none of its version on PATH",
        ),
    ],
)
def test_the_launcher(tmp_path: pathlib.Path, python_version: str, expected: tuple) -> None:
    link = fake_archive(tmp_path, python_version)
    result = subprocess.run(
        [sys.executable, str(link), "version"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": str(tmp_path / "bin")},
        cwd=tmp_path,
    )
    assert (result.returncode, result.stdout, result.stderr) == expected
