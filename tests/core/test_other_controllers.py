"""What counts as another controller of ome.io InferenceServices (OME's manager Deployment and
webhook configurations), and the sentences start-up refuses or warns with
(docs/migrating-from-ome.md)."""

from __future__ import annotations

from typing import Any

import pytest

from ome_operator.core import other_controllers
from ome_operator.core.other_controllers import (
    FoundObject,
    allowed_warning,
    found_objects,
    refusal_message,
    running_manager,
)

OME_LABELS = {"control-plane": "ome-controller-manager", "controller-tools.k8s.io": "1.0"}
MANAGER = FoundObject("Deployment", "ome", "ome-controller-manager")
VALIDATING = FoundObject("ValidatingWebhookConfiguration", None, "inferenceservice.ome.io")
MUTATING = FoundObject("MutatingWebhookConfiguration", None, "inferenceservice.ome.io")


def manager(
    namespace: str = "ome",
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "ome-controller-manager",
            "namespace": namespace,
            "labels": OME_LABELS if labels is None else labels,
        },
        "spec": {"replicas": 1} if spec is None else spec,
    }
    if status is not None:
        found["status"] = status
    return found


def test_the_module_exports_its_rules_and_texts():
    assert sorted(other_controllers.__all__) == [
        "FoundObject",
        "MANAGER",
        "MANAGER_LABEL",
        "WEBHOOK_CONFIGURATIONS",
        "allowed_warning",
        "found_objects",
        "refusal_message",
        "running_manager",
    ]


@pytest.mark.parametrize(
    ("deployment", "running"),
    [
        pytest.param(manager(), True, id="OME's manager with one replica runs"),
        pytest.param(manager(spec={}), True, id="replicas unset means one, so it runs"),
        pytest.param(manager(spec={"replicas": 0}), False, id="scaled to zero it is stopped"),
        pytest.param(
            manager(spec={"replicas": 0}, status={"replicas": 1}),
            True,
            id="scaled to zero while a pod is left it still runs",
        ),
        pytest.param(
            manager(spec={"replicas": 0}, status={"replicas": 0}),
            False,
            id="scaled to zero with no pod left it is stopped",
        ),
        pytest.param(
            manager(labels={"control-plane": "controller-manager"}),
            False,
            id="another controller-manager label value is not OME's",
        ),
        pytest.param(manager(labels={}), False, id="a Deployment without the label is not OME's"),
    ],
)
def test_a_deployment_is_a_running_ome_manager_by_its_label_and_replicas(deployment, running):
    assert running_manager(deployment) is running


OWN = "ome-webhook-server"


@pytest.mark.parametrize(
    ("deployments", "webhooks", "own", "found"),
    [
        pytest.param([], [], OWN, (), id="nothing of OME is nothing found"),
        pytest.param(
            [manager(), manager("ome-2", spec={"replicas": 0})],
            [],
            OWN,
            (MANAGER,),
            id="only the running managers count",
        ),
        pytest.param(
            [],
            [
                ("ValidatingWebhookConfiguration", "inferenceservice.ome.io"),
                ("MutatingWebhookConfiguration", "inferenceservice.ome.io"),
                ("ValidatingWebhookConfiguration", "basemodel.ome.io"),
            ],
            OWN,
            (
                MUTATING,
                FoundObject("ValidatingWebhookConfiguration", None, "basemodel.ome.io"),
                VALIDATING,
            ),
            id="each of OME's webhook configurations counts, sorted by kind and name",
        ),
        pytest.param(
            [],
            [("ValidatingWebhookConfiguration", "something.example.com")],
            OWN,
            (),
            id="a webhook configuration OME does not ship is not OME's",
        ),
        pytest.param(
            [],
            [("ValidatingWebhookConfiguration", "inferenceservice.ome.io")],
            "inferenceservice.ome.io",
            (),
            id="the operator's own webhook configuration is not another controller",
        ),
        pytest.param(
            [manager("z-ome"), manager("ome")],
            [],
            OWN,
            (MANAGER, FoundObject("Deployment", "z-ome", "ome-controller-manager")),
            id="managers are sorted by namespace whatever order they were listed in",
        ),
    ],
)
def test_found_objects_are_ome_s_running_managers_and_webhook_configurations(
    deployments, webhooks, own, found
):
    assert found_objects(deployments, webhooks, own) == found


@pytest.mark.parametrize(
    ("found", "refusal", "warning"),
    [
        pytest.param(
            (MANAGER, VALIDATING),
            "Another controller of ome.io InferenceServices is in this cluster: "
            "Deployment ome/ome-controller-manager, ValidatingWebhookConfiguration "
            "inferenceservice.ome.io; stop it and delete its webhook configurations first "
            "(docs/migrating-from-ome.md), or start with --allow-other-controller "
            "(OME_ALLOW_OTHER_CONTROLLER=true)",
            "Another controller of ome.io InferenceServices is in this cluster: "
            "Deployment ome/ome-controller-manager, ValidatingWebhookConfiguration "
            "inferenceservice.ome.io; starting anyway (--allow-other-controller): both act on "
            "the same InferenceServices until it is stopped (docs/migrating-from-ome.md)",
            id="every object found is named, a namespaced one with its namespace",
        ),
        pytest.param(
            (MUTATING,),
            "Another controller of ome.io InferenceServices is in this cluster: "
            "MutatingWebhookConfiguration inferenceservice.ome.io; stop it and delete its "
            "webhook configurations first (docs/migrating-from-ome.md), or start with "
            "--allow-other-controller (OME_ALLOW_OTHER_CONTROLLER=true)",
            "Another controller of ome.io InferenceServices is in this cluster: "
            "MutatingWebhookConfiguration inferenceservice.ome.io; starting anyway "
            "(--allow-other-controller): both act on the same InferenceServices until it is "
            "stopped (docs/migrating-from-ome.md)",
            id="a webhook configuration left without its manager is named alone",
        ),
    ],
)
def test_the_refusal_and_the_warning_name_every_object_found(found, refusal, warning):
    assert (refusal_message(found), allowed_warning(found)) == (refusal, warning)
