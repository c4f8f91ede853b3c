"""``-f`` manifests are read as kubectl reads them (SPEC S16.1) and answered as a cluster would."""

import io
import pathlib
import textwrap

import pytest

from ome_operator.cluster.manifests import ManifestError, ManifestReader, load_manifests
from ome_operator.cluster.objects import (
    CLUSTER_SERVING_RUNTIME,
    SERVING_RUNTIME,
    NotFoundError,
    Resource,
)


def doc(name: str, kind: str = "ServingRuntime") -> str:
    return f"apiVersion: ome.io/v1beta1\nkind: {kind}\nmetadata:\n  name: {name}\n"


def write(root: pathlib.Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty directory, so paths in messages read as the user typed them."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("files", "paths", "stdin", "expected"),
    [
        pytest.param({"one.yaml": doc("a")}, ["one.yaml"], "", ["a"], id="a single-document file"),
        pytest.param(
            {"many.yaml": f"---\n{doc('a')}---\n---\n{doc('b')}...\n---\n{doc('c')}---\n"},
            ["many.yaml"],
            "",
            ["a", "b", "c"],
            id="multi-document YAML, empty documents skipped",
        ),
        pytest.param(
            {
                "d/b.yaml": doc("b"),
                "d/a/z.yml": doc("a/z"),
                "d/a.json": '{"apiVersion": "ome.io/v1beta1", "kind": "ServingRuntime",'
                ' "metadata": {"name": "a.json"}}',
                "d/c/deeper/c.yaml": doc("c/deeper/c"),
                "d/notes.txt": "not a manifest",
                "d/README.md": doc("ignored"),
            },
            ["d"],
            "",
            ["a/z", "a.json", "b", "c/deeper/c"],
            id="a directory is read recursively in path order, manifests only",
        ),
        pytest.param(
            {
                "list.yaml": """\
                    apiVersion: v1
                    kind: List
                    items:
                    - apiVersion: ome.io/v1beta1
                      kind: ServingRuntime
                      metadata: {name: a}
                    - apiVersion: ome.io/v1beta1
                      kind: ServingRuntime
                      metadata: {name: b}
                """
            },
            ["list.yaml"],
            "",
            ["a", "b"],
            id="a kind: List is flattened",
        ),
        pytest.param(
            {
                "typed.json": '{"apiVersion": "ome.io/v1beta1", "kind": "ServingRuntimeList",'
                ' "items": [' + '{"apiVersion": "ome.io/v1beta1", "kind": "ServingRuntime",'
                ' "metadata": {"name": "a"}}]}'
            },
            ["typed.json"],
            "",
            ["a"],
            id="a typed list from the API is flattened too",
        ),
        pytest.param({}, ["-"], doc("a") + "---\n" + doc("b"), ["a", "b"], id="- reads stdin"),
        pytest.param(
            {"x.manifest": doc("x"), "y.yaml": doc("y")},
            ["y.yaml", "-", "x.manifest"],
            doc("s"),
            ["y", "s", "x"],
            id="paths in flag order; a named file is read whatever its suffix",
        ),
    ],
)
def test_load_manifests_reads_objects_in_order(tmp_path, files, paths, stdin, expected):
    write(tmp_path, files)
    objects = load_manifests(paths, io.StringIO(stdin))
    assert [obj["metadata"]["name"] for obj in objects] == expected


@pytest.mark.parametrize(
    ("files", "paths", "message"),
    [
        pytest.param({}, ["x.yaml"], 'the path "x.yaml" does not exist', id="a missing path"),
        pytest.param(
            {"x.yaml": "kind: A\n  bad: indent\n"},
            ["x.yaml"],
            "error parsing x.yaml: line 2: mapping values are not allowed here",
            id="unparseable YAML names the path and line",
        ),
        pytest.param(
            {"d/x.json": '{"kind": '},
            ["d"],
            "error parsing d/x.json: line 1: expected the node content, but found '<stream end>'",
            id="broken JSON in a directory names the file",
        ),
        pytest.param(
            {"x.yaml": doc("a") + "---\n- just\n- a list\n"},
            ["x.yaml"],
            "error parsing x.yaml: document 2 is not a mapping",
            id="a document that is not a mapping",
        ),
        pytest.param(
            {"x.yaml": "metadata:\n  name: a\n"},
            ["x.yaml"],
            "error parsing x.yaml: document 1 has no apiVersion or kind",
            id="a document without apiVersion and kind",
        ),
        pytest.param(
            {"x.yaml": "apiVersion: v1\nkind: List\nitems:\n- kind: ServingRuntime\n"},
            ["x.yaml"],
            "error parsing x.yaml: document 1 item 1 has no apiVersion",
            id="a list item without apiVersion",
        ),
    ],
)
def test_load_manifests_errors_name_the_path(tmp_path, files, paths, message):
    write(tmp_path, files)
    with pytest.raises(ManifestError) as raised:
        load_manifests(paths, io.StringIO(""))
    assert str(raised.value) == message


