"""Archives that are the same bytes every time: one date (the release's SOURCE_DATE_EPOCH) and
modes 0644 or 0755; in a tarball, members sorted by name, owner and group 0 with no names and a
gzip header with that date and no file name.

Every tarball's members get ``tar_header``'s headers in a ``tar_gz`` writer: the krew archive
(manifests/krew/build_archives.py) streams its bundle's files so; the others are written from a
list of ``Entry`` (``tarball_bytes``), so a Helm chart package and
a re-packed sdist come out alike: the chart's entries are read from its folder
(``chart_entries``), the sdist's from the tarball setuptools wrote (``tarball_entries``), whose
dates carry the build's clock. A wheel is re-packed too, in its own order (``normalized_zip``): its
RECORD names no date or mode, so the re-packed wheel is as valid as the one built.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import gzip
import io
import pathlib
import tarfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from typing import BinaryIO

#: A chart's file of ignore patterns, as ``helm package`` reads it.
HELMIGNORE = ".helmignore"
#: What ``helm package`` leaves out whatever .helmignore says: hidden files under templates/.
HELM_DEFAULT_IGNORES = ("templates/.?*",)
#: The earliest date a zip can hold (1980-01-01).
_ZIP_EARLIEST = 315532800


@dataclasses.dataclass(frozen=True)
class Entry:
    """One tarball member: a file (``data``) or, with ``data`` None, a folder."""

    name: str
    data: bytes | None
    executable: bool = False


def tar_header(
    name: str, mtime: int, size: int | None, executable: bool = False
) -> tarfile.TarInfo:
    """The header of a member dated ``mtime``, owner and group 0 without names: a folder (``size``
    None, mode 0755) or a file of ``size`` bytes (0755 when ``executable``, else 0644)."""
    info = tarfile.TarInfo(name)
    if size is None:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
    else:
        info.type, info.size = tarfile.REGTYPE, size
        info.mode = 0o755 if executable else 0o644
    info.mtime, info.uid, info.gid, info.uname, info.gname = mtime, 0, 0, "", ""
    return info


@contextlib.contextmanager
def tar_gz(raw: BinaryIO, mtime: int, compresslevel: int = 9) -> Iterator[tarfile.TarFile]:
    """A tar writer into ``raw``, gzipped with ``mtime`` and no file name in the gzip header; the
    caller adds the members, in its order, with ``tar_header``'s headers."""
    with (
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, mtime=mtime, compresslevel=compresslevel
        ) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        yield tar


def tarball_bytes(entries: Iterable[Entry], mtime: int) -> bytes:
    """A .tar.gz of ``entries``, sorted by name, every member dated ``mtime``."""
    packed = io.BytesIO()
    with tar_gz(packed, mtime) as tar:
        for entry in sorted(entries, key=lambda e: e.name):
            size = None if entry.data is None else len(entry.data)
            info = tar_header(entry.name, mtime, size, entry.executable)
            tar.addfile(info, None if entry.data is None else io.BytesIO(entry.data))
    return packed.getvalue()


def tarball_entries(data: bytes) -> list[Entry]:
    """The files and folders of a .tar.gz (any other member type is an error)."""
    entries = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isdir():
                entries.append(Entry(member.name.rstrip("/"), None))
            elif member.isfile():
                content = tar.extractfile(member)
                assert content is not None  # a regular file always has content
                entries.append(Entry(member.name, content.read(), bool(member.mode & 0o111)))
            else:
                raise ValueError(f"{member.name}: a tarball member that is not a file or folder")
    return entries


def chart_entries(chart: pathlib.Path, name: str) -> list[Entry]:
    """The files of the chart folder under the top folder ``name``, as ``helm package`` packs
    them: no folder entries, and nothing that .helmignore or Helm's defaults leave out."""
    patterns = (*HELM_DEFAULT_IGNORES, *helmignore_patterns(chart))
    entries = []
    for path in sorted(chart.rglob("*")):
        relative = path.relative_to(chart).as_posix()
        if path.is_file() and not _ignored(relative, patterns):
            executable = bool(path.stat().st_mode & 0o111)
            entries.append(Entry(f"{name}/{relative}", path.read_bytes(), executable))
    return entries


def helmignore_patterns(chart: pathlib.Path) -> tuple[str, ...]:
    """The patterns of the chart's .helmignore (none without one); blank lines and comments
    skipped."""
    path = chart / HELMIGNORE
    if not path.is_file():
        return ()
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


def _ignored(relative: str, patterns: Iterable[str]) -> bool:
    """Whether a pattern leaves out the file or one of the folders above it. A pattern with a
    ``/`` inside matches the path from the chart's folder, one without matches a name; a
    trailing ``/`` matches folders only."""
    parts = relative.split("/")
    for pattern in patterns:
        folder_only = pattern.endswith("/")
        pattern = pattern.strip("/")
        for depth in range(1, len(parts) + 1):
            if folder_only and depth == len(parts):
                continue
            subject = "/".join(parts[:depth]) if "/" in pattern else parts[depth - 1]
            if fnmatch.fnmatchcase(subject, pattern):
                return True
    return False


def normalized_zip(data: bytes, epoch: int) -> bytes:
    """The zip ``data`` re-packed: members in their order, each dated ``epoch`` in UTC (1980
    at the earliest, as zip dates begin then), mode 0644 or 0755, deflated."""
    date_time = time.gmtime(max(epoch, _ZIP_EARLIEST))[:6]
    packed = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for member in source.infolist():
            executable = bool((member.external_attr >> 16) & 0o111)
            info = zipfile.ZipInfo(member.filename, date_time=date_time)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.create_system = 3  # Unix, so that the mode bits are read
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, source.read(member))
    return packed.getvalue()
