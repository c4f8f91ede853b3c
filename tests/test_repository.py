"""Repository rules that run with the tests: lint, formatting, and the layer contracts."""

from __future__ import annotations

import os
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
            id="the import contracts of pyproject hold",
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


@pytest.mark.parametrize(
    ("module", "line"),
    [
        pytest.param(
            "core/merging.py", "import prometheus_client", id="prometheus_client in the core"
        ),
        pytest.param(
            "core/merging.py", "import kubernetes", id="the kubernetes client in the core"
        ),
        pytest.param("models/base.py", "from .. import metrics", id="metrics in the models"),
        pytest.param("controller/queue.py", "import kubernetes", id="kubernetes in the controller"),
        pytest.param(
            "handlers/admission.py", "import prometheus_client", id="prometheus_client in a handler"
        ),
        pytest.param("core/merging.py", "from ..cluster import api", id="the core on the API edge"),
        pytest.param("cluster/api.py", "from ..core import merging", id="the API edge on the core"),
    ],
)
def test_an_import_across_the_contracts_breaks_them(tmp_path, module: str, line: str) -> None:
    """The contracts are not vacuous: one such import into a copy of the tree breaks them."""
    shutil.copytree(
        ROOT / "operator", tmp_path / "operator", ignore=shutil.ignore_patterns("*.pyc")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "operator" / "ome_operator" / module
    target.write_text(f"{target.read_text(encoding='utf-8')}\n{line}\n", encoding="utf-8")

    result = subprocess.run(
        [_tool("lint-imports"), "--no-cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "operator")},
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout


def test_no_source_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "operator").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}


def test_no_module_imports_itself_through_others() -> None:
    import grimp

    sys.path.insert(0, str(ROOT / "operator"))
    try:
        graph = grimp.build_graph("ome_operator")
    finally:
        sys.path.remove(str(ROOT / "operator"))
    cycles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.startswith("ome_operator")
        and graph.find_shortest_chain(importer=imported, imported=module)
    )
    assert cycles == []