def test_stdin_errors_name_stdin():
    with pytest.raises(ManifestError) as raised:
        load_manifests(["-"], io.StringIO("- not\n- a mapping\n"))
    assert str(raised.value) == "error parsing STDIN: document 1 is not a mapping"


# The reader answers as a cluster holding those objects.


def runtime(name: str, namespace: str | None = None, kind: str = "ServingRuntime") -> dict:
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": {}}


@pytest.mark.parametrize(
    ("objects", "kwargs", "expected"),
    [
        pytest.param(
            [runtime("a")],
            {},
            [("default", "a")],
            id="a namespaced object without namespace lives in default",
        ),
        pytest.param(
            [runtime("a")],
            {"default_namespace": "team-a"},
            [("team-a", "a")],
            id="or in the namespace the CLI resolved",
        ),
        pytest.param(
            [runtime("a", "ns", kind="ClusterServingRuntime")],
            {},
            [(None, "a")],
            id="a cluster-scoped object drops its namespace",
        ),
    ],
)
def test_manifest_reader_places_objects_as_the_api_server_would(objects, kwargs, expected):
    reader = ManifestReader(objects, **kwargs)
    found = reader.list(SERVING_RUNTIME, None) + reader.list(CLUSTER_SERVING_RUNTIME, None)
    assert [(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in found] == expected


def test_the_later_of_two_manifests_for_one_object_wins():
    first, second = runtime("a", "ns"), runtime("a", "ns")
    second["spec"] = {"version": 2}
    reader = ManifestReader([first, second])
    assert reader.get(SERVING_RUNTIME, "ns", "a")["spec"] == {"version": 2}
    assert len(reader.list(SERVING_RUNTIME, "ns")) == 1


def test_objects_read_are_copies():
    reader = ManifestReader([runtime("a", "ns")])
    reader.get(SERVING_RUNTIME, "ns", "a")["spec"]["changed"] = True
    assert reader.get(SERVING_RUNTIME, "ns", "a")["spec"] == {}


def test_an_object_of_another_api_group_is_not_a_match():
    other = runtime("a", "ns")
    other["apiVersion"] = "example.com/v1"
    with pytest.raises(NotFoundError):
        ManifestReader([other]).get(SERVING_RUNTIME, "ns", "a")


# What an API server could not hold is refused with the file, the document and the field.

HEADER = "apiVersion: v1\nkind: Note\n"
BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['x'] * 9)}]\n"
    for prev, name in zip([None, *"abcdefg"], "abcdefgh", strict=True)
)


def deep_json(levels: int) -> str:
    """A Note whose field ``a`` holds lists until the document is ``levels`` levels deep."""
    return (
        '{"apiVersion": "v1", "kind": "Note", "a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"
    )


