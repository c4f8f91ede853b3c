"""Build the krew archives of kubectl-ome and the manifest that names them.

    python manifests/krew/build_archives.py [--platform OS/ARCH ...] [--wheelhouse DIR]
        [--python-version 3.11] [--uri-base URL] [--out dist/krew]

For each platform (default: every platform of manifests/krew/ome.yaml, in its order) it makes
one archive in ``<out>``, prints ``<sha256>  <archive>``, then writes ``<out>/ome.yaml``
(manifests/krew/ome.yaml with each built archive's sha256 and, with ``--uri-base``, its uri under
that URL) and prints ``wrote <out>/ome.yaml``. Two kinds of archive:

- ``kubectl-ome_<version>_linux_amd64.tar.gz``, self-contained: the one-folder PyInstaller
  bundle of manifests/krew/kubectl-ome.spec (the executable ``kubectl-ome`` and its
  ``_internal/`` folder: CPython, the package and its dependencies), and ``LICENSE``. It needs
  nothing installed but glibc, of the newest version a bundled binary asks for: the build
  writes that version into ``<out>/ome.yaml``'s "glibc X.Y or later". PyInstaller builds for the
  machine it runs on only, so this archive is built on linux/amd64, from the Python environment
  that runs this script (``pip install -e '.[release]'``; ``--wheelhouse`` does not apply).
- ``kubectl-ome_<version>_<os>_<arch>.zip`` for linux/arm64, darwin/amd64 and darwin/arm64:
  the launcher ``kubectl-ome``, ``LICENSE`` and ``lib/``, a ``pip install --target`` of the
  project wheel (built offline from this tree) and its dependencies for the platform's wheel
  tags and ``--python-version``. It runs on that CPython version, on the user's PATH. With
  ``--wheelhouse DIR`` the dependencies come from DIR only (``pip install --no-index``); fill it
  where PyPI is reachable with ``pip download --only-binary=:all: --platform TAG
  --python-version 3.11 -d DIR <wheel>`` per platform.

Reproducible: the same tree and tools give the same bytes. The tar.gz holds directories and
regular files only (what krew unpacks), sorted, owner and group 0 with no names, modes 0755
(directories and executables) and 0644, every mtime and the gzip header's SOURCE_DATE_EPOCH
(else 0); the zips are sorted, dated 1980-01-01, modes 0755/0644.

Why one folder: start-up is most of a command's time (tests/bench/cli.py holds it against
kubectl's). Measured on the 2-core development machine (Python 3.11.7, PyInstaller 6.22.3), the
median of 10 runs each, interleaved, wall clock, the machine otherwise quiet:

    kubectl-ome ...                   version   runtime explain --model ... -f manifests/samples/
    the virtualenv's console script    21 ms    112 ms
    one folder, kubectl-ome.spec       34 ms    114 ms
    one file, the same spec           699 ms    768 ms

One file unpacks its 62 MB into a temporary directory at every start, for every command; one
folder starts within 13 ms of the virtualenv. The spec's other choices, each measured against
PyInstaller's default one-folder build (CPU time of ``version`` and ``explain``, other jobs then
sharing the machine): the default 55 and 156 ms; without the multiprocessing and pkgutil runtime
hooks 48 and 150; and with the modules as .pyc files rather than in PyInstaller's compressed
archive 37 and 128 (the virtualenv: 21 and 122). Build: 28 to 47 s (PyInstaller most of it, gzip
3 s). Archive: 17 MB; unpacked 62 MB in 1,820 files.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import pathlib
import platform as host
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Mapping

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The release's archive writer (manifests/release/archives.py): one set of rules for every
# tarball the project ships, imported as release.py imports it.
sys.path.insert(0, str(ROOT / "manifests" / "release"))
from archives import tar_gz, tar_header  # noqa: E402

MANIFEST = HERE / "ome.yaml"
LAUNCHER = HERE / "kubectl-ome"
SPEC = HERE / "kubectl-ome.spec"
PLACEHOLDER_URI = "https://releases.ome-operator.invalid/ome"
PLACEHOLDER_SHA256 = "0" * 64

#: The platforms whose archive is the self-contained bundle, built on that platform.
BUNDLED = ("linux/amd64",)
#: pip's --platform tags of the others (pip adds the older compatible tags itself).
PLATFORM_TAGS = {
    "linux/arm64": ("manylinux_2_28_aarch64", "manylinux2014_aarch64"),
    "darwin/amd64": ("macosx_11_0_x86_64",),
    "darwin/arm64": ("macosx_11_0_arm64",),
}
#: Every platform, in the manifest's order.
PLATFORMS = ("linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64")
#: krew's os/arch for what the platform module says of the machine.
_HOST_OS = {"Linux": "linux", "Darwin": "darwin"}
_HOST_ARCH = {"x86_64": "amd64", "AMD64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_NOT_SOURCE = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
#: A glibc symbol version a binary asks for, as its dynamic string table spells it.
_GLIBC_VERSION = re.compile(rb"GLIBC_(\d+)\.(\d+)(?:\.\d+)?\x00")
_GLIBC_PHRASE = re.compile(r"glibc \d+\.\d+ or later")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    version = "v" + _package_version()
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    epoch = source_date_epoch(os.environ)
    manifest = MANIFEST.read_text()
    digests = {}
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = pathlib.Path(scratch_dir)
        for platform in args.platform or PLATFORMS:
            stem = f"kubectl-ome_{version}_{platform.replace('/', '_')}"
            if platform in BUNDLED:
                archive = out / f"{stem}.tar.gz"
                bundle = _bundle(platform, scratch / stem)
                manifest = state_glibc(manifest, glibc_needed(_elf_files(bundle)))
                _write_tarball(archive, bundle, epoch)
            else:
                archive = out / f"{stem}.zip"
                wheel = _project_wheel(scratch / "wheel")
                stage = scratch / stem
                _install(wheel, stage / "lib", platform, args.python_version, args.wheelhouse)
                _write_zip(archive, stage, args.python_version)
            digests[archive.name] = hashlib.sha256(archive.read_bytes()).hexdigest()
            print(f"{digests[archive.name]}  {archive}", flush=True)
    (out / "ome.yaml").write_text(_release_manifest(manifest, digests, args.uri_base))
    print(f"wrote {out / 'ome.yaml'}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Build the krew archives of kubectl-ome")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS))
    parser.add_argument("--python-version", default="3.11", help="of the .zip archives")
    parser.add_argument("--wheelhouse", help="install the .zip archives' dependencies from here")
    parser.add_argument("--uri-base", default=PLACEHOLDER_URI)
    parser.add_argument("--out", default=str(ROOT / "dist" / "krew"))
    return parser


def _package_version() -> str:
    text = (ROOT / "operator" / "ome_operator" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if found is None:
        raise SystemExit("error: no __version__ in ome_operator/__init__.py")
    return found.group(1)


def source_date_epoch(environ: Mapping[str, str]) -> int:
    """The archives' one timestamp: SOURCE_DATE_EPOCH, else 0."""
    value = environ.get("SOURCE_DATE_EPOCH", "0")
    if not value.isdigit():
        raise SystemExit(f"error: SOURCE_DATE_EPOCH must be whole seconds, not {value!r}")
    return int(value)


