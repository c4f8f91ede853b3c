"""The PrometheusRule's alerts as Prometheus itself reads them: ``promtool check rules`` of its
spec, and ``promtool test rules`` of tests/manifests/promtool/alerts_test.yaml, the unit tests
of the alerts on what the cluster sees of the operator (OmeOperatorDown,
OmeWebhookCallsFailing).

promtool is the one tests/manifests/promtool/build.sh builds from the pinned Prometheus module
(about 5 minutes the first time, then cached): tests/conftest.py runs it before any test when
this module is collected."""

from __future__ import annotations

import functools
import pathlib
import shutil
import subprocess

import pytest
import yaml

from tests.manifests.manifest_files import ROOT
from tests.manifests.monitoring_files import RULES
from tests.support import go_builds

PROMTOOL = ROOT / "tests" / "manifests" / "promtool"
UNIT_TESTS = PROMTOOL / "alerts_test.yaml"


@functools.cache
def promtool() -> str:
    """The built promtool (tests/conftest.py built it before the first test: this is a no-op)."""
    return go_builds.run(go_builds.PROMTOOL)["promtool"]


@pytest.fixture
def rules(tmp_path: pathlib.Path) -> pathlib.Path:
    """A folder with rules.yaml (the PrometheusRule's spec, the file format promtool reads)
    and the unit tests beside it."""
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(RULES["spec"], sort_keys=False))
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    return tmp_path


def _promtool(folder: pathlib.Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [str(promtool()), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_promtool_reads_every_alert_of_the_rule(rules: pathlib.Path) -> None:
    assert _promtool(rules, "check", "rules", "rules.yaml") == (
        0,
        "Checking rules.yaml\n  SUCCESS: 8 rules found\n\n",
        "",
    )


def test_the_alerts_on_what_the_cluster_sees_pass_their_unit_tests(rules: pathlib.Path) -> None:
    assert _promtool(rules, "test", "rules", UNIT_TESTS.name) == (
        0,
        f"Processing test file: {UNIT_TESTS.name}\n  SUCCESS\n\n",
        "",
    )


def test_the_unit_tests_cover_the_two_alerts_and_read_the_rules_file() -> None:
    unit_tests = yaml.safe_load(UNIT_TESTS.read_text())
    alerts = {case["alertname"] for test in unit_tests["tests"] for case in test["alert_rule_test"]}

    assert (unit_tests["rule_files"], alerts) == (
        ["rules.yaml"],
        {"OmeOperatorDown", "OmeWebhookCallsFailing"},
    )
