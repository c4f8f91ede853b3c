"""Helm, for the tests of the chart charts/ome-operator/: built from its Go module by
``tests/controlplane/helm/build.sh`` (cached by version and pins; a no-op once built) and run
with a home of its own, so that no repository, plugin or setting of the machine's user is read.

``render`` is ``helm template`` parsed into objects; ``Helm.run`` any helm command, against a
cluster when it is given a kubeconfig.
"""

from __future__ import annotations

import functools
import os
import pathlib
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from tests.support import go_builds

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "tests" / "controlplane" / "helm" / "build.sh"
CHART = ROOT / "charts" / "ome-operator"
#: The release name of every test.
RELEASE = "ome-operator"
#: The release namespace of the offline renders: the kustomize install's.
NAMESPACE = "ome"
#: The timeout of a test that may be the first to need Helm: a test run that holds the
#: control-plane tier builds it before any test (tests/conftest.py runs
#: tests/controlplane/build.sh, which runs BUILD_SCRIPT); a run of the chart's offline tests alone
#: builds it in its first test, in 3 to 4 minutes the first time.
BUILD_TIMEOUT = 600


@functools.cache
def helm_binary() -> pathlib.Path:
    """The helm program, built first when absent (about 3 minutes on 2 cores, build.sh)."""
    return pathlib.Path(go_builds.run(BUILD_SCRIPT)["helm"]) / "helm"


def value_flags(values: Mapping[str, str]) -> list[str]:
    """``--set-json path=json`` for each value: a JSON value, so that types are kept."""
    return [flag for path, value in values.items() for flag in ("--set-json", f"{path}={value}")]


@dataclass(frozen=True)
class Helm:
    binary: pathlib.Path
    #: HELM_CACHE_HOME, HELM_CONFIG_HOME and HELM_DATA_HOME are folders of this one.
    home: pathlib.Path
    kubeconfig: pathlib.Path | None = None

    def environment(self) -> dict[str, str]:
        """The process's environment without any HELM_ setting, with this home (and
        kubeconfig)."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("HELM_")}
        env |= {
            f"HELM_{name}_HOME": str(self.home / name.lower())
            for name in ("CACHE", "CONFIG", "DATA")
        }
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = str(self.kubeconfig)
        return env

    def run(
        self, *args: str, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.binary), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.environment(),
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"helm {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
        return done

    def render(
        self, values: Mapping[str, str] | None = None, namespace: str = NAMESPACE
    ) -> list[dict[str, Any]]:
        """``helm template`` of the chart with ``values`` (path: JSON), its objects in order."""
        flags = value_flags(values or {})
        done = self.run("template", RELEASE, str(CHART), "--namespace", namespace, *flags)
        return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def offline_helm(home: pathlib.Path) -> Helm:
    """Helm with a home in ``home``, for commands that reach no cluster."""
    return Helm(helm_binary(), home)
