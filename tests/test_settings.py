"""The operator's settings: every flag of ``ome-operator run`` is declared once, in
``RunOptions``; the parser is built from it and reads back into it, defaults included."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from ome_operator.settings import RunOptions, add_run_flags


def parsed(argv: list[str]) -> RunOptions:
    parser = argparse.ArgumentParser()
    add_run_flags(parser)
    return RunOptions.from_args(parser.parse_args(argv))


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.delenv("WEBHOOK_CERT_DIR", raising=False)


def test_no_flag_gives_the_declared_defaults():
    assert parsed([]) == RunOptions()


@pytest.mark.parametrize(
    ("argv", "changed"),
    [
        pytest.param(["-n", "a", "--namespace", "b"], {"namespaces": ("a", "b")}, id="namespaces"),
        pytest.param(["--operator-namespace", "x"], {"operator_namespace": "x"}, id="namespace"),
        pytest.param(["--metrics-bind-address", "0"], {"metrics_bind_address": "0"}, id="metrics"),
        pytest.param(
            ["--health-probe-bind-address", ":9"],
            {"health_probe_bind_address": ":9"},
            id="probe",
        ),
        pytest.param(["--webhook-port", "8443"], {"webhook_port": 8443}, id="an int flag"),
        pytest.param(
            ["--webhook-bind-address", "127.0.0.1"],
            {"webhook_bind_address": "127.0.0.1"},
            id="webhook address",
        ),
        pytest.param(["--webhook-host", "h"], {"webhook_host": "h"}, id="webhook host"),
        pytest.param(["--webhook-cert-dir", "/c"], {"webhook_cert_dir": "/c"}, id="cert dir"),
        pytest.param(["--webhook-secret", "s"], {"webhook_secret": "s"}, id="secret"),
        pytest.param(
            ["--webhook-configuration", "w"], {"webhook_configuration": "w"}, id="configuration"
        ),
        pytest.param(["--config-cache-ttl", "2.5"], {"config_cache_ttl": 2.5}, id="a float flag"),
        pytest.param(["--workers", "8"], {"workers": 8}, id="workers"),
    ],
)
def test_each_flag_sets_its_field_only(argv, changed):
    assert parsed(argv) == dataclasses.replace(RunOptions(), **changed)


@pytest.mark.parametrize(
    ("variable", "value", "changed"),
    [
        pytest.param("POD_NAMESPACE", "ome-system", {"operator_namespace": "ome-system"}, id="pod"),
        pytest.param("WEBHOOK_CERT_DIR", "/certs", {"webhook_cert_dir": "/certs"}, id="certs"),
    ],
)
def test_an_environment_variable_replaces_a_default(monkeypatch, variable, value, changed):
    monkeypatch.setenv(variable, value)
    assert parsed([]) == dataclasses.replace(RunOptions(), **changed)


def test_a_flag_beats_its_environment_variable(monkeypatch):
    monkeypatch.setenv("POD_NAMESPACE", "from-env")
    assert parsed(["--operator-namespace", "from-flag"]).operator_namespace == "from-flag"


def test_every_field_is_a_flag():
    parser = argparse.ArgumentParser()
    add_run_flags(parser)
    destinations = {action.dest for action in parser._actions} - {"help"}
    assert destinations == {f.name for f in dataclasses.fields(RunOptions)}
