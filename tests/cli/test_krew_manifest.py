"""manifests/krew/: the krew plugin manifest of ``kubectl ome``, its launcher, the entry point
of its self-contained bundle, and the pure parts of the build that fills in the archives' sha256
(test_krew_archive.py builds the bundle)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import re
import stat
import subprocess
import sys
import tarfile
import tomllib
from types import ModuleType

import pytest
import yaml

from ome_operator import __version__
from ome_operator.cli.main import build_parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
KREW = ROOT / "manifests" / "krew"
MANIFEST = KREW / "ome.yaml"
#: os, arch and the archive's kind: a self-contained tar.gz, or a zip that needs Python 3.11.
PLATFORMS = [
    ("linux", "amd64", "tar.gz"),
    ("linux", "arm64", "zip"),
    ("darwin", "amd64", "zip"),
    ("darwin", "arm64", "zip"),
]
SPEC_FIELDS = {"version", "homepage", "shortDescription", "description", "caveats", "platforms"}


def manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def load(name: str) -> ModuleType:
    """A module of manifests/krew/ (not a package: the release script runs them as files)."""
    spec = importlib.util.spec_from_file_location(name, KREW / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_archives() -> ModuleType:
    return load("build_archives")


def placeholder_uri(os_name: str, arch: str, kind: str) -> str:
    version = f"v{__version__}"
    return (
        f"https://releases.ome-operator.invalid/ome/{version}/"
        f"kubectl-ome_{version}_{os_name}_{arch}.{kind}"
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
            "uri": placeholder_uri(os_name, arch, kind),
            "sha256": "0" * 64,
            "bin": "kubectl-ome",
        }
        for os_name, arch, kind in PLATFORMS
    ]


def test_the_build_knows_every_platform_of_the_manifest_and_its_kind() -> None:
    module = build_archives()
    assert (module.PLATFORMS, module.BUNDLED, tuple(module.PLATFORM_TAGS)) == (
        tuple(f"{o}/{a}" for o, a, _ in PLATFORMS),
        tuple(f"{o}/{a}" for o, a, kind in PLATFORMS if kind == "tar.gz"),
        tuple(f"{o}/{a}" for o, a, kind in PLATFORMS if kind == "zip"),
    )


def leaf_commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[str]:
    """Every command of the parser, as typed after ``kubectl ome``."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return [" ".join(words)]
    return [
        command
        for name, sub in groups[0].choices.items()
        for command in leaf_commands(sub, (*words, name))
    ]


def test_the_description_lists_every_command_each_on_its_own_line() -> None:
    lines = [line.strip() for line in manifest()["spec"]["description"].splitlines()]
    commands = leaf_commands(build_parser())
    listed = [c for c in commands if any(line.startswith(f"kubectl ome {c}") for line in lines)]
    assert (commands, listed) == (
        ["runtime explain", "runtime effective", "runtime impact", "version", "completion"],
        commands,
    )


def test_the_description_says_which_platforms_need_python() -> None:
    description = manifest()["spec"]["description"]
    bundled = ", ".join(f"{o}/{a}" for o, a, kind in PLATFORMS if kind == "tar.gz")
    zipped = ", ".join(f"{o}/{a}" for o, a, kind in PLATFORMS if kind == "zip")
    assert (
        f"\n{bundled}: self-contained, nothing to install (glibc 2.35 or later).\n" in description,
        f"\n{zipped}: needs Python 3.11 (python3 or python3.11 on\nPATH)" in description,
    ) == (True, True)


def test_the_release_manifest_names_each_built_archive_by_its_sha256() -> None:
    built = [f"kubectl-ome_v{__version__}_linux_amd64.tar.gz"]
    built += [f"kubectl-ome_v{__version__}_linux_arm64.zip"]
    text = build_archives()._release_manifest(
        MANIFEST.read_text(), {built[0]: "cd" * 32, built[1]: "ab" * 32}, "https://example.org/r/"
    )
    platforms = yaml.safe_load(text)["spec"]["platforms"]
    assert [(p["uri"], p["sha256"]) for p in platforms] == [
        (f"https://example.org/r/v{__version__}/{built[0]}", "cd" * 32),
        (f"https://example.org/r/v{__version__}/{built[1]}", "ab" * 32),
        (placeholder_uri("darwin", "amd64", "zip"), "0" * 64),
        (placeholder_uri("darwin", "arm64", "zip"), "0" * 64),
    ]