def deep_yaml(levels: int) -> str:
    """The same in block style, as ``kubectl get -o yaml`` writes nested lists."""
    return HEADER + "a:\n" + "- " * (levels - 2) + "[]\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "apiVersion: v1\nkind: 5\n",
            "error parsing x.yaml: document 1: kind: must be a string (got 5)",
            id="a kind that is not a string",
        ),
        pytest.param(
            "apiVersion: [v1]\nkind: Note\n",
            'error parsing x.yaml: document 1: apiVersion: must be a string (got ["v1"])',
            id="an apiVersion that is not a string",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: {a: 1}}\n",
            'error parsing x.yaml: document 1 item 1: kind: must be a string (got {"a": 1})',
            id="a list item whose kind is a mapping",
        ),
        pytest.param(
            "apiVersion: v1\na: " + "[" * 30 + "]" * 30 + "\nkind: [" + "[" * 30 + "]" * 30 + "]\n",
            "error parsing x.yaml: document 1: kind: must be a string (got a deeply nested list)",
            id="a deep value is shown by its shape",
        ),
        pytest.param(
            doc("a") + "---\n" + deep_yaml(10_001),
            "error parsing x.yaml: document 2 is nested more than 10000 levels deep",
            id="a YAML document deeper than an API server takes",
        ),
        pytest.param(
            deep_yaml(40_000),
            "error parsing x.yaml: document 1 is nested more than 10000 levels deep",
            id="a YAML document too deep for the raised recursion limit",
        ),
        pytest.param(
            deep_json(10_001),
            "error parsing x.yaml: document 1 is nested more than 10000 levels deep",
            id="a JSON document deeper than an API server takes",
        ),
        pytest.param(
            deep_json(100_000),
            "error parsing x.yaml: document 1 is nested more than 10000 levels deep",
            id="a JSON document too deep for the raised recursion limit",
        ),
        pytest.param(
            HEADER + "a: &a [*a]\n",
            "error parsing x.yaml: line 3: anchor 'a' value contains itself",
            id="an anchor inside its own value",
        ),
        pytest.param(
            BOMB + HEADER,
            "error parsing x.yaml: line 1: document contains excessive aliasing",
            id="an alias bomb (nine to the eighth strings)",
        ),
        pytest.param(
            HEADER + "a: 0x_\n",
            'error parsing x.yaml: line 3: cannot read "0x_" as int',
            id="an integer PyYAML cannot construct",
        ),
        pytest.param(
            HEADER + "a: !!bool maybe\n",
            'error parsing x.yaml: line 3: cannot read "maybe" as bool',
            id="a tag that does not fit its value",
        ),
        pytest.param(
            HEADER + "a: " + "1" * 5000 + "\n",
            f'error parsing x.yaml: line 3: cannot read "{"1" * 37}..." as int',
            id="an integer of more digits than Python converts",
        ),
        pytest.param(
            HEADER + "a: 9223372036854775808\n",
            "error parsing x.yaml: document 1: a: must be an integer from -9223372036854775808 "
            "to 9223372036854775807 (got 9223372036854775808)",
            id="an integer past int64",
        ),
        pytest.param(
            HEADER + "a: [0x" + "f" * 5000 + "]\n",
            "error parsing x.yaml: document 1: a[0]: must be an integer from "
            "-9223372036854775808 to 9223372036854775807 (got an integer of 20000 bits)",
            id="a huge hexadecimal integer",
        ),
        pytest.param(
            HEADER + "spec:\n  x: .nan\n",
            "error parsing x.yaml: document 1: spec.x: must be a finite number (got NaN)",
            id="NaN",
        ),
        pytest.param(
            '{"apiVersion": "v1", "kind": "Note", "a": {"b c": -Infinity}}',
            'error parsing x.yaml: document 1: a["b c"]: must be a finite number (got -Infinity)',
            id="Infinity in JSON",
        ),
        pytest.param(
            HEADER + "labels: {1.5: x}\n",
            "error parsing x.yaml: document 1: labels: map key 1.5 is not a string",
            id="a map key that is a float",
        ),
        pytest.param(
            HEADER + "~: x\n",
            "error parsing x.yaml: document 1: (root): map key null is not a string",
            id="a null map key",
        ),
        pytest.param(
            HEADER + "a: b\x00\n",
            "error parsing x.yaml: unacceptable character #x0000: special characters are not "
            'allowed in "<unicode string>", position 30',
            id="a character YAML does not allow",
        ),
    ],
)
def test_what_an_api_server_could_not_hold_is_refused(tmp_path, text, message):
    write(tmp_path, {"x.yaml": text})
    with pytest.raises(ManifestError) as raised:
        load_manifests(["x.yaml"], io.StringIO(""))
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "a: 2025-12-31T10:00:00Z\nb: 2001-12-14 21:59:43.10 -5\nc: 2001-02-30\n",
            {"a": "2025-12-31T10:00:00Z", "b": "2001-12-14 21:59:43.10 -5", "c": "2001-02-30"},
            id="timestamps are the text written, as kubectl reads them",
        ),
        pytest.param(
            "labels: {7: a, true: b, -3: c}\n",
            {"labels": {"7": "a", "true": "b", "-3": "c"}},
            id="integer and boolean map keys become strings",
        ),
        pytest.param(
            "a: !!binary aGk=\nb: !!set {x, y}\nc: !!omap [{k: 1}, {j: 2}]\n",
            {"a": "hi", "b": {"x": None, "y": None}, "c": [{"k": 1}, {"j": 2}]},
            id="binary, sets and ordered maps as JSON values, in order",
        ),
        pytest.param(
            'a: "x\\ud800y"\n',
            {"a": "x\ufffdy"},
            id="a lone surrogate becomes U+FFFD, as Go's decoder makes it",
        ),
        pytest.param(
            "base: &b {image: v1, args: [a]}\nrunner:\n  <<: *b\n  image: v2\nagain: *b\n",
            {
                "base": {"image": "v1", "args": ["a"]},
                "runner": {"image": "v2", "args": ["a"]},
                "again": {"image": "v1", "args": ["a"]},
            },
            id="aliases and merge keys are expanded",
        ),
    ],
)
def test_yaml_values_are_read_as_json_values(text, expected):
    [obj] = load_manifests(["-"], io.StringIO(HEADER + text))
    assert {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")} == expected


def test_an_expanded_alias_is_a_copy():
    [obj] = load_manifests(["-"], io.StringIO(HEADER + "a: &x {b: [1]}\nc: *x\n"))
    obj["a"]["b"].append(2)
    assert obj["c"] == {"b": [1]}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(deep_json(10_000), id="JSON"),
        pytest.param(deep_yaml(10_000), id="YAML"),
    ],
)
def test_a_document_as_deep_as_an_api_server_takes_is_read(text):
    [obj] = load_manifests(["-"], io.StringIO(text))
    levels, node = 1, obj
    while node:
        node, levels = (node["a"] if isinstance(node, dict) else node[0]), levels + 1
    assert levels == 10_000


