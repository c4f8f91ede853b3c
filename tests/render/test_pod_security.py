"""``ome-operator render``'s Pod Security check (docs/security.md, "Pod Security before apply"):
what the labels of a Namespace in the input make it say, and ``--fail-on-denied``."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.render.test_render import CASES, NOW, SAMPLES, render

SMALL = (SAMPLES / "llama-3-2-1b-instruct-raw-deployment.yaml").read_text(encoding="utf-8")
ENGINE = "pods of Deployment llama-3-2-1b-instruct-engine"
HOST_PATH = 'hostPath volumes (volume "llama-3-2-1b-instruct")'
#: What restricted refuses in the sample's pods: the model's hostPath, and root.
RESTRICTED = (
    'restricted volume types (volume "llama-3-2-1b-instruct" uses restricted volume type '
    '"hostPath"), runAsNonRoot != true (pod or container "ome-container" must set '
    "securityContext.runAsNonRoot=true)"
)


def namespace(name: str = "llama-small", **labels: str) -> str:
    found = {f"pod-security.kubernetes.io/{key.replace('_', '-')}": v for key, v in labels.items()}
    return yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": found}}
    )


def events(stdin: str) -> list[tuple[str, str]]:
    code, out, err = render("-f", "-", "--now", NOW, "-o", "json", stdin=stdin)
    assert (code, err) == (0, "")
    [item] = json.loads(out)["items"]
    return [(event["reason"], event["message"]) for event in item["events"]]


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        pytest.param("", [], id="without the Namespace in the input nothing is said"),
        pytest.param(
            namespace("qwen", enforce="restricted"),
            [],
            id="the labels of another namespace say nothing",
        ),
        pytest.param(namespace(), [], id="a Namespace without labels says nothing"),
        pytest.param(
            namespace(enforce="privileged", warn="privileged"),
            [],
            id="privileged says nothing",
        ),
        pytest.param(
            namespace(enforce="baseline"),
            [
                (
                    "PodSecurityViolation",
                    f'{ENGINE} are forbidden: violates PodSecurity "baseline:latest": {HOST_PATH}',
                )
            ],
            id="enforce refuses the pods, and warn at the same level says it once",
        ),
        pytest.param(
            namespace(enforce="baseline", enforce_version="v1.30"),
            [
                (
                    "PodSecurityViolation",
                    f'{ENGINE} are forbidden: violates PodSecurity "baseline:v1.30": {HOST_PATH}',
                )
            ],
            id="the version label is in the sentence",
        ),
        pytest.param(
            namespace(warn="restricted"),
            [
                (
                    "PodSecurityWarning",
                    f'{ENGINE} would violate PodSecurity "restricted:latest": {RESTRICTED}',
                )
            ],
            id="warn alone gives a PodSecurityWarning",
        ),
        pytest.param(
            namespace(enforce="strict"),
            [
                (
                    "PodSecurityViolation",
                    f'{ENGINE} are forbidden: violates PodSecurity "restricted:latest": '
                    f"{RESTRICTED}",
                )
            ],
            id="an enforce level the API server does not know is restricted",
        ),
    ],
)
def test_the_namespace_labels_say_what_pod_security_refuses(
    state: str, expected: list[tuple[str, str]]
) -> None:
    found = [event for event in events(f"{state}---\n{SMALL}") if event[0].startswith("PodSec")]
    assert found == expected


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        pytest.param(
            "pod-security-baseline-host-path",
            (
                3,
                "render: Pod Security refuses the pods of 1 of 1 InferenceServices: "
                "llama-small/llama-3-2-1b-instruct\n",
            ),
            id="--fail-on-denied fails on pods that enforce refuses, and says Pod Security did",
        ),
        pytest.param(
            "pod-security-baseline-claim",
            (0, ""),
            id="--fail-on-denied passes when enforce refuses nothing",
        ),
    ],
)
def test_fail_on_denied_counts_an_enforce_refusal(case: str, expected: tuple[int, str]) -> None:
    code, _, err = render(
        "-f", str(CASES / case / "input.yaml"), "-o", "summary", "--fail-on-denied"
    )
    assert (code, err) == expected


def test_a_warning_alone_does_not_fail_on_denied() -> None:
    code, _, err = render(
        "-f",
        "-",
        "-o",
        "summary",
        "--fail-on-denied",
        stdin=f"{namespace(warn='restricted')}---\n{SMALL}",
    )
    assert (code, err) == (0, "")
