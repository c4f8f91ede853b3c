"""Fill dist/ with the files of a release (docs/releasing.md says how a release is cut).

    python manifests/release/release.py [--version V] [--out dist] [--wheelhouse DIR]
        [--helm PATH] [--kubectl PATH] [--chart DIR] [--krew-platform OS/ARCH ...]
        [--krew-uri-base URL]

Writes, into an empty (or new) ``--out`` folder:

- ``ome-operator-<version>.yaml``: the one-file install, the CRDs (``kubectl kustomize
  manifests/crds/``), the namespace (``manifests/namespace/``) and then the operator
  (``manifests/``);
- ``ome_operator-<version>-py3-none-any.whl`` and ``ome_operator-<version>.tar.gz``, built
  offline from this tree with the setuptools installed here (no build isolation);
- ``<chart>-<chart version>.tgz``, the Helm chart of charts/ome-operator/ when that folder
  exists (with ``helm package`` when a helm binary is given or found, else packed here);
- ``krew/``: the kubectl-ome archives and their krew manifest, by
  manifests/krew/build_archives.py (``--wheelhouse``, ``--krew-platform`` and
  ``--krew-uri-base`` are handed to it as ``--wheelhouse``, ``--platform`` and ``--uri-base``);
- ``ome-operator-<version>.cdx.json``: the CycloneDX SBOM of the image's Python distributions
  (requirements.lock beside this file, and the project);
- ``SHA256SUMS``: the sha256 of every other file, in ``sha256sum`` format, sorted by path.

The same tree and tools give the same bytes: the wheel, the sdist, the chart and the SBOM are
dated SOURCE_DATE_EPOCH (from the environment, else the time of the last git commit), with
fixed modes, and tarballs sorted and owned by 0 (archives.py); build_archives.py fixes the krew
archives' own. ``--version`` only checks: the version is ``__version__`` of
operator/ome_operator/__init__.py, and every file that repeats it must agree.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from email.message import Message
from email.parser import Parser
from typing import Any

import yaml
from archives import chart_entries, normalized_zip, tarball_bytes, tarball_entries
from lock_file import LOCK_FILE, read_pins
from sbom import licenses_of, release_timestamp, render_sbom, sbom_text
from versions import package_version, version_disagreements

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFESTS = ROOT / "manifests"
KREW_BUILD = MANIFESTS / "krew" / "build_archives.py"
CHART = ROOT / "charts" / "ome-operator"
#: The kustomizations of the install below manifests/, in the order they are applied.
INSTALL_ORDER = ("crds", "namespace", ".")
#: Where the control-plane tests cache their binaries; a helm there is used when none is given.
HELM_CACHE = pathlib.Path.home() / ".cache" / "ome-operator" / "controlplane"
CHECKSUMS = "SHA256SUMS"
#: What the wheel and the sdist are built from (a copy: a former build/ would leak into them).
SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE")
_WHEEL_METADATA = re.compile(r"[^/]+\.dist-info/METADATA")
_NOT_SOURCE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
#: A PEP 517 hook, run in the copy of the tree, one process each (as `python -m build
#: --no-isolation` runs them: setuptools keeps state between two hooks of one process).
_BUILD = (
    "import sys; from setuptools import build_meta; getattr(build_meta, sys.argv[1])(sys.argv[2])"
)


class ReleaseError(Exception):
    """A release that cannot be made as asked; the message says why and what to do."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        release(args)
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def release(args: argparse.Namespace) -> None:
    version = package_version(ROOT)
    chart = pathlib.Path(args.chart)
    if disagreements := version_disagreements(ROOT, version, args.version, chart):
        raise ReleaseError(
            "the version is not the same everywhere:\n  " + "\n  ".join(disagreements)
        )
    epoch = source_date_epoch(os.environ, ROOT)
    kubectl = shutil.which(args.kubectl or "kubectl")
    if kubectl is None:
        raise ReleaseError(
            f"--kubectl {args.kubectl} is not an executable"
            if args.kubectl
            else "no kubectl on PATH to render the install: give --kubectl PATH"
        )
    out = pathlib.Path(args.out).resolve()
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{args.out} is not empty: remove it first (every file is made anew)")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = pathlib.Path(scratch_name)
        _write(out / f"ome-operator-{version}.yaml", install_yaml(kubectl, version).encode())
        for name, data in distributions(scratch / "build", epoch).items():
            _write(out / name, data)
        package = chart_step(chart, helm_binary(args.helm), scratch / "helm", epoch)
        if package is not None:
            _write(out / package[0], package[1])
        _krew(out / "krew", args, epoch)
    sbom = render_sbom(read_pins(LOCK_FILE.read_text()), _licenses(args.wheelhouse), version, epoch)
    _write(out / f"ome-operator-{version}.cdx.json", sbom_text(sbom).encode())
    _write(out / CHECKSUMS, checksums_text(out).encode())
    print(f"image: docker build {' '.join(image_build_args(version, epoch))} .")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Fill dist/ with the files of a release")
    parser.add_argument("--version", help="the version to release: checked, never written")
    parser.add_argument("--out", default=str(ROOT / "dist"))
    parser.add_argument("--wheelhouse", help="the dependency wheels, for krew and the SBOM")
    parser.add_argument("--helm", help="package the chart with this helm binary")
    parser.add_argument("--kubectl", help="render the install with this kubectl")
    parser.add_argument("--chart", default=str(CHART), help="the chart folder")
    parser.add_argument("--krew-platform", action="append", help="OS/ARCH (default: all)")
    parser.add_argument("--krew-uri-base", help="where the krew archives will be downloaded")
    return parser


