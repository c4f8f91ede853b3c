"""``-f`` manifests are read as kubectl reads them (SPEC S16.1) and answered as a cluster would."""

import io
import pathlib
import textwrap

import pytest

from ome_operator.cluster.manifests import ManifestError, ManifestReader, load_manifests
from ome_operator.cluster.objects import CLUSTER_SERVING_RUNTIME, SERVING_RUNTIME, NotFoundError


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
