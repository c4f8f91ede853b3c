"""The self-contained ``kubectl-ome`` of manifests/krew/: built once for the run by
build_archives.py (30 to 50 s on 2 cores), unpacked as krew unpacks it, linked as krew links it,
and run with a PATH that holds nothing but that link: it prints what the virtualenv's
``kubectl-ome`` prints, offline and against a Kubernetes API (the kmock emulator).

Needs PyInstaller (``pip install -e '.[release]'``); without it these tests are skipped."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import hashlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import tarfile

import pytest
import yaml

from ome_operator import __version__
from tests.support.kube_access import apply_object, write_kubeconfig

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("PyInstaller") is None,
        reason="the self-contained build needs PyInstaller: pip install -e '.[release]'",
    ),
    pytest.mark.timeout(600),  # the first test of the run waits for the build
]

ROOT = pathlib.Path(__file__).resolve().parents[2]
KREW = ROOT / "manifests" / "krew"
SAMPLES = ROOT / "manifests" / "samples"
CHANGES = ROOT / "docs" / "examples" / "changing-runtimes"
#: The console script of the virtualenv running the tests: what the archive must match.
INSTALLED = pathlib.Path(sys.executable).parent / "kubectl-ome"
EPOCH = 1700000000
ARCHIVE = f"kubectl-ome_v{__version__}_linux_amd64.tar.gz"
PLATFORM = ("--platform", "linux/amd64")
EXPLAIN_MODEL = ("runtime", "explain", "--model", "llama-3-3-70b-instruct", "-f", f"{SAMPLES}/")
EXPLAIN_ISVC = ("runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-demo", "-f", SAMPLES)
JSONPATH = "jsonpath={range .runtimes[*]}{.name}{'\\n'}{end}"
STATE = ("--state", str(CHANGES / "cluster.yaml"))
MULTINODE = "srt-llama-3-3-70b-instruct-multinode"
#: Each run's limit; the installed commands start in well under a second.
RUN_TIMEOUT = 60


@dataclasses.dataclass(frozen=True)
class Build:
    out: pathlib.Path
    stdout: str

    @property
    def archive(self) -> pathlib.Path:
        return self.out / ARCHIVE


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    out = tmp_path_factory.mktemp("krew")
    done = subprocess.run(
        [sys.executable, str(KREW / "build_archives.py"), "--out", str(out), *PLATFORM],
        capture_output=True,
        text=True,
        timeout=540,
        cwd=ROOT,
        env={**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return Build(out, done.stdout)


def unpack_as_krew(archive: pathlib.Path, target: pathlib.Path) -> None:
    """What krew's tar.gz extraction does: directories and regular files with their modes,
    pax_global_header skipped, names with '..' or a leading '/' refused, anything else an error."""
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            assert ".." not in member.name and not member.name.startswith("/"), member.name
            path = target / member.name
            if member.isdir():
                path.mkdir(mode=member.mode, parents=True, exist_ok=True)
            elif member.isreg():
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_CREAT | os.O_WRONLY, member.mode)
                with os.fdopen(fd, "wb") as file, tar.extractfile(member) as data:
                    file.write(data.read())
            else:
                raise AssertionError(f"krew cannot unpack {member.name} (type {member.type!r})")


@pytest.fixture(scope="session")
def krew_bin(build: Build, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """krew's bin folder: a link to the manifest's ``bin`` in the unpacked store, alone."""
    root = tmp_path_factory.mktemp("krew-root")
    store = root / "store" / "ome" / f"v{__version__}"
    unpack_as_krew(build.archive, store)
    (platform,) = [p for p in release_manifest(build)["spec"]["platforms"] if p["uri"] == uri()]
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl-ome").symlink_to(store / platform["bin"])
    return bin_dir


def release_manifest(build: Build) -> dict:
    return yaml.safe_load((build.out / "ome.yaml").read_text())


def uri() -> str:
    return f"https://releases.ome-operator.invalid/ome/v{__version__}/{ARCHIVE}"


def build_archives():
    spec = importlib.util.spec_from_file_location("build_archives", KREW / "build_archives.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_prints_the_archives_sha256_and_the_manifest_it_wrote(build: Build) -> None:
    sha256 = hashlib.sha256(build.archive.read_bytes()).hexdigest()
    assert build.stdout == f"{sha256}  {build.archive}\nwrote {build.out / 'ome.yaml'}\n"


def test_the_release_manifest_names_the_archive_by_its_sha256(build: Build) -> None:
    platforms = release_manifest(build)["spec"]["platforms"]
    source = yaml.safe_load((KREW / "ome.yaml").read_text())["spec"]["platforms"]
    sha256 = hashlib.sha256(build.archive.read_bytes()).hexdigest()
    assert platforms == [{**source[0], "sha256": sha256}, *source[1:]]
    assert source[0]["uri"] == uri()


def test_the_release_manifest_states_the_glibc_the_bundle_needs(
    build: Build, krew_bin: pathlib.Path
) -> None:
    store = (krew_bin / "kubectl-ome").resolve().parent
    binaries = [
        path.read_bytes()
        for path in sorted(store.rglob("*"))
        if path.is_file() and path.read_bytes().startswith(b"\x7fELF")
    ]
    needed = build_archives().glibc_needed(binaries)
    description = release_manifest(build)["spec"]["description"]
    assert "self-contained, nothing to install (glibc {}.{} or later).".format(*needed) in (
        description
    )


def test_the_archive_holds_what_krew_unpacks_sorted_with_one_owner_and_time(build: Build) -> None:
    with tarfile.open(build.archive, "r:gz") as tar:
        members = tar.getmembers()
        executable = tar.extractfile("kubectl-ome").read(4)
        license_text = tar.extractfile("LICENSE").read()
    names = [m.name for m in members]
    assert (names[:3], names == sorted(names), len(names) == len(set(names))) == (
        ["LICENSE", "_internal", names[2]],
        True,
        True,
    )
    assert "kubectl-ome" in names and names[2].startswith("_internal/")
    assert {(m.type, m.mode) for m in members} <= {
        (tarfile.DIRTYPE, 0o755),
        (tarfile.REGTYPE, 0o755),
        (tarfile.REGTYPE, 0o644),
    }
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(EPOCH, 0, 0, "", "")}
    assert (executable, license_text) == (b"\x7fELF", (ROOT / "LICENSE").read_bytes())
    with gzip.open(build.archive) as unzipped:
        unzipped.read(1)
        assert unzipped.mtime == EPOCH


def run(command: pathlib.Path, *argv: str, env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [str(command), *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=ROOT,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def both(krew_bin: pathlib.Path, *argv: str, **extra: str) -> tuple[tuple, tuple]:
    """The command from the unpacked archive, through krew's link, with nothing else on PATH;
    then from the virtualenv (whose script names its Python by full path) in the same
    environment, bytecode not written."""
    bundle = run(krew_bin / "kubectl-ome", *argv, env={"PATH": str(krew_bin), **extra})
    env = {"PATH": str(krew_bin), "PYTHONDONTWRITEBYTECODE": "1", **extra}
    return bundle, run(INSTALLED, *argv, env=env)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("version",), id="version"),
        pytest.param(EXPLAIN_MODEL, id="runtime explain of the samples"),
        pytest.param(("completion", "bash"), id="completion bash"),
        pytest.param(("completion", "zsh"), id="completion zsh"),
        pytest.param(("runtime", "impact", "--help"), id="a command's help"),
        pytest.param(
            (*EXPLAIN_ISVC, "--with-effective"),
            id="runtime explain --with-effective",
        ),
        pytest.param(
            (*EXPLAIN_MODEL, "-o", JSONPATH),
            id="-o jsonpath (jsonpath-ng)",
        ),
        pytest.param(
            (*"runtime effective llama-3-70b -n llama-demo -o yaml -f".split(), str(SAMPLES)),
            id="runtime effective -o yaml (PyYAML)",
        ),
        pytest.param(
            (*"runtime impact -A -f".split(), str(CHANGES / "vllm-fast.yaml"), *STATE),
            id="runtime impact",
        ),
        pytest.param(
            tuple("runtime explain --model x --server http://127.0.0.1:9 --token t".split()),
            id="an error: the API server refuses the connection",
        ),
    ],
)
def test_the_installed_plugin_needs_no_python_and_prints_what_the_virtualenvs_prints(
    krew_bin: pathlib.Path, argv: tuple[str, ...]
) -> None:
    bundle, installed = both(krew_bin, *argv)
    assert os.listdir(krew_bin) == ["kubectl-ome"]
    assert bundle == installed
    assert bundle[0] in (0, 1) and "Traceback" not in bundle[2]


async def test_online_commands_print_what_the_virtualenvs_prints(
    kube, krew_bin: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    for path in sorted(SAMPLES.glob("*.yaml")):
        for manifest in yaml.safe_load_all(path.read_text()):
            if manifest:
                await apply_object(kube, manifest)
    kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", str(kube.url)))
    commands = [
        ("runtime", "explain", "--model", "llama-3-3-70b-instruct"),
        ("runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-demo", "--with-effective"),
        ("runtime", "effective", "llama-3-70b", "-n", "llama-demo", "-o", "json"),
        ("runtime", "impact", "--delete", f"ClusterServingRuntime/{MULTINODE}", "-A"),
    ]
    for argv in commands:
        bundle, installed = await asyncio.to_thread(
            both, krew_bin, *argv, "--kubeconfig", kubeconfig
        )
        assert (argv, bundle) == (argv, installed)
        assert (argv, bundle[0], "Traceback" in bundle[2]) == (argv, 0, False)


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({}, id="the user set no library path"),
        pytest.param({"LD_LIBRARY_PATH": "/opt/user-libs"}, id="the user's library path"),
    ],
)
def test_an_exec_credential_plugin_gets_the_environment_the_user_gave(
    krew_bin: pathlib.Path, tmp_path: pathlib.Path, extra: dict[str, str]
) -> None:
    seen = tmp_path / "environment"
    plugin = tmp_path / "credential-plugin"
    plugin.write_text(
        f"#!/bin/sh\n/usr/bin/env > {seen}\n"
        'printf \'{"apiVersion":"client.authentication.k8s.io/v1beta1",'
        '"kind":"ExecCredential","status":{"token":"t"}}\\n\'\n'
    )
    plugin.chmod(0o755)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
                "users": [{"name": "u", "user": {"exec": exec_config(plugin)}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    argv = ("runtime", "explain", "--model", "m", "--kubeconfig", str(kubeconfig))
    env = {"PATH": str(krew_bin), **extra}
    run(krew_bin / "kubectl-ome", *argv, env=env)
    found = dict(line.split("=", 1) for line in seen.read_text().splitlines())
    bootloaders = sorted(name for name in found if name.startswith(("_PYI_", "LD_LIBRARY_PATH_")))
    assert ({name: found.get(name) for name in (*env, "LD_LIBRARY_PATH")}, bootloaders) == (
        {**env, "LD_LIBRARY_PATH": extra.get("LD_LIBRARY_PATH")},
        [],
    )


def exec_config(plugin: pathlib.Path) -> dict:
    return {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": str(plugin),
        "interactiveMode": "Never",
    }


def test_a_reader_that_leaves_ends_the_bundle_quietly(krew_bin: pathlib.Path) -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [str(krew_bin / "kubectl-ome"), "completion", "bash"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=RUN_TIMEOUT,
            env={"PATH": str(krew_bin)},
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")
