"""The console scripts as installed (``pyproject.toml``'s ``[project.scripts]``, run as pip's
wrapper runs them): Ctrl-C at any moment exits 130 without a traceback, the imports included;
a reader that leaves in the middle of a large write ends the command with 141; and an offline
command loads only what it runs (start-up is most of its time: ``tests/bench/cli.py``)."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import tomllib

import pytest
import yaml

from tests.builders import entry, isvc_manifest, model_manifest, runtime_manifest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SAMPLES = str(ROOT / "manifests" / "samples")
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
EXPLAIN = ("runtime", "explain", "--model", "llama-3-3-70b-instruct", "-f", SAMPLES)
#: Seconds any one command may take.
TIMEOUT = 60
#: pip's console-script wrapper, with an import hook first: the first import of the module
#: named by ``$BLOCK_ON`` writes a byte to fd ``$READY`` and then waits on fd ``$WAIT`` (which
#: never answers), so that the test interrupts the command inside that import, at no guessed
#: moment.
WRAPPER = """
import importlib, os, sys

class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["BLOCK_ON"]:
            sys.meta_path.remove(self)
            os.write(int(os.environ["READY"]), b"!")
            os.read(int(os.environ["WAIT"]), 1)
        return None

sys.meta_path.insert(0, _Blocker())
if "MODULES_TO" in os.environ:  # at exit, the modules the command loaded
    import atexit

    def _loaded():
        with open(os.environ["MODULES_TO"], "w") as listed:
            listed.write(" ".join(sorted(sys.modules)))

    atexit.register(_loaded)
module, _, function = sys.argv[1].partition(":")
sys.argv[:2] = [sys.argv[1]]
sys.exit(getattr(importlib.import_module(module), function)())
"""


def _environment(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT / "operator"), str(ROOT)])
    return {**os.environ, "PYTHONPATH": path, **extra}


@pytest.mark.parametrize(
    ("script", "argv", "module"),
    [
        pytest.param(
            "kubectl-ome",
            EXPLAIN,
            "argparse",
            id="kubectl-ome interrupted while it imports its command line",
        ),
        pytest.param(
            "kubectl-ome",
            EXPLAIN,
            "pydantic",
            id="kubectl-ome interrupted while it imports the models",
        ),
        pytest.param(
            "ome-operator",
            ("render", "-f", SAMPLES),
            "argparse",
            id="ome-operator interrupted while it imports its command line",
        ),
        pytest.param(
            "ome-operator",
            ("render", "-f", SAMPLES),
            "yaml",
            id="ome-operator render interrupted while it imports the YAML reader",
        ),
    ],
)
def test_ctrl_c_during_the_imports_exits_130_without_a_traceback(
    script: str, argv: tuple[str, ...], module: str
) -> None:
    ready_read, ready_write = os.pipe()
    wait_read, wait_write = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", WRAPPER, SCRIPTS[script], *argv],
            env=_environment(BLOCK_ON=module, READY=str(ready_write), WAIT=str(wait_read)),
            pass_fds=(ready_write, wait_read),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(ready_write)
        os.close(wait_read)
        try:
            assert os.read(ready_read, 1) == b"!", "the command never imported " + module
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=TIMEOUT)
        finally:
            process.kill()
            process.wait(timeout=TIMEOUT)
    finally:
        os.close(ready_read)
        os.close(wait_write)

    assert (process.returncode, out, err) == (130, "", "")


def _write_many_services(path: pathlib.Path) -> None:
    """A manifest whose ``render`` report is about 1 MB: far more than a pipe holds."""
    runner = {"runner": {"name": "ome-container", "image": "vllm:1"}}
    documents = [
        model_manifest("llama", modelParameterSize="8B"),
        runtime_manifest("vllm", formats=[entry(autoSelect=True)], engineConfig=runner),
        *(isvc_manifest(f"svc-{n:03d}") for n in range(200)),
    ]
    path.write_text(yaml.safe_dump_all(documents), encoding="utf-8")


def _write_many_runtimes(path: pathlib.Path) -> None:
    """A manifest whose ``explain -o yaml`` is far more than a pipe holds (900 runtimes: the
    CLI reads at most 1,000)."""
    documents = [
        model_manifest("llama", modelParameterSize="8B"),
        *(
            runtime_manifest(f"runtime-{n:04d}", formats=[entry("onnx", autoSelect=True)])
            for n in range(900)
        ),
    ]
    path.write_text(yaml.safe_dump_all(documents), encoding="utf-8")


@pytest.mark.parametrize(
    ("script", "argv", "write_input"),
    [
        pytest.param(
            "ome-operator",
            ("render", "-f", "{input}", "--now", "2026-01-01T00:00:00Z"),
            _write_many_services,
            id="ome-operator render",
        ),
        pytest.param(
            "kubectl-ome",
            ("runtime", "explain", "--model", "llama", "-f", "{input}", "-o", "yaml"),
            _write_many_runtimes,
            id="kubectl ome runtime explain",
        ),
    ],
)
def test_a_reader_leaving_during_a_large_write_ends_the_command_with_141(
    tmp_path: pathlib.Path, script: str, argv: tuple[str, ...], write_input
) -> None:
    # As ``| head -1``: the reader takes the first bytes and leaves while the command is in
    # the middle of one write of the whole report (write(2) then returns short, no error).
    manifest = tmp_path / "input.yaml"
    write_input(manifest)
    errors = tmp_path / "stderr"
    with errors.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", WRAPPER, SCRIPTS[script]]
            + [part.format(input=manifest) for part in argv],
            env=_environment(BLOCK_ON="-"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        try:
            assert process.stdout is not None
            first = os.read(process.stdout.fileno(), 100)
            process.stdout.close()
            returncode = process.wait(timeout=TIMEOUT)
        finally:
            process.kill()
            process.wait(timeout=TIMEOUT)

    assert first.startswith(b"apiVersion: cli.ome.io/v1alpha1\n")
    assert (returncode, errors.read_text()) == (141, "")


@pytest.mark.parametrize(
    ("plugins", "metadata_loaded"),
    [
        pytest.param(None, False, id="plugins disabled as the commands disable them"),
        pytest.param("1", False, id="plugins disabled by the user"),
        pytest.param("some-plugin", True, id="the user's choice of plugins is looked up"),
    ],
)
def test_explain_of_manifests_as_installed_loads_no_distribution_metadata(
    tmp_path: pathlib.Path, plugins: str | None, metadata_loaded: bool
) -> None:
    # pydantic's plugin loader imports importlib.metadata (email, socket, zipfile...) before
    # it reads that plugins are disabled: the commands answer for it then.
    listed = tmp_path / "modules"
    env = _environment(BLOCK_ON="-", MODULES_TO=str(listed))
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    if plugins is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = plugins
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, SCRIPTS["kubectl-ome"], *EXPLAIN],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    loaded = set(listed.read_text().split())

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("RUNTIME ")
    assert ("importlib.metadata" in loaded) is metadata_loaded
    assert not loaded & {"kubernetes", "urllib3", "kopf"}
