"""``ome-operator render -f`` and ``kubectl ome runtime explain|effective -f`` on mutated
manifests: they print their output or one ``error: ...`` and exit 1, never a traceback, and
the same input prints the same bytes."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ome_operator import operator_command
from ome_operator.cli import main as kubectl_ome
from tests.fuzz.mutations import NOW, fuzz, manifest_sets, manifest_text

Main = Callable[..., int]


def run(main: Main, argv: Sequence[str], text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def assert_clean(result: tuple[int, str, str]) -> None:
    """Output and exit 0, or ``error: <message>`` as the last line on stderr and exit 1 (a
    known error, not the last-resort ``internal error``; explain may print its note first)."""
    code, _, err = result
    assert code in (0, 1), result
    if code == 1:
        last = err.rstrip("\n").split("\n")[-1]
        assert last.startswith("error: ") and err.endswith("\n"), err
        assert not last.startswith("error: internal error"), err
    assert "Traceback" not in err


def names(docs: list[Any], kind: str) -> list[str]:
    found = []
    for doc in docs:
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        if isinstance(doc, dict) and doc.get("kind") == kind and isinstance(meta, dict):
            name = meta.get("name")
            if isinstance(name, str) and name:
                found.append(name)
    return found


@fuzz(60)
@given(st.data())
def test_render_prints_a_report_or_an_error_and_the_same_one_twice(data: st.DataObject) -> None:
    text = data.draw(manifest_text(data.draw(manifest_sets())))
    argv = ["render", "-f", "-", "--now", NOW, "-o", data.draw(st.sampled_from(["yaml", "json"]))]

    first = run(operator_command.main, argv, text)

    assert_clean(first)
    if first[0] == 1:
        assert first[1] == ""
    else:  # what it sets aside or leaves out, it says (docs/troubleshooting.md)
        assert all(line.startswith("Warning: ") for line in first[2].splitlines())
    assert run(operator_command.main, argv, text) == first


@fuzz(120)
@given(st.data())
def test_kubectl_ome_prints_a_view_or_an_error_and_the_same_one_twice(
    data: st.DataObject,
) -> None:
    docs = data.draw(manifest_sets())
    text = data.draw(manifest_text(docs))
    services = names(docs, "InferenceService") or ["svc"]
    models = names(docs, "ClusterBaseModel") + names(docs, "BaseModel") or ["llama"]
    namespace = data.draw(st.sampled_from(["default", "demo", "llama-demo", "qwen", "llama-small"]))
    service = data.draw(st.sampled_from(services))
    command = data.draw(
        st.sampled_from(
            [
                ["explain", "--isvc", service],
                ["explain", "--isvc", service, "--with-effective"],
                ["explain", "--model", data.draw(st.sampled_from(models))],
                ["effective", service, "-o", data.draw(st.sampled_from(["table", "wide"]))],
                ["effective", service, "-o", data.draw(st.sampled_from(["json", "yaml"]))],
            ]
        )
    )
    argv = ["runtime", *command, "-n", namespace, "-f", "-"]

    first = run(kubectl_ome.main, argv, text)

    assert_clean(first)
    assert run(kubectl_ome.main, argv, text) == first
