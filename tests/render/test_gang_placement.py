"""``ome-operator render --gang-placement``: ``on`` prints what the operator writes where the
cluster serves PodGroups (each multi-pod OMENative Instance's PodGroup, before the pods that join
it); ``off``, the default, what it writes where it does not."""

from __future__ import annotations

import pytest
import yaml

from tests.render.test_render import NOW, SAMPLES, render

SAMPLE = str(SAMPLES / "qwen3-omenative-leader-worker.yaml")
GROUP = "qwen3-multi-node-engine-0-gang-1"


def written(*flags: str) -> list[tuple[str, str, str | None]]:
    """(kind, name, the PodGroup it joins) of each object render prints, in order."""
    code, out, err = render("-f", SAMPLE, "--now", NOW, *flags)
    assert (code, err) == (0, "")
    (item,) = yaml.safe_load(out)["items"]
    return [
        (
            o["kind"],
            o["metadata"]["name"],
            ((o.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName"),
        )
        for o in item["objects"]
        if o["kind"] in ("Pod", "PodGroup")
    ]


PODS = ["qwen3-multi-node-engine-0-leader-0", "qwen3-multi-node-engine-0-worker-0"]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param(
            (), [("Pod", name, None) for name in PODS], id="by default pods join no group"
        ),
        pytest.param(
            ("--gang-placement", "off"),
            [("Pod", name, None) for name in PODS],
            id="off says the same",
        ),
        pytest.param(
            ("--gang-placement", "on"),
            [("PodGroup", GROUP, None), *[("Pod", name, GROUP) for name in PODS]],
            id="on prints the Instance's PodGroup before the pods that join it",
        ),
    ],
)
def test_gang_placement_in_render(flags, expected):
    assert written(*flags) == expected


def test_the_rendered_group_asks_for_every_pod_of_the_instance():
    _, out, _ = render("-f", SAMPLE, "--now", NOW, "--gang-placement", "on")
    (item,) = yaml.safe_load(out)["items"]
    (group,) = [o for o in item["objects"] if o["kind"] == "PodGroup"]
    assert (group["spec"], [r["kind"] for r in group["metadata"]["ownerReferences"]]) == (
        {"schedulingPolicy": {"gang": {"minCount": 2}}},
        ["InferenceReplica"],
    )
