"""Repository rules that run with the tests: lint, formatting, and the layer contracts."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(pathlib.Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the project with its test extra")
    return found


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "operator", "tests"], id="ruff finds no lint problems"),
        pytest.param(
            ["ruff", "format", "--check", "operator", "tests"], id="the code is ruff-formatted"
        ),
        pytest.param(
            ["lint-imports", "--no-cache"],
            id="the core and models import no kopf, kubernetes client or prometheus_client",
        ),
    ],
)
def test_repository_rule_holds(command: list[str]) -> None:
    result = subprocess.run(
        [_tool(command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_operator_source_root_is_not_a_package() -> None:
    assert not (ROOT / "operator" / "__init__.py").exists()
