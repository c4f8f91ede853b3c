"""Whether a live object already holds what a pass renders (``is_subset``): the comparison that
decides between no write and a PATCH, so it must read the object the way the server stores it."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.cluster.applying import is_subset


def _resources(**quantities: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"limits": quantities}}]}}


@pytest.mark.parametrize(
    ("desired", "actual", "expected"),
    [
        pytest.param(
            _resources(**{"nvidia.com/gpu": 1}),
            _resources(**{"nvidia.com/gpu": "1"}),
            True,
            id="an integer quantity holds as the server's string",
        ),
        pytest.param(_resources(cpu="1000m"), _resources(cpu="1"), True, id="1000m is stored as 1"),
        pytest.param(
            _resources(memory="1Gi"),
            _resources(memory="1073741824"),
            True,
            id="binary suffixes compare by value",
        ),
        pytest.param(_resources(cpu=0.5), _resources(cpu="500m"), True, id="a float quantity"),
        pytest.param(
            _resources(cpu="2"), _resources(cpu="1"), False, id="a different quantity is drift"
        ),
        pytest.param(
            _resources(cpu="2"), _resources(memory="2"), False, id="a missing resource is drift"
        ),
        pytest.param(
            _resources(cpu=True), _resources(cpu="1"), False, id="a boolean is not a quantity"
        ),
        pytest.param(
            _resources(cpu="1"),
            _resources(cpu="1", **{"nvidia.com/gpu": "1"}),
            False,
            id="a limit no longer rendered is drift: a container's resources are the operator's",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c"}]}},
            _resources(**{"nvidia.com/gpu": "1"}),
            False,
            id="resources no longer rendered at all are drift",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c"}]}},
            {"spec": {"containers": [{"name": "c", "resources": {}}]}},
            True,
            id="no resources holds as the server's empty resources",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}},
            {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "imagePullPolicy": "IfNotPresent",
                            "resources": {"limits": {"cpu": "1"}, "requests": {}},
                        }
                    ]
                }
            },
            True,
            id="a container's other defaulted fields are not drift",
        ),
        pytest.param(
            {"spec": {"volumes": [{"emptyDir": {"sizeLimit": "1024Mi"}}]}},
            {"spec": {"volumes": [{"emptyDir": {"sizeLimit": "1Gi"}}]}},
            True,
            id="an emptyDir sizeLimit is a quantity",
        ),
        pytest.param(
            {"spec": {"ports": [{"port": 8080}]}},
            {"spec": {"ports": [{"port": "8080"}]}},
            False,
            id="other numbers are not quantities: 8080 and '8080' differ",
        ),
        pytest.param(
            {"spec": {"template": {"metadata": {"labels": {"requests": "1"}}}}},
            {"spec": {"template": {"metadata": {"labels": {"requests": "1.0"}}}}},
            False,
            id="a label named requests is a string, not a quantity map",
        ),
        pytest.param(
            {"spec": {"replicas": 1}},
            {"spec": {"replicas": 1, "revisionHistoryLimit": 10}},
            True,
            id="fields the server defaults are not drift",
        ),
        pytest.param(
            {"spec": {"args": ["a", "b"]}},
            {"spec": {"args": ["a"]}},
            False,
            id="lists compare item by item and by length",
        ),
    ],
)
def test_a_live_object_holds_what_was_rendered(desired: Any, actual: Any, expected: bool) -> None:
    assert is_subset(desired, actual) is expected
