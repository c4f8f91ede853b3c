"""``kubectl ome runtime effective`` output (SPEC S13): the S13.3 table, the plugin reading
manifest files, long values shortened, ``-o wide``, ``-o json`` and ``-o yaml``."""

from __future__ import annotations

import hashlib
import io
import json
import pathlib
import re
import textwrap

import pytest
import yaml

from ome_operator.cli.main import main
from tests.builders import runtime_manifest
from tests.cli.effective.reports import (
    EXPLICIT,
    LLAMA,
    LLAMA_HASH,
    MODEL,
    NAMED,
    OTHER,
    OTHER_HASH,
    effective,
    revision,
    rows_of,
    service,
    with_parent,
)
from tests.core.effective.evidence import spec_hash


def test_the_s13_3_illustration_with_the_real_hash() -> None:
    short = LLAMA_HASH[:8]
    expected = textwrap.dedent(f"""\
        SCOPE     FIELD           VALUE
        Live      STATE           Available
        Live      RUNTIME         CSR/vllm-llama
        Live      HASH            {short}
        Live      ENGINE          RawDeployment (Default)
        Active    STATE           Available
        Active    RUNTIME         CSR/vllm-llama
        Active    HASH            {short}
        Active    ENGINE          RawDeployment (Default)
        Service   PIN             AutoSync/NotApplicable
        Service   SYNC            Absent
        Service   STATUS          Current
        Service   DRIFT           NotReported
        Service   LIVE-RELATION   Equal
        """)
    assert effective([LLAMA, MODEL, service(runtime=NAMED)]) == (0, expected, "")


def test_the_kubectl_plugin_prints_the_same_report_from_manifest_files(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([LLAMA, MODEL, service(runtime=NAMED)]))
    out, err = io.StringIO(), io.StringIO()
    argv = ["runtime", "effective", "chat", "-f", str(path)]
    code = main(argv, stdin=io.StringIO(), stdout=out, stderr=err)
    assert (code, out.getvalue(), err.getvalue()) == effective(
        [LLAMA, MODEL, service(runtime=NAMED)]
    )


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:8]


def test_long_names_revisions_and_issues_keep_both_ends_and_a_digest() -> None:
    name = "vllm-" + "x" * 60 + "-instruct"
    revision_name = "cr-" + "y" * 60 + "-1"
    runtime = runtime_manifest(name)
    isvc = service(
        runtime={"name": name, "autoSync": False},
        status={"observedGeneration": 1, "pinnedRevisionName": revision_name},
    )
    runtime_value, issue = f"CSR/{name}", f"RevisionNotFound({revision_name})"
    shortened = {
        runtime_value: f"{runtime_value[:20]}...{runtime_value[-21:]}#{digest(runtime_value)}",
        revision_name: f"{revision_name[:20]}...{revision_name[-21:]}#{digest(revision_name)}",
        issue: f"{issue[:20]}...{issue[-21:]}#{digest(issue)}",
    }
    rows = rows_of([runtime, MODEL, isvc])
    assert [v for _, f, v in rows if f in ("RUNTIME", "REVISION", "ISSUE")] == [
        shortened[runtime_value],
        shortened[runtime_value],
        shortened[revision_name],
        "ActiveRevisionUnavailable",
        shortened[issue],
    ]
    assert all(len(v) <= 54 for _, _, v in rows)


def test_wide_is_the_table_with_each_value_whole_at_the_end() -> None:
    objects = [LLAMA, MODEL, service(runtime=NAMED, decoder={})]
    short = LLAMA_HASH[:8]
    expected = textwrap.dedent(f"""\
        SCOPE     FIELD           VALUE                     FULL-VALUE
        Live      STATE           Available                 Available
        Live      RUNTIME         CSR/vllm-llama            ClusterServingRuntime/vllm-llama
        Live      HASH            {short}                  {LLAMA_HASH}
        Live      ENGINE          RawDeployment (Default)   RawDeployment (Default)
        Live      DECODER         RawDeployment (Default)   RawDeployment (Default)
        Active    STATE           Available                 Available
        Active    RUNTIME         CSR/vllm-llama            ClusterServingRuntime/vllm-llama
        Active    HASH            {short}                  {LLAMA_HASH}
        Active    ENGINE          RawDeployment (Default)   RawDeployment (Default)
        Active    DECODER         RawDeployment (Default)   RawDeployment (Default)
        Service   PIN             AutoSync/NotApplicable    AutoSync/NotApplicable
        Service   SYNC            Absent                    Absent
        Service   STATUS          Current                   Current
        Service   DRIFT           NotReported               NotReported
        Service   LIVE-RELATION   Equal                     Equal
        """)
    assert effective(objects, output="wide") == (0, expected, "")


WIDE_CASES = [
    pytest.param([LLAMA, MODEL, service(runtime=NAMED, decoder={})], id="two components"),
    pytest.param(
        [
            LLAMA,
            MODEL,
            service(
                runtime={"name": "team-llama", "kind": "ServingRuntime", "autoSync": False},
                status={"observedGeneration": 1, "pinnedRevisionName": "cr-1"},
            ),
        ],
        id="views without components, and issues",
    ),
    pytest.param(
        [
            runtime_manifest("vllm-" + "x" * 60),
            MODEL,
            service(runtime={"name": "vllm-" + "x" * 60}),
        ],
        id="a runtime name cut to 54 characters",
    ),
]


