"""Start-up looks for another controller of ome.io InferenceServices (OME's manager Deployment,
OME's webhook configurations) with a get per name, against the emulator; a read the API fails
is a warning, not a stop. ``ome-operator run`` refuses to start beside one
(``error: <text>``, exit 1) unless ``--allow-other-controller`` (``OME_ALLOW_OTHER_CONTROLLER``)
is set (docs/migrating-from-ome.md). tests/core/test_other_controllers.py holds the rules."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from typing import Any

import aiohttp
import pytest

from ome_operator.core.other_controllers import FoundObject
from ome_operator.handlers.startup import other_controllers
from ome_operator.settings import RunOptions
from tests.support.kube_access import apply_object
from tests.support.operator_run import free_port

MANAGER = FoundObject("Deployment", "ome", "ome-controller-manager")
VALIDATING = FoundObject("ValidatingWebhookConfiguration", None, "inferenceservice.ome.io")
MUTATING = FoundObject("MutatingWebhookConfiguration", None, "inferenceservice.ome.io")
REFUSAL = (
    "error: Another controller of ome.io InferenceServices is in this cluster: "
    "Deployment ome/ome-controller-manager, ValidatingWebhookConfiguration "
    "inferenceservice.ome.io; stop it and delete its webhook configurations first "
    "(docs/migrating-from-ome.md), or start with --allow-other-controller "
    "(OME_ALLOW_OTHER_CONTROLLER=true)"
)
LOOKUP_FAILED = (
    "Failed to look for another controller of ome.io InferenceServices; starting without "
    "knowing whether one runs"
)


def deployment(
    name: str = "ome-controller-manager",
    namespace: str = "ome",
    labels: dict[str, str] | None = None,
    replicas: int = 1,
) -> dict[str, Any]:
    """A Deployment, by default OME's manager as its chart installs it."""
    if labels is None:
        labels = {"control-plane": "ome-controller-manager", "controller-tools.k8s.io": "1.0"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "manager", "image": "ome-manager:v0.1.2"}]},
            },
        },
    }


def webhook_configuration(kind: str, name: str = "inferenceservice.ome.io") -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [],
    }


@pytest.mark.parametrize(
    ("seeded", "options", "found"),
    [
        pytest.param([], RunOptions(), (), id="a cluster without OME has no other controller"),
        pytest.param(
            [deployment()], RunOptions(), (MANAGER,), id="OME's manager in its chart's namespace"
        ),
        pytest.param(
            [deployment(namespace="ome-system")],
            RunOptions(),
            (),
            id="a manager outside the namespace of OME's chart is not looked for",
        ),
        pytest.param(
            [deployment(labels={"app": "mine"})],
            RunOptions(),
            (),
            id="a Deployment of that name without OME's label is not OME's manager",
        ),
        pytest.param(
            [deployment(replicas=0)],
            RunOptions(),
            (),
            id="OME's manager scaled to zero does not count",
        ),
        pytest.param(
            [deployment("ome-operator", labels={"app.kubernetes.io/name": "ome-operator"})],
            RunOptions(),
            (),
            id="ome-operator's own Deployment is not OME's manager",
        ),
        pytest.param(
            [
                webhook_configuration("ValidatingWebhookConfiguration"),
                webhook_configuration("MutatingWebhookConfiguration"),
                webhook_configuration("ValidatingWebhookConfiguration", "ome-webhook-server"),
            ],
            RunOptions(),
            (MUTATING, VALIDATING),
            id="OME's webhook configurations are found by name, the operator's own is not",
        ),
        pytest.param(
            [deployment(), webhook_configuration("ValidatingWebhookConfiguration")],
            RunOptions(namespaces=("team-a",)),
            (VALIDATING,),
            id="with -n the manager is not looked for, the webhook configurations still count",
        ),
    ],
)
async def test_start_up_finds_what_of_ome_acts_on_ome_io_objects(
    kube, api, seeded, options, found
) -> None:
    for manifest in seeded:
        await apply_object(kube, manifest)
    assert await asyncio.to_thread(other_controllers, api, options) == found


