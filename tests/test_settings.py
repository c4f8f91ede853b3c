"""The operator's settings: every flag of ``ome-operator run`` is declared once, in
``RunOptions``; the parser is built from it and reads back into it, defaults included; values
the operator cannot run with are problems (docs/configuration.md)."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from ome_operator.settings import RunOptions, add_run_flags, run_option_problems


def parsed(argv: list[str]) -> RunOptions:
    parser = argparse.ArgumentParser()
    add_run_flags(parser)
    return RunOptions.from_args(parser.parse_args(argv))


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.delenv("WEBHOOK_CERT_DIR", raising=False)
    monkeypatch.delenv("OME_ALLOW_OTHER_CONTROLLER", raising=False)
    monkeypatch.delenv("OME_GANG_PLACEMENT", raising=False)


def test_no_flag_gives_the_declared_defaults():
    assert parsed([]) == RunOptions()


def test_neither_hardening_flag_means_a_30_s_idle_timeout_and_metrics_not_secured():
    assert parsed([]) == RunOptions(webhook_idle_timeout=30.0, metrics_secure=False)


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
        pytest.param(
            ["--webhook-idle-timeout", "2.5"],
            {"webhook_idle_timeout": 2.5},
            id="the idle timeout is a float",
        ),
        pytest.param(["--metrics-secure"], {"metrics_secure": True}, id="secure metrics"),
        pytest.param(
            ["--allow-other-controller"],
            {"allow_other_controller": True},
            id="starting beside another controller",
        ),
        pytest.param(
            ["--gang-placement=off"],
            {"gang_placement": "off"},
            id="gang placement turned off",
        ),
    ],
)
def test_each_flag_sets_its_field_only(argv, changed):
    assert parsed(argv) == dataclasses.replace(RunOptions(), **changed)


@pytest.mark.parametrize(
    ("variable", "value", "changed"),
    [
        pytest.param("POD_NAMESPACE", "ome-system", {"operator_namespace": "ome-system"}, id="pod"),
        pytest.param("WEBHOOK_CERT_DIR", "/certs", {"webhook_cert_dir": "/certs"}, id="certs"),
        pytest.param(
            "OME_ALLOW_OTHER_CONTROLLER",
            "true",
            {"allow_other_controller": True},
            id="an on/off flag's variable set to true turns it on",
        ),
        pytest.param(
            "OME_ALLOW_OTHER_CONTROLLER",
            "TRUE",
            {"allow_other_controller": True},
            id="whatever the case",
        ),
        pytest.param(
            "OME_ALLOW_OTHER_CONTROLLER",
            "1",
            {"allow_other_controller": True},
            id="1 is true",
        ),
        pytest.param(
            "OME_ALLOW_OTHER_CONTROLLER",
            "false",
            {},
            id="false leaves it off",
        ),
        pytest.param("OME_ALLOW_OTHER_CONTROLLER", "0", {}, id="so does 0"),
        pytest.param(
            "OME_GANG_PLACEMENT", "off", {"gang_placement": "off"}, id="gang placement off"
        ),
    ],
)
def test_an_environment_variable_replaces_a_default(monkeypatch, variable, value, changed):
    monkeypatch.setenv(variable, value)
    assert parsed([]) == dataclasses.replace(RunOptions(), **changed)


@pytest.mark.parametrize(
    "idle, problems",
    [
        pytest.param(0.5, [], id="any positive idle timeout runs"),
        pytest.param(
            0.0,
            ["--webhook-idle-timeout must be more than 0 seconds (got 0)"],
            id="no idle timeout is refused",
        ),
        pytest.param(
            -1.0,
            ["--webhook-idle-timeout must be more than 0 seconds (got -1)"],
            id="a negative idle timeout is refused",
        ),
    ],
)
def test_the_idle_timeout_must_be_positive(idle, problems):
    assert run_option_problems(RunOptions(webhook_idle_timeout=idle)) == problems


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        pytest.param("true", [], id="true is a value"),
        pytest.param(
            "yes",
            ['OME_ALLOW_OTHER_CONTROLLER "yes" is not true or false'],
            id="another word is refused, naming the variable",
        ),
        pytest.param(
            "",
            ['OME_ALLOW_OTHER_CONTROLLER "" is not true or false'],
            id="so is an empty value",
        ),
    ],
)
def test_an_on_off_variable_must_say_true_or_false(monkeypatch, value, problems):
    monkeypatch.setenv("OME_ALLOW_OTHER_CONTROLLER", value)
    assert run_option_problems(parsed([])) == problems


def test_a_gang_placement_variable_must_say_auto_or_off(monkeypatch):
    monkeypatch.setenv("OME_GANG_PLACEMENT", "always")
    assert run_option_problems(parsed([])) == ['OME_GANG_PLACEMENT "always" is not auto or off']


def test_a_flag_beats_its_environment_variable(monkeypatch):
    monkeypatch.setenv("POD_NAMESPACE", "from-env")
    assert parsed(["--operator-namespace", "from-flag"]).operator_namespace == "from-flag"


def test_every_field_is_a_flag():
    parser = argparse.ArgumentParser()
    add_run_flags(parser)
    destinations = {action.dest for action in parser._actions} - {"help"}
    assert destinations == {f.name for f in dataclasses.fields(RunOptions)}