def _cells(text: str) -> list[list[str]]:
    return [re.split(r"   +", line) for line in text.splitlines()]


@pytest.mark.parametrize("objects", WIDE_CASES)
def test_wide_only_adds_a_column_at_the_end(objects: list[dict]) -> None:
    _, table, _ = effective(objects)
    _, wide, _ = effective(objects, output="wide")
    assert [row[:3] for row in _cells(wide)] == _cells(table)
    assert _cells(wide)[0][3:] == ["FULL-VALUE"]


def view_document(state: str, value_hash: str | None, revision_name: str | None = None) -> dict:
    return {
        "state": state,
        "reason": None,
        "runtime": {"kind": "ClusterServingRuntime", "namespace": None, "name": "vllm-llama"},
        "revision": revision_name,
        "hash": value_hash[:8] if value_hash else None,
        "fullHash": value_hash,
        "components": [
            {
                "component": "engine",
                "mode": "RawDeployment",
                "modeSource": "Default",
                "minReplicas": None,
                "minReplicasSource": "configuration",
                "maxReplicas": None,
                "maxReplicasSource": "configuration",
            }
        ],
    }


def test_json_is_the_runtime_effective_report() -> None:
    isvc = service(runtime=NAMED)
    isvc["metadata"]["uid"] = "0d3c"
    expected = {
        "apiVersion": "cli.ome.io/v1alpha1",
        "kind": "RuntimeEffectiveReport",
        "target": {
            "namespace": "default",
            "name": "chat",
            "uid": "0d3c",
            "generation": 1,
            "observedGeneration": 1,
        },
        "selection": {
            "mode": "Explicit",
            "runtime": {"kind": "ClusterServingRuntime", "namespace": None, "name": "vllm-llama"},
            "candidates": 1,
        },
        "inheritance": {
            "state": "Observed",
            "reason": None,
            "chain": [{"kind": "ClusterServingRuntime", "namespace": None, "name": "vllm-llama"}],
        },
        "views": {
            "live": view_document("Available", LLAMA_HASH),
            "active": view_document("Available", LLAMA_HASH),
        },
        "service": {
            "pin": {"mode": "AutoSync", "state": "NotApplicable"},
            "sync": "Absent",
            "status": "Current",
            "drift": {"state": "NotReported", "cause": None},
            "liveRelation": "Equal",
            "issues": [],
        },
    }
    assert effective([LLAMA, MODEL, isvc], output="json") == (
        0,
        json.dumps(expected, indent=2) + "\n",
        "",
    )


def test_yaml_is_the_same_report_in_yaml() -> None:
    objects = [
        with_parent(runtime_manifest("vllm-llama"), "vllm-base"),
        runtime_manifest("vllm-base"),
        MODEL,
        revision("cr-1", {"spec": OTHER["spec"]}),
        service(runtime=EXPLICIT, status={}),
    ]
    live_hash = spec_hash(objects[0]["spec"])
    expected = textwrap.dedent(f"""\
        apiVersion: cli.ome.io/v1alpha1
        kind: RuntimeEffectiveReport
        target:
          namespace: default
          name: chat
          uid: null
          generation: 1
          observedGeneration: null
        selection:
          mode: Explicit
          runtime:
            kind: ClusterServingRuntime
            namespace: null
            name: vllm-llama
          candidates: 2
        inheritance:
          state: Observed
          reason: null
          chain:
          - kind: ClusterServingRuntime
            namespace: null
            name: vllm-base
          - kind: ClusterServingRuntime
            namespace: null
            name: vllm-llama
        views:
          live:
            state: Available
            reason: null
            runtime:
              kind: ClusterServingRuntime
              namespace: null
              name: vllm-llama
            revision: null
            hash: {live_hash[:8]!r}
            fullHash: {live_hash!r}
            components:
            - component: engine
              mode: RawDeployment
              modeSource: Default
              minReplicas: null
              minReplicasSource: configuration
              maxReplicas: null
              maxReplicasSource: configuration
          active:
            state: Available
            reason: null
            runtime:
              kind: ClusterServingRuntime
              namespace: null
              name: vllm-llama
            revision: cr-1
            hash: {OTHER_HASH[:8]!r}
            fullHash: {OTHER_HASH!r}
            components:
            - component: engine
              mode: RawDeployment
              modeSource: Default
              minReplicas: null
              minReplicasSource: configuration
              maxReplicas: null
              maxReplicasSource: configuration
        service:
          pin:
            mode: ExplicitPin
            state: Resolved
          sync: Absent
          status: Unobserved
          drift:
            state: NotReported
            cause: null
          liveRelation: Different
          issues:
          - StatusUnobserved
        """)
    code, out, err = effective(objects, output="yaml")
    assert (code, err) == (0, "")
    assert yaml.safe_load(out) == yaml.safe_load(expected)
    assert out == yaml.safe_dump(yaml.safe_load(expected), sort_keys=False)
