"""release.py's steps and refusals, each alone: what it refuses before it writes anything, the
note when there is no chart, a chart packed by ``helm package`` (a stand-in binary here, which
dates its tarball by the clock) re-packed to the same bytes, and where helm is looked for."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tarfile

import pytest

import release
from tests.manifests.manifest_files import ROOT

EPOCH = 1767225600
#: A stand-in for helm: records its arguments and packs the chart's files as helm does (no
#: folder entries), in reverse order and dated now.
FAKE_HELM = """#!{python}
import pathlib, sys, tarfile, time
pathlib.Path(sys.argv[0] + ".args").write_text(" ".join(sys.argv[1:]))
chart, destination = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[4])
with tarfile.open(destination / "demo-1.2.3.tgz", "w:gz") as tar:
    for path in sorted(p for p in chart.rglob("*") if p.is_file())[::-1]:
        info = tar.gettarinfo(path, "demo/" + path.relative_to(chart).as_posix())
        info.mtime = time.time()
        tar.addfile(info, path.open("rb"))
"""


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = release.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "environ", "expected_err"),
    [
        pytest.param(
            ["--version", "9.9.9"],
            {},
            "error: the version is not the same everywhere:\n"
            "  --version 9.9.9, but operator/ome_operator/__init__.py says "
            f"{release.package_version(ROOT)}\n",
            id="another version than the tree's is refused",
        ),
        pytest.param(
            [],
            {"SOURCE_DATE_EPOCH": "yesterday"},
            "error: SOURCE_DATE_EPOCH is not a number of seconds: 'yesterday'\n",
            id="a SOURCE_DATE_EPOCH that is not seconds is refused",
        ),
        pytest.param(
            [],
            {"PATH": ""},
            "error: no kubectl on PATH to render the install: give --kubectl PATH\n",
            id="without kubectl the install cannot be rendered",
        ),
        pytest.param(
            ["--kubectl", "/nonexistent/kubectl"],
            {},
            "error: --kubectl /nonexistent/kubectl is not an executable\n",
            id="a kubectl given that is not there is refused",
        ),
    ],
)
def test_a_release_that_cannot_be_made_is_refused_before_anything_is_written(
    tmp_path, monkeypatch, capsys, argv, environ, expected_err
):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "dist"
    argv = [*argv, "--out", str(out), "--chart", str(tmp_path / "no-chart")]
    assert (run(argv, capsys), out.exists()) == ((1, "", expected_err), False)


def test_a_folder_that_is_not_empty_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "old.yaml").write_text("an older release\n")
    argv = ["--out", str(tmp_path / "dist"), "--chart", str(tmp_path / "no-chart")]
    assert run(argv, capsys) == (
        1,
        "",
        f"error: {tmp_path / 'dist'} is not empty: remove it first (every file is made anew)\n",
    )


def test_without_a_chart_folder_a_note_says_so_and_no_package_is_made(capsys):
    missing = ROOT / "charts" / "no-such-chart"
    assert release.chart_step(missing, None, pathlib.Path("/nonexistent"), EPOCH) is None
    assert (
        capsys.readouterr().out == "note: no chart package: charts/no-such-chart does not exist\n"
    )


def test_helm_packages_the_chart_and_its_tarball_is_re_packed_to_the_same_bytes(tmp_path):
    helm = tmp_path / "helm"
    helm.write_text(FAKE_HELM.format(python=sys.executable))
    helm.chmod(0o755)
    chart = tmp_path / "demo"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 1.2.3\n")
    (chart / "templates" / "cm.yaml").write_text("kind: ConfigMap\n")
    packages = [
        release.chart_package(chart, str(helm), tmp_path / f"scratch{index}", EPOCH)
        for index in range(2)
    ]
    (tmp_path / "demo.tgz").write_bytes(packages[0][1])
    with tarfile.open(tmp_path / "demo.tgz") as tar:
        dated = [(member.name, member.mtime) for member in tar]
    assert (packages[0][0], packages[0] == packages[1], dated) == (
        "demo-1.2.3.tgz",
        True,
        [("demo/Chart.yaml", EPOCH), ("demo/templates/cm.yaml", EPOCH)],
    )
    assert (tmp_path / "helm.args").read_text() == (
        f"package {chart} --destination {tmp_path / 'scratch1'}"
    )


def test_a_helm_that_cannot_run_is_refused(tmp_path):
    chart = tmp_path / "demo"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 1.2.3\n")
    with pytest.raises(release.ReleaseError) as caught:
        release.chart_package(chart, "/nonexistent/helm", tmp_path / "scratch", EPOCH)
    assert str(caught.value) == "cannot run helm /nonexistent/helm: No such file or directory"


@pytest.mark.parametrize(
    ("given", "cached", "expected"),
    [
        pytest.param("/opt/helm", ["helm-v3.16.1"], "/opt/helm", id="the helm given wins"),
        pytest.param(
            None,
            ["helm-v3.15.0", "helm-v3.16.1"],
            "helm-v3.16.1/helm",
            id="else the cache's last helm by name",
        ),
        pytest.param(None, [], None, id="else none: the chart is packed by release.py"),
    ],
)
def test_where_helm_is_found(tmp_path, given, cached, expected):
    for folder in cached:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "helm").write_text("")
    found = release.helm_binary(given, tmp_path)
    shown = found.removeprefix(f"{tmp_path}/") if found else found
    assert shown == expected


def test_without_source_date_epoch_the_release_is_dated_by_the_last_commit():
    done = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    assert release.source_date_epoch({}, ROOT) == int(done.stdout)