def source_date_epoch(environ: Mapping[str, str], root: pathlib.Path) -> int:
    """SOURCE_DATE_EPOCH from the environment, else the time of the last git commit."""
    if (given := environ.get("SOURCE_DATE_EPOCH")) is not None:
        if not given.isdigit():
            raise ReleaseError(f"SOURCE_DATE_EPOCH is not a number of seconds: {given!r}")
        return int(given)
    done = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%ct"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise ReleaseError("no git commit to date the release from: set SOURCE_DATE_EPOCH")
    return int(done.stdout.strip())


def install_yaml(kubectl: str, version: str) -> str:
    """The CRDs, the namespace and then the operator, as their kustomizations render them."""
    header = (
        f"# ome-operator {version}: the CRDs, the namespace `ome`, then the operator\n"
        "# (docs/releasing.md). `kubectl delete -f` of this file would delete the CRDs, and with\n"
        "# them every InferenceService and its workloads: remove the operator as\n"
        "# docs/uninstall.md says.\n"
    )
    rendered = [_kustomize(kubectl, MANIFESTS / folder) for folder in INSTALL_ORDER]
    return header + "---\n".join(rendered)


def _kustomize(kubectl: str, folder: pathlib.Path) -> str:
    done = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ReleaseError(f"kubectl kustomize {folder} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def distributions(scratch: pathlib.Path, epoch: int) -> dict[str, bytes]:
    """The sdist and the wheel of the project, built from a copy of the tree, re-packed."""
    source = scratch / "source"
    shutil.copytree(ROOT / "operator", source / "operator", ignore=_NOT_SOURCE)
    for name in SOURCE_FILES:
        shutil.copy2(ROOT / name, source / name)
    built = scratch / "dist"
    for hook in ("build_sdist", "build_wheel"):
        done = subprocess.run(
            [sys.executable, "-c", _BUILD, hook, str(built)],
            cwd=source,
            env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch)},
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ReleaseError(f"setuptools' {hook} failed:\n{done.stdout}{done.stderr}")
    (sdist,) = built.glob("*.tar.gz")
    (wheel,) = built.glob("*.whl")
    return {
        sdist.name: tarball_bytes(tarball_entries(sdist.read_bytes()), epoch),
        wheel.name: normalized_zip(wheel.read_bytes(), epoch),
    }


def chart_step(
    chart: pathlib.Path, helm: str | None, scratch: pathlib.Path, epoch: int
) -> tuple[str, bytes] | None:
    """The chart package, or none, with a note, when the chart folder does not exist."""
    if not chart.is_dir():
        print(f"note: no chart package: {_shown(chart)} does not exist", flush=True)
        return None
    return chart_package(chart, helm, scratch, epoch)


