"""manifests/release/release.py, run offline twice into two empty folders: every file of a
release is written, SHA256SUMS verifies them, the SBOM names every locked distribution, the
install YAML is the CRDs, the namespace and then the objects of manifests/, and the second run
writes the same bytes as the first.

Offline and fast: the dependency wheels come from a wheelhouse re-packed from this environment
(tests/release/installed_wheels.py), the krew archive is built for linux/arm64 only (from
wheels: linux/amd64's is a PyInstaller bundle, a minute to build), and the chart is a small one
made here (charts/ome-operator/ is its own tests' subject). HOME is a temporary folder, so that
no cached helm is found: the chart is packed by release.py itself. The two runs go at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import time
import zipfile

import pytest
import yaml
from lock_file import LOCK_FILE, read_pins
from sbom import licenses_of

from ome_operator import __version__
from tests.manifests.manifest_files import (
    CRD_FOLDER,
    MANIFESTS,
    NAMESPACE_FOLDER,
    ROOT,
    documents,
)
from tests.manifests.manifest_files import operator_documents as operator_files
from tests.release.installed_wheels import runtime_closure, write_wheelhouse

RELEASE_SCRIPT = ROOT / "manifests" / "release" / "release.py"
#: SOURCE_DATE_EPOCH of both runs, 2026-01-01T00:00:00Z: the date the release's files carry.
EPOCH = 1767225600
V = __version__
EXPECTED_FILES = [
    "SHA256SUMS",
    f"krew/kubectl-ome_v{V}_linux_arm64.zip",
    "krew/ome.yaml",
    f"ome-operator-{V}.cdx.json",
    f"ome-operator-{V}.tgz",
    f"ome-operator-{V}.yaml",
    f"ome_operator-{V}-py3-none-any.whl",
    f"ome_operator-{V}.tar.gz",
]
CHART_FILES = {
    "Chart.yaml": (
        f"apiVersion: v2\nname: ome-operator\nversion: {V}\nappVersion: {V!r}\n"
        "description: a chart made by the test\n"
    ),
    "values.yaml": "replicas: 2\n",
    "templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\n",
    "templates/.editor-swap": "left out: a hidden file under templates/\n",
    "notes.bak": "left out by .helmignore\n",
    ".helmignore": "# backups\n*.bak\n",
}


def files_of(folder: pathlib.Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def outs(tmp_path_factory) -> list[pathlib.Path]:
    """The folders of two runs of the script over the same tree, each from its own working
    folder."""
    scratch = tmp_path_factory.mktemp("release")
    wheelhouse = scratch / "wheelhouse"
    write_wheelhouse(runtime_closure(), wheelhouse)
    chart = scratch / "chart"
    for name, text in CHART_FILES.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH), "HOME": str(scratch / "home")}
    outs = [scratch / "dist0", scratch / "dist1"]
    # Both at once, one per core: they share nothing but the tree.
    command = [sys.executable, str(RELEASE_SCRIPT), "--wheelhouse", str(wheelhouse)]
    command += ["--chart", str(chart), "--krew-platform", "linux/arm64"]
    started = [
        subprocess.Popen(
            [*command, "--out", str(out)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for out, cwd in zip(outs, (ROOT, scratch), strict=True)
    ]
    try:
        answers = [(run.communicate(timeout=240)[0], run.returncode) for run in started]
    finally:
        for run in started:
            if run.poll() is None:
                run.kill()
                run.wait(timeout=30)
    assert [code for _, code in answers] == [0, 0], "\n".join(text for text, _ in answers)
    return outs


@pytest.fixture(scope="module")
def dist(outs) -> dict[str, bytes]:
    return files_of(outs[0])


def test_a_release_writes_every_file(dist):
    assert sorted(dist) == EXPECTED_FILES


def test_a_second_run_writes_the_same_bytes(outs):
    first, second = files_of(outs[0]), files_of(outs[1])
    differing = sorted(
        name for name in first.keys() | second.keys() if first.get(name) != second.get(name)
    )
    assert differing == []


def test_sha256sum_verifies_every_file_of_the_release(outs):
    done = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=outs[0],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "".join(f"{name}: OK\n" for name in EXPECTED_FILES[1:]),
        "",
    )


def test_sha256sums_lists_every_other_file_sorted_with_its_digest(dist):
    expected = "".join(
        f"{hashlib.sha256(dist[name]).hexdigest()}  {name}\n" for name in EXPECTED_FILES[1:]
    )
    assert dist["SHA256SUMS"].decode() == expected


def test_the_sbom_lists_every_distribution_of_the_lock(dist):
    sbom = json.loads(dist[f"ome-operator-{V}.cdx.json"])
    listed = [
        (c["name"], c["version"], c["purl"], tuple(h["content"] for h in c["hashes"]))
        for c in sbom["components"][1:]
    ]
    locked = [(p.name, p.version, p.purl, p.hashes) for p in read_pins(LOCK_FILE.read_text())]
    assert (sbom["specVersion"], sbom["metadata"]["timestamp"], listed) == (
        "1.6",
        "2026-01-01T00:00:00Z",
        locked,
    )


def test_the_sbom_states_the_licenses_the_metadata_states(dist):
    """Each locked distribution installed here in its locked version has the licenses its
    metadata states (a wheelhouse of another version would state that version's)."""
    sbom = json.loads(dist[f"ome-operator-{V}.cdx.json"])
    stated = {c["name"]: c.get("licenses") for c in sbom["components"]}
    installed = runtime_closure()
    same = [p.name for p in read_pins(LOCK_FILE.read_text()) if _installed_as_locked(p, installed)]
    expected = {name: licenses_of(installed[name].metadata) or None for name in same}
    assert stated["ome-operator"] == [{"license": {"id": "Apache-2.0"}}]
    assert (bool(same), {name: stated[name] for name in same}) == (True, expected)


def _installed_as_locked(pin, installed) -> bool:
    return pin.name in installed and installed[pin.name].version == pin.version


def test_the_install_yaml_is_the_crds_the_namespace_then_the_objects_of_manifests(dist):
    installed = [d for d in yaml.safe_load_all(dist[f"ome-operator-{V}.yaml"]) if d]
    crds = sorted(
        (doc.body for doc in documents(MANIFESTS / CRD_FOLDER)),
        key=lambda crd: crd["metadata"]["name"],
    )
    namespace = [doc.body for doc in documents(MANIFESTS / NAMESPACE_FOLDER)]
    config = ROOT / "config" / "inferenceservice-config.yaml"
    operator = [doc.body for doc in operator_files()]
    operator += [d for d in yaml.safe_load_all(config.read_text()) if d]
    first, second = len(crds), len(crds) + len(namespace)
    assert (installed[:first], installed[first:second]) == (crds, namespace)
    assert sorted(map(_key, installed[second:])) == sorted(map(_key, map(_tagged, operator)))


def _key(body: dict) -> str:
    return json.dumps(body, sort_keys=True)


def _tagged(body: dict) -> dict:
    """The object as the kustomization renders it: the operator's image with its tag."""
    if body["kind"] != "Deployment":
        return body
    text = json.dumps(body).replace('"image": "ome-operator"', f'"image": "ome-operator:{V}"')
    return json.loads(text)


def test_the_chart_package_holds_the_chart_under_its_name_dated_by_the_release(dist, tmp_path):
    package = tmp_path / "chart.tgz"
    package.write_bytes(dist[f"ome-operator-{V}.tgz"])
    with tarfile.open(package) as tar:
        members = [(m.name, m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode) for m in tar]
    names = [".helmignore", "Chart.yaml", "templates/configmap.yaml", "values.yaml"]
    assert members == [(f"ome-operator/{n}", EPOCH, 0, 0, "", "", 0o644) for n in names]


def test_the_sdist_and_the_wheel_are_dated_by_the_release(dist, tmp_path):
    (tmp_path / "sdist.tar.gz").write_bytes(dist[f"ome_operator-{V}.tar.gz"])
    (tmp_path / "wheel.zip").write_bytes(dist[f"ome_operator-{V}-py3-none-any.whl"])
    with tarfile.open(tmp_path / "sdist.tar.gz") as tar:
        sdist_dates = {m.mtime for m in tar}
        sdist_names = tar.getnames()
    with zipfile.ZipFile(tmp_path / "wheel.zip") as wheel:
        wheel_dates = {info.date_time for info in wheel.infolist()}
        wheel_names = wheel.namelist()
    assert (sdist_dates, wheel_dates) == ({EPOCH}, {time.gmtime(EPOCH)[:6]})
    assert sdist_names == sorted(sdist_names)
    assert f"ome_operator-{V}/operator/ome_operator/__init__.py" in sdist_names
    assert "ome_operator/__init__.py" in wheel_names


def test_the_krew_manifest_names_the_archive_it_was_built_with(dist):
    plugin = yaml.safe_load(dist["krew/ome.yaml"])
    (linux_arm64,) = [
        p
        for p in plugin["spec"]["platforms"]
        if p["selector"]["matchLabels"] == {"os": "linux", "arch": "arm64"}
    ]
    archive = dist[f"krew/kubectl-ome_v{V}_linux_arm64.zip"]
    assert linux_arm64["sha256"] == hashlib.sha256(archive).hexdigest()