def _host_platform() -> str:
    system, machine = host.system(), host.machine()
    return f"{_HOST_OS.get(system, system)}/{_HOST_ARCH.get(machine, machine)}"


def _bundle(platform: str, scratch: pathlib.Path) -> pathlib.Path:
    """The one-folder PyInstaller build of kubectl-ome.spec, for this machine."""
    if platform != _host_platform():
        raise SystemExit(
            f"error: the {platform} archive is built on {platform} (PyInstaller builds for "
            f"the machine it runs on); this is {_host_platform()}"
        )
    if importlib.util.find_spec("PyInstaller") is None:
        raise SystemExit("error: PyInstaller is not installed: pip install -e '.[release]'")
    work, dist = scratch / "work", scratch / "dist"
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN"]
    command += ["--workpath", str(work), "--distpath", str(dist), str(SPEC)]
    subprocess.run(command, check=True, cwd=scratch.parent)
    return dist / "kubectl-ome"


def _elf_files(bundle: pathlib.Path) -> Iterable[bytes]:
    for path in sorted(bundle.rglob("*")):
        data = path.read_bytes() if path.is_file() else b""
        if data.startswith(b"\x7fELF"):
            yield data


def glibc_needed(binaries: Iterable[bytes]) -> tuple[int, int]:
    """The newest glibc version the binaries ask for (their GLIBC_X.Y symbol versions)."""
    found = [
        (int(major), int(minor))
        for binary in binaries
        for major, minor in _GLIBC_VERSION.findall(binary)
    ]
    return max(found, default=(2, 0))


def state_glibc(manifest: str, version: tuple[int, int]) -> str:
    """The manifest with its "glibc X.Y or later" naming the version the bundle needs."""
    if _GLIBC_PHRASE.search(manifest) is None:
        raise SystemExit(f'error: {MANIFEST.name} says no "glibc X.Y or later"')
    return _GLIBC_PHRASE.sub("glibc {}.{} or later".format(*version), manifest)


