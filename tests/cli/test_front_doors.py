"""The front doors never print a traceback: ``ome-operator run`` refuses flags that cannot work
and a missing cluster before it starts anything; a closed pipe and Ctrl-C end any command
quietly."""

from __future__ import annotations

import io
import os
import pathlib
import platform
import signal
import subprocess
import sys
import time

import pytest

from ome_operator import operator_command

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = operator_command.main(["run", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(("--workers", "0"), "--workers must be at least 1 (got 0)", id="no worker"),
        pytest.param(
            ("--metrics-bind-address", "nonsense"),
            '--metrics-bind-address "nonsense" is not HOST:PORT or :PORT with a port from 1 '
            "to 65535 (or 0 to disable)",
            id="a bind address without a port",
        ),
        pytest.param(
            ("--health-probe-bind-address", ":70000"),
            '--health-probe-bind-address ":70000" is not HOST:PORT or :PORT with a port from 1 '
            "to 65535 (or 0 to disable)",
            id="a port out of range",
        ),
        pytest.param(
            ("--webhook-port", "0"), "--webhook-port must be from 1 to 65535 (got 0)", id="port 0"
        ),
        pytest.param(
            ("--config-cache-ttl", "0"),
            "--config-cache-ttl must be more than 0 seconds (got 0)",
            id="a zero cache time",
        ),
        pytest.param(
            ("--webhook-shutdown-grace", "-1"),
            "--webhook-shutdown-grace must be 0 seconds or more (got -1)",
            id="a negative shutdown grace",
        ),
        pytest.param(
            ("--leader-elect-renew-deadline", "20"),
            "--leader-elect-lease-duration must be more than --leader-elect-renew-deadline, "
            "which must be more than --leader-elect-retry-period, which must be more than 0 "
            "seconds (got 15, 20 and 2)",
            id="a renew deadline past the lease's duration",
        ),
        pytest.param(
            ("--leader-elect-retry-period", "0"),
            "--leader-elect-lease-duration must be more than --leader-elect-renew-deadline, "
            "which must be more than --leader-elect-retry-period, which must be more than 0 "
            "seconds (got 15, 10 and 0)",
            id="no retry period",
        ),
        pytest.param(
            ("--webhook-cert-dir", "/nonexistent"),
            '--webhook-cert-dir "/nonexistent" has no tls.crt or tls.key',
            id="a certificate folder that is not there",
        ),
        pytest.param(
            ("--workers", "0", "--webhook-port", "0"),
            "--webhook-port must be from 1 to 65535 (got 0); --workers must be at least 1 (got 0)",
            id="every bad flag is named at once, in flag order",
        ),
        pytest.param(
            ("--workers", "two"),
            "argument --workers: invalid int value: 'two'",
            id="argparse's own usage errors exit 2 too",
        ),
    ],
)
def test_a_flag_that_cannot_work_is_refused_before_starting(
    argv: tuple[str, ...], message: str
) -> None:
    assert run(*argv) == (2, "", f"error: {message}\n")


def test_no_cluster_is_an_error_not_a_retry_loop(tmp_path, monkeypatch) -> None:
    import kubernetes.config.kube_config

    missing = str(tmp_path / "no-kubeconfig")
    monkeypatch.setenv("KUBECONFIG", missing)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", missing)

    code, out, err = run("--metrics-bind-address", "0")

    assert (code, out) == (1, "")
    assert err.startswith(
        "error: no cluster to connect to (no in-cluster service account, no usable kubeconfig): "
    )
    assert err.count("\n") == 1


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    # The reader is gone before the first write (``| head -1`` after its line): EPIPE at once.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [
                str(BIN / "kubectl-ome"),
                *("runtime", "explain", "--isvc", "llama-3-70b", "-n", "llama-demo"),
                *("--with-effective", "-f", str(ROOT / "manifests" / "samples")),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)

    assert (done.returncode, done.stderr) == (141, "")


#: read(2)'s number in /proc/PID/syscall, by machine.
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}


def reading_stdin(pid: int) -> bool:
    """Whether the process's main thread waits in read(2) on its standard input (fd 0)."""
    found = pathlib.Path(f"/proc/{pid}/syscall").read_text().split()
    return found[:2] == [READ_SYSCALL[platform.machine()], "0x0"]


def test_ctrl_c_exits_130_without_a_traceback() -> None:
    process = subprocess.Popen(
        [str(BIN / "ome-operator"), "render", "-f", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not reading_stdin(process.pid):  # it reads stdin, which never ends
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert (process.returncode, out, err) == (130, "", "")
