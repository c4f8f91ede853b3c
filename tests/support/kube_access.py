"""How tests reach the emulator: kubeconfig files, seeding over HTTP, and waiting.

Seed through HTTP (``apply_object``) rather than ``kube.objects[...] = {...}`` when a watch
must see the object or when server metadata (uid, resourceVersion) matters.
"""

import asyncio
import pathlib
import time
from collections.abc import Callable
from typing import Any, TypeVar

import yaml

from tests.support.kube_emulator import ApiServerLikeEmulator

T = TypeVar("T")


def write_kubeconfig(
    path: pathlib.Path, server: str, *, namespace: str = "default"
) -> pathlib.Path:
    """A kubeconfig whose current context ``emulator`` reaches ``server`` in ``namespace``."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulator", "cluster": {"server": server.rstrip("/")}}],
        "users": [{"name": "tester", "user": {"token": "test-token"}}],
        "contexts": [
            {
                "name": "emulator",
                "context": {"cluster": "emulator", "user": "tester", "namespace": namespace},
            }
        ],
        "current-context": "emulator",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def collection_path(kube: ApiServerLikeEmulator, manifest: dict[str, Any]) -> str:
    """The URL path an object of this manifest is created at (POSTed to)."""
    resource = kube.resource_for(manifest["apiVersion"], manifest["kind"])
    prefix = f"/apis/{resource.group}/{resource.version}" if resource.group else "/api/v1"
    if not kube.resources[resource].namespaced:
        return f"{prefix}/{resource.plural}"
    namespace = manifest.get("metadata", {}).get("namespace") or "default"
    return f"{prefix}/namespaces/{namespace}/{resource.plural}"


async def apply_object(kube: ApiServerLikeEmulator, manifest: dict[str, Any]) -> dict[str, Any]:
    """Create the object over HTTP (watches see it); if it exists, merge-patch it instead.

    Returns the stored object, with server metadata. Any refusal fails the test.
    """
    path = collection_path(kube, manifest)
    async with kube.post(path, json=manifest) as response:
        answer = await response.json()
    if response.status == 409:
        name = manifest["metadata"]["name"]
        async with kube.patch(f"{path}/{name}", json=manifest) as response:
            answer = await response.json()
    if response.status >= 400:
        raise AssertionError(f"seeding {path} failed: {response.status} {answer.get('message')}")
    return answer


async def eventually(probe: Callable[[], T], *, timeout: float = 5.0, interval: float = 0.01) -> T:
    """The first truthy result of ``probe()``; lookups that raise count as "not yet"."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = probe()
        except (KeyError, LookupError, ValueError) as exc:
            result, problem = None, exc
        else:
            problem = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s (last problem: {problem!r})")
        await asyncio.sleep(interval)
