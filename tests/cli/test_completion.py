"""``kubectl-ome completion bash|zsh``: scripts generated from the parser, checked by the shells
themselves (bash always; zsh and kubectl's plugin completion where they are installed)."""

from __future__ import annotations

import io
import os
import pathlib
import shutil
import subprocess

import pytest

from ome_operator.cli.completion import CommandNode, command_tree
from ome_operator.cli.main import build_parser, main

HELP = ("-h", "--help")
CONNECTION = (
    "-n",
    "--namespace",
    "--context",
    "--kubeconfig",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "--token",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name",
)
IMPERSONATION = ("--as", "--as-uid", "--as-group", "--as-user-extra", "--request-timeout")
EXPLAIN_VALUED = ("--isvc", "--model", "--ome-namespace", "-o", "--output")
EFFECTIVE_VALUED = ("--ome-namespace", "-o", "--output")
FILES = ("-f", "--filename")
FORMATS = ("wide", "json", "yaml", "name", "jsonpath=")
IMPACT_FORMATS = ("json", "yaml", "name", "jsonpath=")


def outputs(words: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return (("-o", words), ("--output", words))


#: The connection flags in declaration order, the two store_true ones among them.
CONNECTION_FLAGS = (
    *CONNECTION,
    "--insecure-skip-tls-verify",
    *IMPERSONATION,
    "--cache-dir",
    "--disable-compression",
    *FILES,
)
VALUED_CONNECTION = (*CONNECTION, *IMPERSONATION, "--cache-dir", *FILES)
TREE = [
    CommandNode("", ("runtime", "version", "completion"), (), HELP, ()),
    CommandNode("runtime", ("explain", "effective", "impact"), (), HELP, ()),
    CommandNode(
        "runtime explain",
        (),
        (),
        (
            *HELP,
            "--isvc",
            "--model",
            "--ome-namespace",
            "--with-effective",
            "-A",
            "--all-namespaces",
            "-o",
            "--output",
            "--no-headers",
            *CONNECTION_FLAGS,
        ),
        (*EXPLAIN_VALUED, *VALUED_CONNECTION),
        outputs(FORMATS),
    ),
    CommandNode(
        "runtime effective",
        (),
        (),
        (*HELP, *EFFECTIVE_VALUED, "--no-headers", *CONNECTION_FLAGS),
        (*EFFECTIVE_VALUED, *VALUED_CONNECTION),
        outputs(FORMATS),
    ),
    CommandNode(
        "runtime impact",
        (),
        (),
        (
            *HELP,
            *FILES,
            "--delete",
            "-A",
            "--all-namespaces",
            "-o",
            "--output",
            "--no-headers",
            "--fail-on-change",
            *CONNECTION_FLAGS[: -len(FILES)],
            "--state",
        ),
        (*FILES, "--delete", "-o", "--output", *VALUED_CONNECTION[: -len(FILES)], "--state"),
        outputs(IMPACT_FORMATS),
    ),
    CommandNode("version", (), (), HELP, ()),
    CommandNode("completion", (), ("bash", "zsh"), HELP, ()),
]

#: (words typed after the program, the last one being completed; the completions offered, or
#: None: left to the shell's file-name completion, which bash does when COMPREPLY is empty)
CASES = [
    pytest.param([""], "runtime version completion", id="the commands"),
    pytest.param(["ver"], "version", id="a command by its prefix"),
    pytest.param(["runtime", ""], "explain effective impact", id="the verbs"),
    pytest.param(["runtime", "ex"], "explain", id="a verb by its prefix"),
    pytest.param(["runtime", "-"], "-h --help", id="the flags of runtime"),
    pytest.param(["runtime", "explain", "--w"], "--with-effective", id="a flag of explain"),
    pytest.param(
        ["runtime", "explain", "--a"],
        "--all-namespaces --as --as-uid --as-group --as-user-extra",
        id="the flags of explain that share a prefix",
    ),
    pytest.param(
        ["runtime", "explain", "--isvc", "chat", "-o", "json", "--wi"],
        "--with-effective",
        id="flag values are skipped",
    ),
    pytest.param(["runtime", "explain", "-f", ""], None, id="a flag's value is left to the shell"),
    pytest.param(
        ["runtime", "explain", "-o", ""],
        "wide json yaml name jsonpath=",
        id="-o completes to the output formats",
    ),
    pytest.param(
        ["runtime", "impact", "--output", "j"], "json jsonpath=", id="impact's formats by prefix"
    ),
    pytest.param(
        ["runtime", "explain", "--isvc", "runtime", "--m"], "--model", id="a value is no command"
    ),
    pytest.param(
        ["runtime", "explain", "--ome-namespace=ome", "--with"],
        "--with-effective",
        id="a flag=value is one word",
    ),
    pytest.param(["runtime", "effective", "--o"], "--ome-namespace --output", id="effective"),
    pytest.param(["completion", ""], "bash zsh", id="the shells"),
    pytest.param(["completion", "zsh", ""], "-h --help", id="one shell only"),
    pytest.param(["version", ""], "-h --help", id="version has only its help"),
]


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """Each shell's script, as ``kubectl-ome completion SHELL`` prints it."""
    folder = tmp_path_factory.mktemp("completion")
    found = {}
    for shell in ("bash", "zsh"):
        code, out, err = run("completion", shell)
        assert (code, err) == (0, "")
        found[shell] = folder / f"kubectl-ome.{shell}"
        found[shell].write_text(out)
    return found


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def shell(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30, env=env)


needs_zsh = pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl")


def test_the_tree_is_every_command_with_its_words_and_flags() -> None:
    assert command_tree(build_parser()) == TREE


@pytest.mark.parametrize(
    ("shell_name", "first_line"),
    [
        pytest.param("bash", "#!/usr/bin/env bash", id="bash"),
        pytest.param("zsh", "#compdef kubectl-ome", id="zsh"),
    ],
)
def test_each_script_is_valid_for_its_shell(
    scripts: dict[str, pathlib.Path], shell_name: str, first_line: str
) -> None:
    text = scripts[shell_name].read_text()
    assert text.splitlines()[0] == first_line
    if shutil.which(shell_name) is not None:
        assert shell(shell_name, "-n", str(scripts[shell_name])).returncode == 0
    else:  # zsh may be missing: the script still names every command
        assert all(f'"{node.path}")' in text for node in TREE)


def test_an_unknown_shell_is_a_usage_error() -> None:
    code, out, err = run("completion", "fish")
    # argparse words the rest (how it quotes the choices varies with the Python version)
    assert (code, out, err.startswith("error: argument shell: invalid choice: 'fish'")) == (
        1,
        "",
        True,
    )


@pytest.mark.parametrize(("words", "expected"), CASES)
def test_bash_completes(
    scripts: dict[str, pathlib.Path], words: list[str], expected: str | None
) -> None:
    program = (
        f'source "{scripts["bash"]}"; COMP_WORDS=(kubectl-ome "$@"); COMP_CWORD=$#; '
        '_kubectl_ome; echo "${COMPREPLY[*]}"'
    )
    result = shell("bash", "-c", program, "bash", *words)
    assert (result.stdout, result.stderr) == ((expected or "") + "\n", "")


#: zsh outside a completion widget: compadd (filtering by the word's prefix, as zsh's does) and
#: _files print what they are given; compdef does nothing.
ZSH_SHIMS = (
    "compdef() { :; }; _files() { print -r -- '<files>'; }; "
    'compadd() { shift; local w; local -a m; for w in "$@"; do '
    '[[ $w == ${words[CURRENT]}* ]] && m+=($w); done; print -r -- "${m[*]}"; }; '
)


@needs_zsh
@pytest.mark.parametrize(("words", "expected"), CASES)
def test_zsh_completes(
    scripts: dict[str, pathlib.Path], words: list[str], expected: str | None
) -> None:
    program = (
        f'{ZSH_SHIMS} source "{scripts["zsh"]}"; words=(kubectl-ome "$@"); CURRENT=$#words; '
        "_kubectl_ome"
    )
    result = shell("zsh", "-f", "-c", program, "zsh", *words)
    assert (result.stdout, result.stderr) == (
        ("<files>" if expected is None else expected) + "\n",
        "",
    )


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param(["runtime", "ex"], "explain\n:4\n", id="completions, no file names"),
        pytest.param(["runtime", ""], "explain\neffective\nimpact\n:4\n", id="one a line"),
        pytest.param(["runtime", "explain", "-f", ""], ":0\n", id="a value: file names"),
        pytest.param(
            ["runtime", "effective", "-o", "y"], "yaml\n:4\n", id="an output format, no file names"
        ),
    ],
)
def test_the_bash_script_run_as_kubectl_complete_ome_answers_kubectl(
    scripts: dict[str, pathlib.Path], words: list[str], expected: str
) -> None:
    result = shell("bash", str(scripts["bash"]), *words)
    assert (result.stdout, result.stderr) == (expected, "")


@needs_kubectl
def test_kubectl_completes_kubectl_ome_through_kubectl_complete_ome(
    scripts: dict[str, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    plugin = tmp_path / "kubectl-ome"
    plugin.write_text("#!/bin/sh\n")
    helper = tmp_path / "kubectl_complete-ome"
    helper.write_text(scripts["bash"].read_text())
    for path in (plugin, helper):
        path.chmod(0o755)
    env = {
        "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "KUBECONFIG": os.devnull,
    }
    result = shell("kubectl", "__complete", "ome", "runtime", "explain", "--with", env=env)
    assert result.stdout == "--with-effective\n:4\n"
