"""Fixtures shared by all tests. Keep this file small: the machinery is in tests/support/."""

import contextlib
import pathlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import kmock
import pytest

from tests.support import loopback_only
from tests.support.kube_access import write_kubeconfig
from tests.support.kube_emulator import DECLARED_RESOURCES, ApiServerLikeEmulator

if TYPE_CHECKING:
    from ome_operator.cluster.api import KubeApi


def pytest_configure(config: pytest.Config) -> None:
    """The network rule holds in the test process: no connection outside 127.0.0.0/8."""
    loopback_only.install()


@pytest.fixture
async def kube() -> AsyncIterator[ApiServerLikeEmulator]:
    """An API-server-like emulator on 127.0.0.1 (random port), built-ins and CRDs declared.

    Call the sync ``kubernetes`` client only through ``asyncio.to_thread``: this loop serves
    the emulator. The test fails if the emulator itself crashed (API errors are fine).
    """
    async with ApiServerLikeEmulator() as emulator, kmock.Server(emulator):
        emulator.resources.load_bundled()
        emulator.declare(*DECLARED_RESOURCES)
        yield emulator
        crashes = [exc for exc in emulator.errors if not isinstance(exc, kmock.KubernetesError)]
        assert not crashes, f"the emulator crashed while serving: {crashes!r}"


@pytest.fixture
def kubeconfig(
    kube: ApiServerLikeEmulator, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A kubeconfig reaching ``kube`` (context namespace ``default``), also made the default.

    ``$KUBECONFIG`` is set, and so is the value the client library read from it at import.
    """
    import kubernetes.config.kube_config  # here: pure tests need not pay for the import

    path = str(write_kubeconfig(tmp_path / "kubeconfig", str(kube.url)))
    monkeypatch.setenv("KUBECONFIG", path)
    monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", path)
    return path


@pytest.fixture
def api(kubeconfig: str) -> "KubeApi":
    """The operator's API client, reaching ``kube`` through ``kubeconfig``."""
    from kubernetes import client, config  # here too: pure tests need not pay for the import

    from ome_operator.cluster.api import KubeApi

    configuration = client.Configuration()
    config.load_kube_config(kubeconfig, client_configuration=configuration)
    return KubeApi(client.ApiClient(configuration))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Control-plane tests run last: the rest of the run does not share the machine's two
    cores with an API server, etcd and a controller manager."""
    items.sort(key=lambda item: item.get_closest_marker("controlplane") is not None)


def _needed_builds(items: list[pytest.Item]) -> list[tuple[str, pathlib.Path]]:
    """The build scripts the collected tests need, each once: the control-plane tier's (which
    also builds helm, for the chart's tests) and promtool's (the alert rules' tests)."""
    from tests.support import go_builds

    needed = []
    for item in items:
        if item.get_closest_marker("controlplane") or item.path.name.startswith("test_chart"):
            needed.append(("the control-plane tier's programs and helm", go_builds.CONTROL_PLANE))
        if item.path.name == "test_prometheusrule_promtool.py":
            needed.append(("promtool", go_builds.PROMTOOL))
    return list(dict.fromkeys(needed))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build from Go modules what the collected tests run, before any test (outside every
    test's timeout): 20 to 30 minutes the first time on a machine of 2 cores for the
    control-plane tier, about 5 for promtool, nothing once cached. The builds' lines are shown
    as they come, so that a first run does not sit silent."""
    from tests.support import go_builds

    capture = session.config.pluginmanager.getplugin("capturemanager")
    terminal = session.config.pluginmanager.getplugin("terminalreporter")
    for what, script in _needed_builds(session.items):
        announced: list[bool] = []

        def show(line: str, what: str = what, announced: list[bool] = announced) -> None:
            if terminal is None:
                return
            if not announced:
                announced.append(True)
                terminal.write_line(
                    f"Building {what} from Go modules, once per version"
                    " (README.md, 'The test tiers'):"
                )
            terminal.write_line(f"  {line}")

        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            go_builds.run(script, show)
