"""The container entrypoint, ``ome-operator run``, as a subprocess against the emulator:
liveness, metrics, a reconcile, the TLS webhook, and a clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import sys

import aiohttp

from tests.builders import isvc_manifest, model_manifest, runtime_manifest
from tests.support.kube_access import apply_object, eventually
from tests.support.operator_run import free_port


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    try:
        async with session.get(url) as response:
            return response.status, await response.text()
    except aiohttp.ClientError:
        return 0, ""


async def test_ome_operator_run_serves_and_stops_cleanly(kube, kubeconfig) -> None:
    runtime = runtime_manifest("vllm")
    runtime["spec"]["engineConfig"] = {"runner": {"name": "ome-container", "image": "vllm:1"}}
    await apply_object(kube, runtime)
    await apply_object(kube, model_manifest("llama"))
    metrics, health, webhook = free_port(), free_port(), free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ome_operator.operator_command",
        "run",
        "--metrics-bind-address",
        f"127.0.0.1:{metrics}",
        "--health-probe-bind-address",
        f"127.0.0.1:{health}",
        "--webhook-bind-address",
        "127.0.0.1",
        "--webhook-port",
        str(webhook),
        "--webhook-host",
        "localhost",
        # No Service has to drop this replica before its port closes: the default's 5 s of
        # grace would only delay the exit (tests/handlers/test_review_server.py tests it).
        "--webhook-shutdown-grace=0",
        env={**os.environ, "KUBECONFIG": kubeconfig},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with aiohttp.ClientSession() as session:
            healthz = f"http://127.0.0.1:{health}/healthz"
            for _ in range(200):
                if (await _get(session, healthz))[0] == 200:
                    break
                await asyncio.sleep(0.05)
            assert (await _get(session, healthz))[0] == 200
            await apply_object(kube, isvc_manifest("chat"))
            await eventually(
                lambda: kube.objects["apps/v1/deployments", "default", "chat-engine"], timeout=10
            )
            scraped = f"http://127.0.0.1:{metrics}/metrics"
            success = 'ome_inferenceservice_reconcile_total{result="success"} '
            for _ in range(100):
                status, text = await _get(session, scraped)
                if success in text and f"{success}0.0" not in text:
                    break
                await asyncio.sleep(0.05)
            assert status == 200 and success in text and f"{success}0.0" not in text
            review = {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "u-1",
                    "operation": "CREATE",
                    "kind": {"group": "ome.io", "version": "v1beta1", "kind": "InferenceService"},
                    "resource": {
                        "group": "ome.io",
                        "version": "v1beta1",
                        "resource": "inferenceservices",
                    },
                    "object": isvc_manifest("bare", model=None),
                    "userInfo": {"username": "tester"},
                },
            }
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            url = f"https://127.0.0.1:{webhook}/validate-inferenceservice"
            async with session.post(url, json=review, ssl=context) as response:
                answer = await response.json()
            assert answer["response"]["allowed"] is False
            assert answer["response"]["status"]["message"] == (
                "at least one of spec.model or spec.runtime must be set"
            )
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 0, output.decode()[-3000:]


async def test_a_configuration_the_operator_cannot_start_with_is_one_error_line(
    kube, kubeconfig
) -> None:
    deploy = '{"defaultDeploymentMode": "Serverless"}'
    await apply_object(
        kube,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
            "data": {"deploy": deploy},
        },
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ome_operator.operator_command",
        "run",
        "--metrics-bind-address=0",
        f"--health-probe-bind-address=127.0.0.1:{free_port()}",
        "--webhook-bind-address=127.0.0.1",
        f"--webhook-port={free_port()}",
        "--webhook-host=localhost",
        "--log-format=plain",
        env={**os.environ, "KUBECONFIG": kubeconfig},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    last = stderr.decode().strip().splitlines()[-1]
    assert (process.returncode, last) == (
        1,
        "error: Failed to initialize deployment configuration: "
        'defaultDeploymentMode "Serverless" is not RawDeployment',
    )
