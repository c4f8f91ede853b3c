"""``--help`` ends an option's text with ``(default: ...)`` when the default says something."""

from __future__ import annotations

import pytest

from ome_operator.cli.commands import DefaultsHelpFormatter, Parser
from ome_operator.cli.main import main


def help_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The help, whitespace collapsed (argparse wraps to the terminal's width)."""
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    out, err = capsys.readouterr()
    assert (exited.value.code, err) == (0, "")
    return " ".join(out.split())


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        pytest.param(
            ("runtime", "explain"),
            [
                "--ome-namespace OME_NAMESPACE Namespace where the OME control plane is "
                "installed (default: ome)",
                "--request-timeout REQUEST_TIMEOUT The length of time to wait before giving up "
                "on a single server request (default: 0)",
                "Output format. One of: (wide, json, yaml, name, jsonpath); jsonpath=TEMPLATE "
                "as kubectl's (default: table) --no-headers When using the default or wide "
                "output format, don't print headers",
                "--with-effective Append bounded effective context for --isvc (auto scan: "
                "1,000 items/2 pages) -A",
                "--as-group AS_GROUPS Group to impersonate for the operation (repeatable) --as",
            ],
            id="explain",
        ),
        pytest.param(
            ("runtime", "effective"),
            [
                "--ome-namespace OME_NAMESPACE Namespace where the OME control plane is "
                "installed (default: ome)",
                "Output format. One of: (wide, json, yaml, name, jsonpath); jsonpath=TEMPLATE "
                "as kubectl's (default: table) ",
                "single server request (default: 0)",
            ],
            id="effective",
        ),
    ],
)
def test_help_shows_the_defaults_that_say_something(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], shown: list[str]
) -> None:
    text = help_text(capsys, *argv)
    assert [part for part in shown if part not in text] == []
    assert text.count("(default: ") == 3  # --ome-namespace, -o, --request-timeout: no others


@pytest.mark.parametrize(
    ("options", "line"),
    [
        pytest.param({"default": "ome"}, "--x X Xs (default: ome)", id="a string"),
        pytest.param({"default": "0"}, "--x X Xs (default: 0)", id="a zero"),
        pytest.param({"default": 5, "type": int}, "--x X Xs (default: 5)", id="a number"),
        pytest.param({}, "--x X Xs", id="None"),
        pytest.param({"default": ""}, "--x X Xs", id="an empty string"),
        pytest.param({"action": "append", "default": []}, "--x X Xs", id="an empty list"),
        pytest.param({"action": "store_true"}, "--x Xs", id="a flag"),
        pytest.param({"action": "store_false"}, "--x Xs", id="a flag that defaults to true"),
        pytest.param(
            {"default": "a", "help": "Xs, %(default)s by default"},
            "--x X Xs, a by default",
            id="a text that already shows it",
        ),
    ],
)
def test_which_defaults_are_shown(options: dict, line: str) -> None:
    parser = Parser(prog="p", formatter_class=DefaultsHelpFormatter, add_help=False)
    parser.add_argument("--x", **{"help": "Xs", **options})
    assert " ".join(parser.format_help().split()).partition(" options: ")[2] == line
