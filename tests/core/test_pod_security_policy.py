"""The Pod Security policy a namespace's labels give (docs/security.md, "Pod Security before
apply"), read as the API server reads them, fallbacks included."""

from __future__ import annotations

import pytest

from ome_operator.core.pod_security import LevelVersion, NamespacePolicy, namespace_policy

PREFIX = "pod-security.kubernetes.io/"
PRIVILEGED = LevelVersion("privileged")


def labels(**found: str) -> dict[str, str]:
    return {PREFIX + key.replace("_", "-"): value for key, value in found.items()}


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        pytest.param({}, NamespacePolicy(), id="no labels are privileged in every mode"),
        pytest.param(
            {"team": "a", "pod-security.kubernetes.io/other": "restricted"},
            NamespacePolicy(),
            id="other labels are ignored",
        ),
        pytest.param(
            labels(enforce="baseline"),
            NamespacePolicy(LevelVersion("baseline"), PRIVILEGED, LevelVersion("baseline")),
            id="warn follows a stricter enforce",
        ),
        pytest.param(
            labels(enforce="restricted", enforce_version="v1.30"),
            NamespacePolicy(
                LevelVersion("restricted", 30), PRIVILEGED, LevelVersion("restricted", 30)
            ),
            id="warn follows enforce's version too",
        ),
        pytest.param(
            labels(enforce="restricted", enforce_version="v1.30", warn_version="latest"),
            NamespacePolicy(LevelVersion("restricted", 30), PRIVILEGED, LevelVersion("restricted")),
            id="warn keeps its own version label",
        ),
        pytest.param(
            labels(enforce="baseline", warn="privileged"),
            NamespacePolicy(LevelVersion("baseline"), PRIVILEGED, PRIVILEGED),
            id="warn keeps its own level label",
        ),
        pytest.param(
            labels(enforce="privileged", warn="baseline", audit="restricted", audit_version="v1.0"),
            NamespacePolicy(PRIVILEGED, LevelVersion("restricted", 0), LevelVersion("baseline")),
            id="each mode reads its own labels",
        ),
        pytest.param(
            labels(enforce="Baseline", enforce_version="1.30"),
            NamespacePolicy(LevelVersion("restricted"), PRIVILEGED, PRIVILEGED),
            id="an unknown enforce level is restricted and an unknown version latest",
        ),
        pytest.param(
            labels(warn="strict", audit="strict"),
            NamespacePolicy(),
            id="an unknown warn or audit level is privileged",
        ),
        pytest.param(
            labels(enforce="baseline", enforce_version="v1.01"),
            NamespacePolicy(LevelVersion("baseline"), PRIVILEGED, LevelVersion("baseline")),
            id="a version with a leading zero is latest",
        ),
    ],
)
def test_the_labels_give_the_policy_the_api_server_reads(
    found: dict[str, str], expected: NamespacePolicy
) -> None:
    assert namespace_policy(found) == expected


@pytest.mark.parametrize(
    ("level_version", "text"),
    [
        pytest.param(LevelVersion("baseline"), "baseline:latest", id="latest is written latest"),
        pytest.param(LevelVersion("restricted", 30), "restricted:v1.30", id="a version is v1.N"),
    ],
)
def test_a_level_and_version_are_written_as_the_api_server_writes_them(
    level_version: LevelVersion, text: str
) -> None:
    assert str(level_version) == text