def _write_tarball(archive: pathlib.Path, bundle: pathlib.Path, mtime: int) -> None:
    """The bundle and LICENSE as krew unpacks them: directories and regular files only, each
    streamed from disk (62 MB)."""
    entries = {path.relative_to(bundle).as_posix(): path for path in bundle.rglob("*")}
    entries["LICENSE"] = ROOT / "LICENSE"
    with archive.open("wb") as raw, tar_gz(raw, mtime, compresslevel=6) as tar:
        for name in sorted(entries):
            path = entries[name]
            member = tar_member(name, path.lstat().st_mode, path.lstat().st_size, mtime)
            if member.isdir():
                tar.addfile(member)
            else:
                with path.open("rb") as data:
                    tar.addfile(member, data)


def tar_member(name: str, mode: int, size: int, mtime: int) -> tarfile.TarInfo:
    """The tar header of a file or directory (``tar_header``'s: owner 0:0 without names, mode
    0755 or 0644); krew unpacks nothing else, nor a name with '..' in it."""
    if ".." in name:
        raise SystemExit(f"error: {name}: krew refuses a name with '..' in it")
    if mode & 0o170000 == 0o040000:
        return tar_header(name, mtime, None)
    if mode & 0o170000 == 0o100000:
        return tar_header(name, mtime, size, executable=bool(mode & 0o111))
    raise SystemExit(f"error: {name} is neither a file nor a directory: krew cannot unpack it")


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], check=True)


def _project_wheel(scratch: pathlib.Path) -> pathlib.Path:
    """The project wheel, built once from a copy of the tree: setuptools would also pack
    whatever a former build left in the tree's build/lib."""
    built = sorted(scratch.glob("ome_operator-*.whl"))
    if built:
        return built[0]
    source = scratch / "source"
    shutil.copytree(ROOT / "operator", source / "operator", ignore=_NOT_SOURCE)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(scratch), str(source))
    (wheel,) = scratch.glob("ome_operator-*.whl")
    return wheel


def _install(
    wheel: pathlib.Path,
    target: pathlib.Path,
    platform: str,
    python_version: str,
    wheelhouse: str | None,
) -> None:
    tags = [arg for tag in PLATFORM_TAGS[platform] for arg in ("--platform", tag)]
    source = ["--no-index", "--find-links", wheelhouse] if wheelhouse else []
    _pip(
        "install",
        "-q",
        "--target",
        str(target),
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python_version,
        *tags,
        *source,
        str(wheel),
    )
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts of the build's Python
    _forget_the_scratch_path(target)


def _forget_the_scratch_path(target: pathlib.Path) -> None:
    """Drop pip's direct_url.json (and its RECORD line): it names the wheel's scratch path,
    which would make every build's archive differ."""
    for direct_url in target.glob("*.dist-info/direct_url.json"):
        record = direct_url.with_name("RECORD")
        entry = f"{direct_url.parent.name}/direct_url.json,"
        kept = [line for line in record.read_text().splitlines() if not line.startswith(entry)]
        record.write_text("\n".join(kept) + "\n")
        direct_url.unlink()


def _launcher(python_version: str) -> str:
    major, minor = python_version.split(".")
    text = LAUNCHER.read_text()
    return text.replace("PYTHON = (3, 11)", f"PYTHON = ({int(major)}, {int(minor)})", 1)


def _write_zip(archive: pathlib.Path, stage: pathlib.Path, python_version: str) -> None:
    entries = {"kubectl-ome": (_launcher(python_version).encode(), 0o755)}
    entries["LICENSE"] = ((ROOT / "LICENSE").read_bytes(), 0o644)
    for path in sorted(stage.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            entries[path.relative_to(stage).as_posix()] = (path.read_bytes(), mode)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name in sorted(entries):
            data, mode = entries[name]
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(info, data)


def _release_manifest(text: str, digests: Mapping[str, str], uri_base: str) -> str:
    """The manifest with each built archive's sha256 and uri; other platforms untouched."""
    lines = text.splitlines(keepends=True)
    named = set()
    for index, line in enumerate(lines):
        found = re.match(r"(\s*)uri: (\S+)/([^/\s]+\.(?:zip|tar\.gz))$", line.rstrip("\n"))
        if found is None or found.group(3) not in digests:
            continue
        indent, _, name = found.groups()
        version = name.split("_")[1]
        lines[index] = f"{indent}uri: {uri_base.rstrip('/')}/{version}/{name}\n"
        sha = lines[index + 1]
        if PLACEHOLDER_SHA256 not in sha:
            raise SystemExit(f"error: no placeholder sha256 after the uri of {name}")
        lines[index + 1] = sha.replace(PLACEHOLDER_SHA256, digests[name])
        named.add(name)
    if missing := sorted(set(digests) - named):
        raise SystemExit(f"error: {MANIFEST.name} names no uri for {', '.join(missing)}")
    return "".join(lines)


if __name__ == "__main__":
    sys.exit(main())