@pytest.mark.parametrize(
    ("paths", "stdin", "message"),
    [
        pytest.param(
            ["-"],
            io.TextIOWrapper(io.BytesIO(b"kind: \xff\n"), encoding="utf-8"),
            "error reading STDIN: 'utf-8' codec can't decode byte 0xff in position 6: "
            "invalid start byte",
            id="standard input that is not UTF-8",
        ),
        pytest.param(
            ["a" * 5000],
            io.StringIO(""),
            f"error reading {'a' * 5000}: File name too long",
            id="a name too long for the file system",
        ),
        pytest.param(
            ["a\x00b"],
            io.StringIO(""),
            'the path "a\x00b" does not exist',
            id="a NUL byte in a path",
        ),
    ],
)
def test_a_path_or_input_that_cannot_be_read_is_named(paths, stdin, message):
    with pytest.raises(ManifestError) as raised:
        load_manifests(paths, stdin)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            doc("a") + "---\n" + HEADER + "metadata: {name: [1]}\n",
            "error parsing x.yaml: document 2: metadata.name: must be a string (got [1])",
            id="a name that is a list",
        ),
        pytest.param(
            HEADER + "metadata: {name: a, namespace: {}}\n",
            "error parsing x.yaml: document 1: metadata.namespace: must be a string (got {})",
            id="a namespace that is a mapping",
        ),
        pytest.param(
            HEADER + "metadata: text\n",
            'error parsing x.yaml: document 1: metadata: must be an object (got "text")',
            id="metadata that is not a mapping",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems:\n"
            "- {apiVersion: v1, kind: A, metadata: {name: 7}}\n",
            "error parsing x.yaml: document 1 item 1: metadata.name: must be a string (got 7)",
            id="a list item's name",
        ),
    ],
)
def test_the_reader_refuses_an_identity_an_api_server_could_not_store(tmp_path, text, message):
    write(tmp_path, {"x.yaml": text})
    with pytest.raises(ManifestError) as raised:
        ManifestReader.from_paths(["x.yaml"], io.StringIO(""))
    assert str(raised.value) == message


def test_objects_given_to_the_reader_are_named_by_position():
    bad = runtime("b")
    bad["metadata"]["name"] = ["b"]
    with pytest.raises(ManifestError) as raised:
        ManifestReader([runtime("a"), bad])
    assert str(raised.value) == (
        'error parsing object 2: metadata.name: must be a string (got ["b"])'
    )


def test_a_deep_object_is_read_as_a_copy():
    text = (
        "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: r, namespace: ome}\n"
        "data:\n" + "- " * 9_990 + "[]\n"
    )
    reader = ManifestReader.from_paths(["-"], io.StringIO(text))
    revision = Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True)
    found = reader.get(revision, "ome", "r")
    found["data"].clear()
    assert reader.get(revision, "ome", "r")["data"] != []
