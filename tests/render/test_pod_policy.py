"""``ome-operator render`` reviews with the pod policy of the ``inferenceservice-config``
ConfigMap it is given and the labels of the Namespace it is given (docs/configuration.md,
``podPolicy``), as the webhook does; without them, the defaults and no labels."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.render.test_render import NOW, render

RUNNER = {"image": "vllm:1", "ports": [{"containerPort": 8080}]}
ISVC = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "chat", "namespace": "infra"},
    "spec": {"runtime": {"name": "rt"}, "engine": {"hostNetwork": True, "runner": RUNNER}},
}
RUNTIME = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterServingRuntime",
    "metadata": {"name": "rt"},
    "spec": {"supportedModelFormats": [], "engineConfig": {"runner": RUNNER}},
}
CONFIG = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
    "data": {
        "podPolicy": json.dumps(
            {
                "exceptions": [
                    {
                        "namespaceSelector": {"matchLabels": {"team": "infra"}},
                        "relax": ["hostNamespaces"],
                    }
                ]
            }
        )
    },
}
NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "infra", "labels": {"team": "infra"}},
}
DENIAL = (
    "spec.engine.hostNetwork: host namespaces are refused by the pod policy (rule hostNamespaces)"
)


@pytest.mark.parametrize(
    ("state", "admission"),
    [
        pytest.param(
            [],
            {"allowed": False, "message": DENIAL, "warnings": []},
            id="without a ConfigMap the default policy refuses hostNetwork",
        ),
        pytest.param(
            [CONFIG],
            {"allowed": False, "message": DENIAL, "warnings": []},
            id="an exception does not apply to a namespace whose labels are not given",
        ),
        pytest.param(
            [CONFIG, NAMESPACE],
            {"allowed": True, "message": "", "warnings": []},
            id="an exception applies to the given Namespace whose labels it selects",
        ),
    ],
)
def test_render_reviews_with_the_given_policy_and_namespace(
    state: list[dict], admission: dict
) -> None:
    text = yaml.safe_dump_all([*state, RUNTIME, ISVC])
    code, out, err = render("-f", "-", "--now", NOW, "-o", "json", stdin=text)
    assert (code, err) == (0, "")
    [item] = json.loads(out)["items"]
    assert item["admission"] == admission
