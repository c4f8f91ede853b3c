"""Archives that are the same bytes every time (manifests/release/archives.py): tarballs sorted,
dated, owned by 0 and with a fixed gzip header; a chart folder packed as ``helm package`` packs
it, .helmignore obeyed; zips re-dated and their modes fixed."""

from __future__ import annotations

import io
import pathlib
import tarfile
import zipfile

import pytest
from archives import Entry, chart_entries, normalized_zip, tarball_bytes, tarball_entries

EPOCH = 1767225600
ENTRIES = [
    Entry("pkg/b.txt", b"bee\n"),
    Entry("pkg", None),
    Entry("pkg/run.sh", b"#!/bin/sh\n", executable=True),
]


def members(data: bytes) -> list[tuple]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return [(m.name, m.type, m.mode, m.mtime, m.uid, m.gid, m.uname, m.gname) for m in tar]


def test_a_tarball_is_sorted_dated_and_owned_by_no_one():
    assert members(tarball_bytes(ENTRIES, EPOCH)) == [
        ("pkg", tarfile.DIRTYPE, 0o755, EPOCH, 0, 0, "", ""),
        ("pkg/b.txt", tarfile.REGTYPE, 0o644, EPOCH, 0, 0, "", ""),
        ("pkg/run.sh", tarfile.REGTYPE, 0o755, EPOCH, 0, 0, "", ""),
    ]


def test_a_tarballs_gzip_header_holds_the_date_and_no_file_name():
    header = tarball_bytes(ENTRIES, EPOCH)[:10]
    assert (header[3] & 0x08, int.from_bytes(header[4:8], "little")) == (0, EPOCH)


def test_the_same_entries_in_any_order_give_the_same_bytes():
    assert tarball_bytes(ENTRIES, EPOCH) == tarball_bytes(reversed(ENTRIES), EPOCH)


def test_a_tarball_read_back_gives_its_entries_sorted():
    assert tarball_entries(tarball_bytes(ENTRIES, EPOCH)) == sorted(ENTRIES, key=lambda e: e.name)


def test_a_tarball_with_a_link_is_refused():
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        link = tarfile.TarInfo("pkg/link")
        link.type, link.linkname = tarfile.SYMTYPE, "b.txt"
        tar.addfile(link)
    with pytest.raises(ValueError) as caught:
        tarball_entries(raw.getvalue())
    assert str(caught.value) == "pkg/link: a tarball member that is not a file or folder"


@pytest.mark.parametrize(
    ("helmignore", "kept"),
    [
        pytest.param(
            None,
            ["Chart.yaml", "ci/values.yaml", "docs/a.md", "notes.bak", "templates/cm.yaml"],
            id="without .helmignore only hidden files under templates are left out",
        ),
        pytest.param(
            "# backups\n\n*.bak\n",
            [".helmignore", "Chart.yaml", "ci/values.yaml", "docs/a.md", "templates/cm.yaml"],
            id="a name pattern leaves out files of that name anywhere",
        ),
        pytest.param(
            "ci/\ndocs/*.md\n",
            [".helmignore", "Chart.yaml", "notes.bak", "templates/cm.yaml"],
            id="a folder pattern and a path pattern leave out what is below them",
        ),
        pytest.param(
            "values.yaml/\n",
            [
                ".helmignore",
                "Chart.yaml",
                "ci/values.yaml",
                "docs/a.md",
                "notes.bak",
                "templates/cm.yaml",
            ],
            id="a folder-only pattern leaves a file of that name",
        ),
    ],
)
def test_a_chart_is_packed_as_helm_package_packs_it(
    tmp_path: pathlib.Path, helmignore: str | None, kept: list[str]
):
    files = ["Chart.yaml", "ci/values.yaml", "docs/a.md", "notes.bak", "templates/cm.yaml"]
    for name in [*files, "templates/.swap"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    if helmignore is not None:
        (tmp_path / ".helmignore").write_text(helmignore)
    entries = chart_entries(tmp_path, "demo")
    assert [e.name for e in entries] == [f"demo/{name}" for name in kept]


def zip_of(date_time: tuple, mode: int) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as zipped:
        for name in ("pkg/__init__.py", "pkg/tool"):
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = (mode | (0o111 if name == "pkg/tool" else 0)) << 16
            zipped.writestr(info, f"# {name}\n")
    return raw.getvalue()


def test_a_zip_is_re_dated_and_its_modes_fixed_whatever_its_build_wrote():
    built = [zip_of((2030, 5, 6, 7, 8, 10), 0o100664), zip_of((1999, 1, 1, 0, 0, 0), 0o100600)]
    normalized = {normalized_zip(data, EPOCH) for data in built}
    (data,) = normalized
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        infos = [(i.filename, i.date_time, i.external_attr >> 16) for i in zipped.infolist()]
    assert infos == [
        ("pkg/__init__.py", (2026, 1, 1, 0, 0, 0), 0o100644),
        ("pkg/tool", (2026, 1, 1, 0, 0, 0), 0o100755),
    ]
