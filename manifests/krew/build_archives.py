"""Build the krew archives of kubectl-ome and the manifest that names them.

    python manifests/krew/build_archives.py [--platform OS/ARCH ...] [--wheelhouse DIR]
        [--python-version 3.11] [--uri-base URL] [--out dist/krew]

For each platform (default: every platform of manifests/krew/ome.yaml) it makes
``<out>/kubectl-ome_<version>_<os>_<arch>.zip``: the launcher ``kubectl-ome``, ``LICENSE``,
and ``lib/``, a ``pip install --target`` of the project wheel and its dependencies for the
platform's wheel tags. It then writes ``<out>/ome.yaml``: manifests/krew/ome.yaml with each
archive's sha256 (and, with ``--uri-base``, its uri under that URL).

Offline: the project wheel is built from this tree without build isolation; with
``--wheelhouse DIR`` the dependencies come from DIR only (``pip install --no-index``). Fill DIR
once, where PyPI is reachable, with
``pip download --only-binary=:all: --platform TAG --python-version 3.11 -d DIR <wheel>`` per
platform, or leave ``--wheelhouse`` out to let pip fetch them.

Archives are reproducible: entries sorted, timestamps fixed, modes 0755/0644.
"""

from __future__ import annotations

import argparse
import hashlib
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "ome.yaml"
LAUNCHER = HERE / "kubectl-ome"
PLACEHOLDER_URI = "https://releases.ome-operator.invalid/ome"
PLACEHOLDER_SHA256 = "0" * 64

#: pip's --platform tags per krew os/arch (pip adds the older compatible tags itself).
PLATFORM_TAGS = {
    "linux/amd64": ("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
    "linux/arm64": ("manylinux_2_28_aarch64", "manylinux2014_aarch64"),
    "darwin/amd64": ("macosx_11_0_x86_64",),
    "darwin/arm64": ("macosx_11_0_arm64",),
}
_EPOCH = (1980, 1, 1, 0, 0, 0)
_NOT_SOURCE = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    version = "v" + _package_version()
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        wheel = _project_wheel(pathlib.Path(scratch))
        digests = {}
        for platform in args.platform or list(PLATFORM_TAGS):
            archive = out / f"kubectl-ome_{version}_{platform.replace('/', '_')}.zip"
            stage = pathlib.Path(scratch) / platform.replace("/", "_")
            _install(wheel, stage / "lib", platform, args.python_version, args.wheelhouse)
            _write_archive(archive, stage, args.python_version)
            digests[archive.name] = hashlib.sha256(archive.read_bytes()).hexdigest()
            print(f"{digests[archive.name]}  {archive}")
    manifest = _release_manifest(MANIFEST.read_text(), digests, args.uri_base)
    (out / "ome.yaml").write_text(manifest)
    print(f"wrote {out / 'ome.yaml'}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Build the krew archives of kubectl-ome")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORM_TAGS))
    parser.add_argument("--python-version", default="3.11")
    parser.add_argument("--wheelhouse", help="install the dependencies from here only")
    parser.add_argument("--uri-base", default=PLACEHOLDER_URI)
    parser.add_argument("--out", default=str(ROOT / "dist" / "krew"))
    return parser


def _package_version() -> str:
    text = (ROOT / "operator" / "ome_operator" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if found is None:
        raise SystemExit("error: no __version__ in ome_operator/__init__.py")
    return found.group(1)


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], check=True)


def _project_wheel(scratch: pathlib.Path) -> pathlib.Path:
    """The project wheel, built from a copy of the tree: setuptools would also pack whatever a
    former build left in the tree's build/lib."""
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


def _write_archive(archive: pathlib.Path, stage: pathlib.Path, python_version: str) -> None:
    entries = {"kubectl-ome": (_launcher(python_version).encode(), 0o755)}
    entries["LICENSE"] = ((ROOT / "LICENSE").read_bytes(), 0o644)
    for path in sorted(stage.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            entries[path.relative_to(stage).as_posix()] = (path.read_bytes(), mode)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name in sorted(entries):
            data, mode = entries[name]
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(info, data)


def _release_manifest(text: str, digests: dict[str, str], uri_base: str) -> str:
    """The manifest with each built archive's sha256 and uri; other platforms untouched."""
    lines = text.splitlines(keepends=True)
    named = set()
    for index, line in enumerate(lines):
        found = re.match(r"(\s*)uri: (\S+)/([^/\s]+\.zip)$", line.rstrip("\n"))
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
