"""charts/generate.py keeps the chart's copies of manifests/ in step with it: ``--check`` passes on
the repository, and on a copy of it names each file a change of the sources makes stale (and
why), until a run writes them; a source the chart cannot carry stops it with the reason."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.manifests.manifest_files import ROOT

SCRIPT = ROOT / "charts" / "generate.py"
CHART = "charts/ome-operator"
#: What the script reads and writes, copied for a test that changes it.
TREE = ("manifests", "overlays", "charts")


def generate(root: pathlib.Path, *args: str) -> tuple[int, str, str]:
    """``python charts/generate.py ARGS`` in ``root``: its exit code, stdout and stderr."""
    done = subprocess.run(
        [sys.executable, str(root / "charts" / "generate.py"), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """A copy of what the script reads and writes, whose chart is up to date."""
    for name in TREE:
        shutil.copytree(ROOT / name, tmp_path / name)
    assert generate(tmp_path, "--check")[0] == 0
    return tmp_path


def test_the_chart_is_generated_from_the_repositorys_manifests() -> None:
    assert generate(ROOT, "--check") == (0, "", "")


def _add_alert(root: pathlib.Path) -> None:
    rules = root / "manifests" / "monitoring" / "prometheusrule.yaml"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(
        text.rstrip("\n") + "\n        - alert: OmeTestAlert\n          expr: vector(1)\n",
        encoding="utf-8",
    )


def _drop_crd(root: pathlib.Path) -> None:
    kustomization = root / "manifests" / "crds" / "kustomization.yaml"
    text = kustomization.read_text(encoding="utf-8")
    kustomization.write_text(text.replace("  - acceleratorclasses.yaml\n", ""), encoding="utf-8")


def _grant_more(root: pathlib.Path) -> None:
    role = root / "manifests" / "rbac" / "role.yaml"
    text = role.read_text(encoding="utf-8")
    role.write_text(
        text + '  - apiGroups: [""]\n    resources: ["pods"]\n    verbs: ["get"]\n',
        encoding="utf-8",
    )


def _delete_generated(root: pathlib.Path) -> None:
    (root / CHART / "files" / "webhook" / "webhooks.yaml").unlink()


def _add_by_hand(root: pathlib.Path) -> None:
    (root / CHART / "files" / "monitoring" / "extra.yaml").write_text("{}\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "stale"),
    [
        pytest.param(
            _add_alert,
            [f"{CHART}/files/monitoring/prometheusrule-ome-operator.yaml (out of date)"],
            id="a new alert in manifests/monitoring makes the chart's PrometheusRule stale",
        ),
        pytest.param(
            _drop_crd,
            [f"{CHART}/crds/acceleratorclasses.yaml (not generated any more)"],
            id="a CRD dropped from manifests/crds makes the chart's copy one to remove",
        ),
        pytest.param(
            _grant_more,
            [f"{CHART}/files/rbac/role.yaml (out of date)"],
            id="a new rule in manifests/rbac makes the chart's rules stale",
        ),
        pytest.param(
            _delete_generated,
            [f"{CHART}/files/webhook/webhooks.yaml (missing)"],
            id="a generated file deleted is missing",
        ),
        pytest.param(
            _add_by_hand,
            [f"{CHART}/files/monitoring/extra.yaml (not generated any more)"],
            id="a file added by hand among the generated ones is one to remove",
        ),
    ],
)
def test_check_names_each_stale_file_until_a_run_writes_it(tree, change, stale) -> None:
    change(tree)
    checked = generate(tree, "--check")
    written = generate(tree)
    verbs = [f"{'removed' if 'not generated' in s else 'wrote'} {s.split(' (')[0]}" for s in stale]
    assert (checked, written, generate(tree, "--check")) == (
        (1, "".join(f"stale: {s}\n" for s in stale) + "run: python charts/generate.py\n", ""),
        (0, "".join(f"{verb}\n" for verb in verbs), ""),
        (0, "", ""),
    )


def test_a_run_carries_a_new_alert_into_the_chart(tree) -> None:
    _add_alert(tree)
    generate(tree)
    text = (tree / CHART / "files" / "monitoring" / "prometheusrule-ome-operator.yaml").read_text()
    assert "- alert: OmeTestAlert\n      expr: vector(1)\n" in text


def _add_service(root: pathlib.Path) -> None:
    monitoring = root / "manifests" / "monitoring"
    (monitoring / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: grafana\n  namespace: ome\n",
        encoding="utf-8",
    )
    kustomization = monitoring / "kustomization.yaml"
    text = kustomization.read_text(encoding="utf-8")
    kustomization.write_text(
        text.replace("resources:\n", "resources:\n  - service.yaml\n"), encoding="utf-8"
    )


def _patch_crds(root: pathlib.Path) -> None:
    kustomization = root / "manifests" / "crds" / "kustomization.yaml"
    text = kustomization.read_text(encoding="utf-8")
    kustomization.write_text(text + "commonLabels:\n  team: ml\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            _add_service,
            "error: manifests/monitoring/ builds a Service grafana, which no switch of "
            "values.yaml turns on: give it one (values.yaml metrics, "
            "templates/monitoring.yaml, MONITORING_KINDS in charts/generate.py)\n",
            id="a monitoring object of a kind the chart has no switch for",
        ),
        pytest.param(
            _patch_crds,
            "error: manifests/crds/kustomization.yaml has commonLabels: the chart copies its "
            "CRD files as they are, so it can hold only resources\n",
            id="a CRD kustomization that changes its files",
        ),
    ],
)
def test_a_source_the_chart_cannot_carry_stops_the_script_with_the_reason(
    tree, change, message
) -> None:
    change(tree)
    assert generate(tree, "--check") == (2, "", message)
