"""What ``pip install ome-operator`` installs, read from this environment's installed
distributions, and a wheelhouse of them re-packed as wheels, so that a release builds offline.

``runtime_closure`` follows each distribution's ``Requires-Dist`` (importlib.metadata), with its
environment markers and the extras asked for, from ome-operator down. ``write_wheelhouse``
zips each distribution's files (its RECORD) back into a wheel with a fresh RECORD, a compiled
one tagged for the platform asked for (the krew build picks wheels by tag). The binaries inside
stay this machine's: such a wheelhouse makes a krew archive to inspect, never one to run.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import pathlib
import re
import zipfile
from collections.abc import Iterable, Mapping

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT = "ome-operator"
#: The platform tag of linux/arm64 in manifests/krew/build_archives.py, whose archive is built
#: from wheels (linux/amd64's is a PyInstaller bundle of this environment).
LINUX_ARM64 = "manylinux_2_28_aarch64"
#: dist-info files pip writes at install time, which no wheel carries.
_INSTALL_RECORDS = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
_EPOCH = (1980, 1, 1, 0, 0, 0)


def runtime_closure(project: str = PROJECT) -> dict[str, importlib.metadata.Distribution]:
    """Every installed distribution ``pip install <project>`` needs, by normalized name, the
    project's own included."""
    found: dict[str, importlib.metadata.Distribution] = {}
    extras_seen: dict[str, set[str]] = {}
    pending = [(project, frozenset[str]())]
    while pending:
        name, extras = pending.pop()
        key = canonicalize_name(name)
        if key in found and extras <= extras_seen[key]:
            continue
        found[key] = importlib.metadata.distribution(name)
        extras_seen.setdefault(key, set()).update(extras)
        pending.extend(_requirements(found[key], extras))
    return dict(sorted(found.items()))


def _requirements(
    distribution: importlib.metadata.Distribution, extras: frozenset[str]
) -> list[tuple[str, frozenset[str]]]:
    """The requirements of ``distribution`` whose markers hold here, for its ``extras``."""
    wanted = []
    for line in distribution.requires or []:
        requirement = Requirement(line)
        environments = [{"extra": extra} for extra in sorted(extras) or [""]]
        if requirement.marker is None or any(map(requirement.marker.evaluate, environments)):
            wanted.append((requirement.name, frozenset(requirement.extras)))
    return wanted


def write_wheelhouse(
    distributions: Mapping[str, importlib.metadata.Distribution],
    folder: pathlib.Path,
    platform_tag: str = LINUX_ARM64,
) -> list[pathlib.Path]:
    """One wheel per distribution in ``folder``, a compiled one tagged ``platform_tag``; the
    project's own left out (the release builds it from the tree)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [
        _repack(distribution, folder, platform_tag)
        for key, distribution in distributions.items()
        if key != canonicalize_name(PROJECT)
    ]


def _repack(
    distribution: importlib.metadata.Distribution, folder: pathlib.Path, platform_tag: str
) -> pathlib.Path:
    files = {
        str(path): distribution.locate_file(path).read_bytes()
        for path in distribution.files or []
        if _packed(str(path))
    }
    (info,) = {name.split("/")[0] for name in files if name.split("/")[0].endswith(".dist-info")}
    tags = wheel_tags(files[f"{info}/WHEEL"].decode(), platform_tag)
    files[f"{info}/WHEEL"] = _retagged(files[f"{info}/WHEEL"].decode(), tags).encode()
    files[f"{info}/RECORD"] = _record(files, f"{info}/RECORD").encode()
    name = re.sub(r"[-_.]+", "_", distribution.metadata["Name"]).lower()
    wheel = folder / f"{name}-{distribution.version}-{_compressed(tags)}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(files):
            zipped.writestr(zipfile.ZipInfo(path, date_time=_EPOCH), files[path])
    return wheel


def _packed(path: str) -> bool:
    """Whether an installed file belongs in the wheel: not a script outside site-packages,
    not bytecode, not a record pip wrote at install time."""
    parts = path.split("/")
    return (
        parts[0] != ".."
        and "__pycache__" not in parts
        and not (parts[0].endswith(".dist-info") and parts[-1] in _INSTALL_RECORDS)
    )


def wheel_tags(wheel_file: str, platform_tag: str) -> list[str]:
    """The ``Tag:`` lines of a WHEEL file, a compiled one's platform made ``platform_tag``."""
    tags = re.findall(r"^Tag: (\S+)$", wheel_file, re.MULTILINE)
    compiled = sorted({tag.rsplit("-", 1)[0] for tag in tags if not tag.endswith("-any")})
    return [f"{prefix}-{platform_tag}" for prefix in compiled] or tags


def _retagged(wheel_file: str, tags: Iterable[str]) -> str:
    kept = [line for line in wheel_file.splitlines() if not line.startswith("Tag: ")]
    return "\n".join([*kept, *(f"Tag: {tag}" for tag in tags)]) + "\n"


def _compressed(tags: list[str]) -> str:
    """The file-name form of a tag set: each part's values joined by dots."""
    parts = [sorted({tag.split("-")[index] for tag in tags}) for index in range(3)]
    return "-".join(".".join(values) for values in parts)


def _record(files: Mapping[str, bytes], record: str) -> str:
    lines = []
    for path in sorted(files):
        digest = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=")
        lines.append(f"{path},sha256={digest.decode()},{len(files[path])}")
    return "\n".join([*lines, f"{record},,"]) + "\n"