@pytest.mark.parametrize(
    ("status", "resource", "path", "found"),
    [
        pytest.param(
            403,
            "apps/v1/deployments",
            "/apis/apps/v1/namespaces/ome/deployments/ome-controller-manager",
            (VALIDATING,),
            id="a get of the manager the RBAC refuses is a warning, the rest is still read",
        ),
        pytest.param(
            500,
            "admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
            "basemodel.ome.io",
            (MANAGER, VALIDATING),
            id="a get the API server fails is a warning, the next names are still read",
        ),
    ],
)
async def test_a_lookup_the_api_fails_is_logged_and_does_not_stop_the_start(
    kube, api, caplog, status, resource, path, found
) -> None:
    for manifest in (deployment(), webhook_configuration("ValidatingWebhookConfiguration")):
        await apply_object(kube, manifest)
    kube.inject_fault(status, resource=resource)
    with caplog.at_level(logging.WARNING, logger="ome_operator.startup"):
        result = await asyncio.to_thread(other_controllers, api, RunOptions())
    assert result == found
    assert [(r.levelname, r.getMessage(), r.path, r.status) for r in caplog.records] == [
        ("WARNING", LOOKUP_FAILED, path, status)
    ]


def _run_flags(health: int | None = None) -> list[str]:
    return [
        "--metrics-bind-address=0",
        f"--health-probe-bind-address=127.0.0.1:{health or free_port()}",
        "--webhook-bind-address=127.0.0.1",
        f"--webhook-port={free_port()}",
        "--webhook-host=localhost",
        "--webhook-shutdown-grace=0",
        "--log-format=plain",
    ]


async def _started(
    kubeconfig: str, *flags: str, env: dict[str, str] | None = None
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ome_operator.operator_command",
        "run",
        *flags,
        env={**os.environ, "KUBECONFIG": kubeconfig, **(env or {})},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_ome_operator_run_refuses_to_start_beside_ome_in_one_error_line(
    kube, kubeconfig
) -> None:
    for manifest in (deployment(), webhook_configuration("ValidatingWebhookConfiguration")):
        await apply_object(kube, manifest)
    seeding = len(list(kube))
    process = await _started(kubeconfig, *_run_flags())
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    last = stderr.decode().strip().splitlines()[-1]
    sent = [f"{r.method.name} {r.url.path}" for r in list(kube)[seeding:]]
    assert (process.returncode, last) == (1, REFUSAL)
    # Refused before anything is written (OME's certificate Secret has the operator's name).
    assert [line for line in sent if not line.startswith("GET ")] == []


async def _healthy(url: str, timeout: float = 30.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession() as session:
        while loop.time() < deadline:
            try:
                async with session.get(url) as response:
                    if response.status == 200:
                        return True
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        pytest.param(["--allow-other-controller"], {}, id="the flag starts it anyway"),
        pytest.param(
            [], {"OME_ALLOW_OTHER_CONTROLLER": "true"}, id="so does its environment variable"
        ),
    ],
)
async def test_allowed_it_starts_beside_ome_with_a_warning_naming_it(
    kube, kubeconfig, flags, env
) -> None:
    await apply_object(kube, deployment())
    health = free_port()
    process = await _started(kubeconfig, *_run_flags(health), "--log-format=json", *flags, env=env)
    try:
        started = await _healthy(f"http://127.0.0.1:{health}/healthz")
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), 30)
    output = stderr.decode()
    assert (started, process.returncode) == (True, 0), output[-3000:]
    warning = (
        "Another controller of ome.io InferenceServices is in this cluster: "
        "Deployment ome/ome-controller-manager; starting anyway (--allow-other-controller): "
        "both act on the same InferenceServices until it is stopped (docs/migrating-from-ome.md)"
    )
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [
        (r["severity"], r["message"]) for r in records if "Another controller" in r["message"]
    ] == [("warn", warning)]
