"""How ``ApiServerLikeEmulator`` answers get, list and watch (a mixin of that class).

It reads the emulator's state: ``objects``, ``resources``, ``_lock``, ``_rv`` (the
current resourceVersion), ``_log`` (every event with its resourceVersion) and ``_buses``.
"""

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import kmock
from kmock._internal import rendering

from tests.support import kube_semantics as semantics
from tests.support.kube_faults import api_error, not_found

NAMESPACES = kmock.resource("", "v1", "namespaces")


class ObjectReads:
    __slots__ = ()

    async def _serve_fetch(self, request: kmock.Request) -> dict[str, Any]:
        resource = request.resource
        assert resource is not None
        self._require_known(resource)
        async with self._lock:
            objects = self._current(resource, request.namespace)
        for obj in objects:
            if obj["metadata"]["name"] == request.name:
                return obj
        raise not_found(resource, request.name or "")

    async def _serve_list(self, request: kmock.Request) -> dict[str, Any]:
        resource = request.resource
        assert resource is not None
        self._require_known(resource)
        query = _parsed(request, semantics.Query.from_params)
        async with self._lock:
            objects = self._current(resource, request.namespace)
            items = [obj for obj in objects if query.matches(obj)]
            meta: dict[str, Any] = {"resourceVersion": str(self._rv)}
        if request.params.get("continue"):
            after = _parsed(request, lambda params: semantics.decode_continue(params["continue"]))
            items = [obj for obj in items if _sort_key(obj) > after]
        limit = _int_param(request, "limit")
        if limit and len(items) > limit:
            meta["continue"] = semantics.encode_continue(*_sort_key(items[limit - 1]))
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        kind = self.resources[resource].kind if resource in self.resources else None
        return {
            "apiVersion": f"{resource.group}/{resource.version}".lstrip("/"),
            "kind": f"{kind or 'Object'}List",
            "metadata": meta,
            "items": items,
        }

    async def _serve_watch(self, request: kmock.Request) -> AsyncIterator[rendering.Payload]:
        resource = request.resource
        assert resource is not None
        self._require_known(resource)  # raised before the first chunk: a plain 404 answer
        query = _parsed(request, semantics.Query.from_params)
        since = _int_param(request, "resourceVersion") or None  # "0" means "any": replay all
        timeout = _int_param(request, "timeoutSeconds")
        bus = self._buses[resource]
        async with self._lock:
            if since is None:
                current = self._current(resource, request.namespace)
                replay = [{"type": "ADDED", "object": obj} for obj in current]
            else:
                replay = [event for rv, res, event in self._log if res == resource and rv > since]
            marker = await bus.mark()  # under the lock: no event falls between replay and bus
        loop = asyncio.get_running_loop()
        deadline = None if not timeout else loop.time() + timeout

        def selected(event: Any) -> bool:
            meta = event["object"].get("metadata") or {}
            return (
                request.namespace in (None, meta.get("namespace"))
                and request.name in (None, meta.get("name"))
                and query.matches(event["object"])
            )

        yield b""  # send the headers even when nothing happens
        try:
            for event in replay:
                if selected(event):
                    yield event
            while True:
                remaining = None if deadline is None else deadline - loop.time()
                try:
                    event = await asyncio.wait_for(bus.get(since=marker), remaining)
                except TimeoutError:
                    return
                if selected(event):
                    yield event
        finally:
            await bus.unmark(marker)

    def _current(self, resource: kmock.resource, namespace: str | None) -> list[dict[str, Any]]:
        """Live objects of a resource in API order (namespace, name), named by their keys."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for (res, ns, name), obj in self.objects.items():
            if res == resource and not obj.deleted and namespace in (None, ns):
                raw = copy.deepcopy(obj.raw)
                meta = raw.setdefault("metadata", {})
                meta.setdefault("name", name)
                if ns:
                    meta.setdefault("namespace", ns)
                found[ns or "", name] = raw
        if resource == NAMESPACES:  # every namespace in use exists, "default" always
            used = {ns for (_, ns, _), obj in self.objects.items() if ns and not obj.deleted}
            for ns in used | {"default"}:
                found.setdefault(("", ns), _namespace(ns))
        return [found[key] for key in sorted(found)]

    def _require_known(self, resource: kmock.resource) -> None:
        if resource.plural is None or resource not in self._get_resources():
            raise api_error(404, "the server could not find the requested resource")


def _namespace(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "resourceVersion": "1"},
        "status": {"phase": "Active"},
    }


def _sort_key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["metadata"].get("namespace") or "", obj["metadata"]["name"]


def _parsed(request: kmock.Request, parse: Any) -> Any:
    """Parse the request's query parameters; what the API server rejects is a 400."""
    try:
        return parse(request.params)
    except semantics.QueryError as exc:
        raise api_error(400, str(exc)) from exc


def _int_param(request: kmock.Request, name: str) -> int | None:
    text = request.params.get(name) or ""
    if text and not text.isdigit():
        raise api_error(400, f'invalid value for {name}: "{text}"')
    return int(text) if text else None
