"""``-o jsonpath=<template>``: the examples of kubectl's JSONPath page
(https://kubernetes.io/docs/reference/kubectl/jsonpath/), over its input, as ``kubectl get``
prints them (several results one space apart, objects as compact JSON, missing keys empty)."""

from __future__ import annotations

import pytest

from ome_operator.cli.jsonpath_templates import JSONPathError, parse_template

#: The page's input, as it gives it.
DOCUMENT = {
    "kind": "List",
    "items": [
        {
            "kind": "None",
            "metadata": {
                "name": "127.0.0.1",
                "labels": {"kubernetes.io/hostname": "127.0.0.1"},
            },
            "status": {
                "capacity": {"cpu": "4"},
                "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}],
            },
        },
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.2"},
            "status": {
                "capacity": {"cpu": "8"},
                "addresses": [
                    {"type": "LegacyHostIP", "address": "127.0.0.2"},
                    {"type": "another", "address": "127.0.0.3"},
                ],
            },
        },
    ],
    "users": [
        {"name": "myself", "user": {}},
        {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
    ],
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param("kind is {.kind}", "kind is List", id="text around a path is printed as is"),
        pytest.param("{['kind']}", "List", id="a child by brackets"),
        pytest.param("{$.kind}", "List", id="the root sign is optional"),
        pytest.param(
            "{..name}", "127.0.0.1 127.0.0.2 myself e2e", id="recursive descent, one space apart"
        ),
        pytest.param(
            "{.items[*].metadata.name}", "127.0.0.1 127.0.0.2", id="a wildcard gets every item"
        ),
        pytest.param("{.users[0].name}", "myself", id="a subscript"),
        pytest.param("{.users[-1:].name}", "e2e", id="a negative slice steps back from the end"),
        pytest.param(
            '{.users[?(@.name=="e2e")].user.password}', "secret", id="a filter with double quotes"
        ),
        pytest.param(
            "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
            '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ',
            id="range iterates a list; objects print as compact JSON",
        ),
        pytest.param(
            '{range .items[*]}{.metadata.name}{"\\t"}{.status.capacity.cpu}{"\\n"}{end}',
            "127.0.0.1\t4\n127.0.0.2\t8\n",
            id="quoted text inside braces has its escapes decoded",
        ),
        pytest.param(
            "{range .items[*]}{range .status.addresses[*]}{.address} {end}{end}",
            "127.0.0.1 127.0.0.2 127.0.0.3 ",
            id="ranges nest",
        ),
        pytest.param(
            "{range .users}{@.name};{end}", "myself;e2e;", id="range over a list value, with @"
        ),
        pytest.param('{"{"}x{"}"}', "{x}", id="a quoted brace does not open or close"),
        pytest.param("{.nothing}|{.users[5].name}", "|", id="a missing key prints nothing"),
        pytest.param("{.users[1].user.username}\\n", "admin\\n", id="text outside is not decoded"),
    ],
)
def test_kubectl_documented_examples(template: str, expected: str) -> None:
    assert parse_template(template).render(DOCUMENT) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(True, "true", id="a boolean as JSON writes it"),
        pytest.param(None, "null", id="null as JSON writes it"),
        pytest.param(3, "3", id="a number as JSON writes it"),
        pytest.param(["a", 1], '["a",1]', id="a list as compact JSON"),
    ],
)
def test_values_that_are_not_strings(value: object, expected: str) -> None:
    assert parse_template("{.v}").render({"v": value}) == expected


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        pytest.param("{.kind", "unclosed action", id="an action without its brace"),
        pytest.param("{end}", "not in range, nothing to end", id="an end outside a range"),
        pytest.param(
            "{range .items[*]}{.kind}", "unclosed range: {end} is missing", id="a range unended"
        ),
        pytest.param("{}", "empty expression", id="empty braces"),
        pytest.param('{"a}', "unclosed action", id="an unterminated quote"),
        pytest.param(
            "{.items[}",
            "invalid expression .items[: Parse error near the end of string!",
            id="a path jsonpath_ng cannot parse, in its words",
        ),
    ],
)
def test_templates_that_do_not_parse(template: str, reason: str) -> None:
    with pytest.raises(JSONPathError) as raised:
        parse_template(template)
    assert str(raised.value) == f"error parsing jsonpath {template}, {reason}"


def test_an_intersection_is_refused_not_a_crash() -> None:
    template = parse_template("{users & kind}")
    with pytest.raises(JSONPathError) as raised:
        template.render(DOCUMENT)
    assert str(raised.value) == (
        "error parsing jsonpath {users & kind}, '&' (intersection) is not supported"
    )