def chart_package(
    chart: pathlib.Path, helm: str | None, scratch: pathlib.Path, epoch: int
) -> tuple[str, bytes]:
    """``<name>-<version>.tgz`` of the chart: ``helm package``'s, re-packed, or packed here."""
    meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    name, version = meta["name"], meta["version"]
    package = f"{name}-{version}.tgz"
    if helm is None:
        return package, tarball_bytes(chart_entries(chart, name), epoch)
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [helm, "package", str(chart), "--destination", str(scratch)],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as error:
        raise ReleaseError(f"cannot run helm {helm}: {error.strerror}") from error
    if done.returncode != 0:
        raise ReleaseError(f"helm package {chart} exited {done.returncode}:\n{done.stderr}")
    return package, tarball_bytes(tarball_entries((scratch / package).read_bytes()), epoch)


def helm_binary(given: str | None, cache: pathlib.Path = HELM_CACHE) -> str | None:
    """The helm binary: the one given, else the last by name of the cache's ``helm-*/helm``,
    else none (the chart is then packed here)."""
    if given is not None:
        return given
    cached = sorted(cache.glob("helm-*/helm"))
    return str(cached[-1]) if cached else None


def _krew(out: pathlib.Path, args: argparse.Namespace, epoch: int) -> None:
    """manifests/krew/build_archives.py, through its command line."""
    command = [sys.executable, str(KREW_BUILD), "--out", str(out)]
    if args.wheelhouse:
        command += ["--wheelhouse", str(pathlib.Path(args.wheelhouse).resolve())]
    for platform in args.krew_platform or ():
        command += ["--platform", platform]
    if args.krew_uri_base:
        command += ["--uri-base", args.krew_uri_base]
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch)})
    if done.returncode != 0:
        raise ReleaseError(f"{KREW_BUILD.relative_to(ROOT)} exited {done.returncode}")


def _licenses(wheelhouse: str | None) -> dict[str, list[dict[str, Any]]]:
    """The licenses the metadata of each locked distribution states, read from its wheel in
    the wheelhouse or from the installed distribution of the same version."""
    found = {}
    wanted = {(pin.name, pin.version) for pin in read_pins(LOCK_FILE.read_text())}
    for (name, version), metadata in _metadata(wheelhouse):
        if (name, version) in wanted and name not in found:
            found[name] = licenses_of(metadata)
    return found


def _metadata(wheelhouse: str | None) -> Iterator[tuple[tuple[str, str], Message]]:
    """(normalized name, version) and the metadata of each wheel of the wheelhouse, then of
    each installed distribution."""
    wheels = sorted(pathlib.Path(wheelhouse).glob("*.whl")) if wheelhouse else []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zipped:
            (path,) = [n for n in zipped.namelist() if _WHEEL_METADATA.fullmatch(n)]
            metadata = Parser().parsestr(zipped.read(path).decode("utf-8"))
        yield (_normalized(metadata["Name"]), metadata["Version"]), metadata
    for distribution in importlib.metadata.distributions():
        metadata = distribution.metadata
        if metadata["Name"] and metadata["Version"]:
            yield (_normalized(metadata["Name"]), metadata["Version"]), metadata


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def checksums_text(out: pathlib.Path) -> str:
    """``sha256sum`` lines of every file below ``out`` but SHA256SUMS, sorted by path."""
    files = sorted(
        path.relative_to(out).as_posix()
        for path in out.rglob("*")
        if path.is_file() and path.name != CHECKSUMS
    )
    return "".join(f"{_sha256(out / name)}  {name}\n" for name in files)


def _sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def image_build_args(version: str, epoch: int) -> list[str]:
    """The ``docker build`` arguments of the release's image (docs/releasing.md)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    revision = done.stdout.strip() if done.returncode == 0 else "unknown"
    created = release_timestamp(epoch)
    return [
        f"--build-arg VERSION={version}",
        f"--build-arg REVISION={revision}",
        f"--build-arg CREATED={created}",
        f"-t ome-operator:{version}",
    ]


def _shown(path: pathlib.Path) -> str:
    """A path as a message shows it: from the repository's root when it is inside it."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _write(path: pathlib.Path, data: bytes) -> None:
    path.write_bytes(data)
    print(f"{hashlib.sha256(data).hexdigest()}  {path}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