def elf(*versions: str) -> bytes:
    """A stand-in binary whose dynamic strings ask for these glibc symbol versions."""
    return b"\x7fELF\x02" + b"".join(f"{v}\x00".encode() for v in versions)


@pytest.mark.parametrize(
    ("binaries", "expected"),
    [
        pytest.param(
            [elf("GLIBC_2.2.5", "GLIBC_2.34"), elf("GLIBC_2.35", "GLIBC_PRIVATE")],
            (2, 35),
            id="the newest version any binary asks for",
        ),
        pytest.param([elf("GLIBC_2.9"), elf("GLIBC_2.17")], (2, 17), id="compared as numbers"),
        pytest.param([elf()], (2, 0), id="no glibc symbol at all"),
    ],
)
def test_glibc_needed(binaries: list[bytes], expected: tuple[int, int]) -> None:
    assert build_archives().glibc_needed(binaries) == expected


def test_the_release_manifest_states_the_glibc_the_bundle_needs() -> None:
    text = build_archives().state_glibc(MANIFEST.read_text(), (2, 39))
    assert "linux/amd64: self-contained, nothing to install (glibc 2.39 or later).\n" in text
    assert text.replace("2.39", "2.35") == MANIFEST.read_text()


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param({}, 0, id="unset is 0"),
        pytest.param({"SOURCE_DATE_EPOCH": "1700000000"}, 1700000000, id="whole seconds"),
    ],
)
def test_source_date_epoch(environ: dict[str, str], expected: int) -> None:
    assert build_archives().source_date_epoch(environ) == expected


def test_a_source_date_epoch_that_is_no_number_is_refused() -> None:
    with pytest.raises(SystemExit) as refused:
        build_archives().source_date_epoch({"SOURCE_DATE_EPOCH": "yesterday"})
    assert str(refused.value) == "error: SOURCE_DATE_EPOCH must be whole seconds, not 'yesterday'"


@pytest.mark.parametrize(
    ("name", "mode", "expected"),
    [
        pytest.param("_internal", stat.S_IFDIR | 0o700, (tarfile.DIRTYPE, 0o755, 0), id="dir"),
        pytest.param(
            "kubectl-ome", stat.S_IFREG | 0o700, (tarfile.REGTYPE, 0o755, 12), id="executable"
        ),
        pytest.param("LICENSE", stat.S_IFREG | 0o600, (tarfile.REGTYPE, 0o644, 12), id="file"),
    ],
)
def test_tar_members_are_owned_by_root_at_one_time(name: str, mode: int, expected: tuple) -> None:
    member = build_archives().tar_member(name, mode, 12, 1700000000)
    assert (
        member.name,
        (member.type, member.mode, member.size),
        (member.mtime, member.uid, member.gid, member.uname, member.gname),
    ) == (name, expected, (1700000000, 0, 0, "", ""))


@pytest.mark.parametrize(
    ("name", "mode", "message"),
    [
        pytest.param(
            "_internal/libz.so",
            stat.S_IFLNK | 0o777,
            "error: _internal/libz.so is neither a file nor a directory: krew cannot unpack it",
            id="a symlink: krew unpacks directories and regular files only",
        ),
        pytest.param(
            "_internal/a..b",
            stat.S_IFREG | 0o644,
            "error: _internal/a..b: krew refuses a name with '..' in it",
            id="a name krew takes for a path out of its folder",
        ),
    ],
)
def test_what_krew_cannot_unpack_is_refused(name: str, mode: int, message: str) -> None:
    with pytest.raises(SystemExit) as refused:
        build_archives().tar_member(name, mode, 0, 0)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param(
            {"PATH": "/bin", "LD_LIBRARY_PATH": "/b/_internal", "_PYI_ARCHIVE_FILE": "/b/k"},
            {"PATH": "/bin"},
            id="the bootloader's library path and variables go: the user had none",
        ),
        pytest.param(
            {
                "PATH": "/bin",
                "LD_LIBRARY_PATH": "/b/_internal:/opt/lib",
                "LD_LIBRARY_PATH_ORIG": "/opt/lib",
                "_PYI_PARENT_PROCESS_LEVEL": "-1",
            },
            {"PATH": "/bin", "LD_LIBRARY_PATH": "/opt/lib"},
            id="the user's library path comes back",
        ),
        pytest.param({"PATH": "/bin"}, {"PATH": "/bin"}, id="nothing to undo"),
    ],
)
def test_the_bundle_gives_programs_it_starts_the_users_environment(
    environ: dict[str, str], expected: dict[str, str]
) -> None:
    assert load("bundle_entry").user_environment(environ) == expected


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
