"""An API-server-like Kubernetes emulator: kmock 0.8 plus what kopf and the CLI rely on.

Plain ``kmock.KubernetesEmulator`` is a database over HTTP (shared/notes/testing-stack.md §2,
§4). ``ApiServerLikeEmulator`` answers as a real API server does, for:

* ``metadata.uid/resourceVersion/creationTimestamp/generation``: one resourceVersion counter
  bumped by every write; ``generation`` bumped when anything but metadata (and status, when
  it is a subresource) changes; a write that changes nothing bumps nothing and emits nothing;
* create: namespace from the URL, ``generateName``, 201, 409 AlreadyExists;
* PATCH as merge patch, strategic merge patch (conditions by type, webhooks by name) or JSON
  patch (a failed ``test`` is 422); a PUT, or a patch that sets ``metadata.resourceVersion``,
  refused with 409 unless it names the stored version; the status subresource split;
  finalizers on DELETE, and its uid precondition (409 when it differs);
* server-side apply (``application/apply-patch+yaml``, ``fieldManager``, ``force``; an apply
  creates what is absent) and ``metadata.managedFields`` on every write, with their conflicts
  (409) and uid checks: the rules are in ``kube_field_managers``;
* list: label and field selectors, ``limit``/``continue`` paging, ``metadata.resourceVersion``;
* watch: the same selectors, replay of only the events newer than ``resourceVersion``,
  ``timeoutSeconds``;
* ``/api/v1/namespaces`` (plain kmock's URL parser crashes on it), with a quiet watch;
* ``inject_fault``: an error (or a delay) answered before any state change, or a watch cut
  after some events (ended, or ended with an ERROR event such as 410 Expired);
* ``watch_seconds``: every watch ends after that long, as with a real server's request timeout;
* API-style error bodies, e.g. NotFound ``<plural>.<group> "<name>" not found``.

Not emulated: strategic-merge merging of other lists, dryRun, admission, defaulting,
validation, garbage collection, controllers. Objects put into ``objects`` from
Python are served, but emit no events and carry no server metadata: seed through HTTP
(``kube_access.apply_object``) when that matters.
"""

import asyncio
import copy
import datetime
import random
import re
import uuid
from typing import Any

import aiohttp.web
import attrs
import kmock
from kmock._internal import dsl, parsing, rendering

from tests.support import kube_field_managers as fields
from tests.support import kube_semantics as semantics
from tests.support.kube_access_reviews import REVIEW_PATHS, AccessReviews
from tests.support.kube_faults import Fault, already_exists, not_found, status_body
from tests.support.kube_reads import NAMESPACES, ObjectReads
from tests.support.kube_semantics import ALL_VERBS, DECLARED_RESOURCES, DeclaredResource

__all__ = ["DECLARED_RESOURCES", "ApiServerLikeEmulator", "DeclaredResource"]

_NAMESPACES_PATH = re.compile(r"/api/v1/namespaces(?:/(?P<name>[^/]+))?/?")
_WRITES = frozenset({kmock.action.CREATE, kmock.action.UPDATE, kmock.action.DELETE})
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the API server's generateName alphabet
Key = tuple[kmock.resource, str | None, str]


@attrs.define(kw_only=True)
class ApiServerLikeEmulator(ObjectReads, kmock.KubernetesEmulator):
    seed: int = 0  # seeds generateName suffixes, uids and fault probabilities
    #: Seconds after which the server ends every watch, as a real one's request timeout does
    #: (None: only ``timeoutSeconds`` ends one).
    watch_seconds: int | None = None
    _rv: int = attrs.field(default=0, init=False)
    _log: list[tuple[int, kmock.resource, dict[str, Any]]] = attrs.field(factory=list, init=False)
    _faults: list[Fault] = attrs.field(factory=list, init=False)
    _answers: dict[int, kmock.Response] = attrs.field(factory=dict, init=False)
    _cuts: dict[int, tuple[int, Fault]] = attrs.field(factory=dict, init=False)
    _rng: random.Random = attrs.field(factory=random.Random, init=False)
    _known_resources: tuple[Any, list[kmock.resource]] | None = attrs.field(
        default=None, init=False
    )
    #: TokenReviews and SubjectAccessReviews are answered from this when set.
    access_reviews: AccessReviews | None = None

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._rng.seed(self.seed)
        self.fallback[kmock.method.PUT] << self._serve_answer

    def declare(self, *resources: DeclaredResource) -> None:
        """Serve these resources in discovery (``resources.load_bundled()`` adds built-ins)."""
        for r in resources:
            info = {k: v for k, v in r._asdict().items() if k not in ("api_version", "plural")}
            info.update(singular=r.kind.lower(), verbs=ALL_VERBS)
            self.resources[f"{r.api_version}/{r.plural}"] = kmock.ResourceInfo(**info)

    def _get_resources(self) -> list[kmock.resource]:
        """kmock's list of served resources, without its walk over all objects per request
        (O(objects)): HTTP creates add their resource as they commit; the walk runs again only
        when objects were stored some other way (seeded from Python) or resources declared."""
        stamp = (len(self._objects), len(self.resources))
        known = self._known_resources
        if known is None or known[0] != stamp:
            self._known_resources = (stamp, list(super()._get_resources()))
        return self._known_resources[1]

    def _note_resource(self, resource: kmock.resource) -> None:
        known = self._known_resources
        if known is None or known[0] != (len(self._objects) - 1, len(self.resources)):
            return  # out of date anyway: the next call walks everything
        listed = known[1] if resource in known[1] else [*known[1], resource]
        self._known_resources = ((len(self._objects), len(self.resources)), listed)

    def resource_for(self, api_version: str, kind: str) -> kmock.resource:
        """The declared resource serving objects of this ``apiVersion`` and ``kind``."""
        group, _, version = api_version.rpartition("/")
        for resource in self.resources:
            if (resource.group, resource.version) == (group, version):
                if self.resources[resource].kind == kind:
                    return resource
        raise LookupError(f"no resource is declared for {api_version} {kind}")

    def inject_fault(self, status: int | None, *, times: int = 1, **options: Any) -> Fault:
        """Answer the next ``times`` matching requests with ``status`` before any state change.

        ``options`` are ``Fault``'s: the criteria ``action``, ``method``, ``resource`` (anything
        ``kmock.resource()`` parses: ``"apps/v1/deployments"``, an ``ome_operator``
        ``Resource``) and ``subresource``; ``delay`` seconds that pass first (``status=None``
        only delays); a ``probability`` drawn from the emulator's seeded generator; a
        ``message``; ``cut_after=(low, high)``: a matching watch is served, then cut after a
        seeded number of events in that range (ended, or ended with an ERROR event of
        ``status``).
        """
        parsers = {"action": kmock.action, "method": kmock.method, "resource": kmock.resource}
        for name, parse in parsers.items():
            if options.get(name) is not None:
                options[name] = parse(options[name])
        fault = Fault(status, times=times, **options)
        self._faults.append(fault)
        return fault

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        reviews = self.access_reviews
        if reviews is not None and (raw_request.method, raw_request.path) in REVIEW_PATHS:
            answer = reviews.answer(raw_request.path, await raw_request.json())
            return aiohttp.web.json_response(answer, status=201)
        match = _NAMESPACES_PATH.fullmatch(raw_request.path)
        if match is None:
            return await super().__call__(raw_request)
        # kmock's parser crashes on this path: build the request it would have built.
        body, method, query = await raw_request.read(), raw_request.method, raw_request.query
        path = parsing.ParsedPath("", "v1", "namespaces", None, match["name"], None)
        request = rendering.Request(
            id=len(self._requests),
            raw_request=raw_request,
            url=raw_request.url,
            method=method,
            params=dict(query),
            headers=dict(raw_request.headers),
            body=body,
            text=body.decode(errors="replace"),
            data=await _json(raw_request),
            action=parsing.guess_k8s(path, kmock.method(method), dict(query)),
            resource=NAMESPACES,
            name=match["name"],
        )
        self._requests.append(request)
        try:
            return await self._handle(request)
        except Exception as exc:
            if not self._errors:
                raise
            cause = exc.__cause__ if isinstance(exc, rendering.StreamingError) else exc
            self._errors[-1].append(cause or exc)
            return await self._render_error(cause or exc)

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        if request.resource is not None and request.resource.plural is not None:
            await self._apply_faults(request)
            put = request.method == kmock.method.PUT and request.name is not None
            if request.action in _WRITES or put:
                async with self._lock:
                    answer = await self._write(request)
                if not isinstance(answer, kmock.Response):
                    answer = kmock.Response(status=200, payload=answer)
                self._answers[request.id] = answer
        # Skip KubernetesEmulator._handle: _write replaces its state changes.
        return await self._react(request)

    async def _react(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        """kmock's RawHandler._handle, without its scan of the whole request log per reaction:
        ``request in view`` walks every request so far (a thousand objects take minutes). For the
        usual chains (filters and priorities down to this root) the answer is the filters'
        criteria; slices and groups still take kmock's walk."""
        ordered = sorted(self._payloads, key=_priority_key(self._payloads))
        for payload in ordered:
            seen = _sees(payload._source, request, self)
            if seen is None:
                seen = request in payload._source
            if seen and not payload._disabled.is_set():
                try:
                    return await payload(request)
                except rendering.ReactionMismatchError:
                    payload._disabled.set()
                except NotImplementedError:
                    pass
        raise NotImplementedError("no reaction matches the request")

    async def _render_error(self, exc: Exception) -> aiohttp.web.StreamResponse:
        if not isinstance(exc, kmock.KubernetesError):
            return await super()._render_error(exc)
        return aiohttp.web.json_response(status_body(exc), status=exc.status)

    async def _apply_faults(self, request: kmock.Request) -> None:
        for fault in self._faults:
            if fault.times > 0 and fault.matches(request):
                if self._rng.random() < fault.probability:
                    fault.times, fault.hits = fault.times - 1, fault.hits + 1
                    await asyncio.sleep(fault.delay)
                    if fault.cut_after is not None and request.action == kmock.action.WATCH:
                        self._cuts[request.id] = (self._rng.randint(*fault.cut_after), fault)
                    elif fault.status is not None:
                        raise fault.error()
                    return

    async def _serve_watch(self, request: kmock.Request) -> Any:
        """The watch (``ObjectReads``), cut where a fault says so."""
        cut = self._cuts.pop(request.id, None)
        asked = request.params.get("timeoutSeconds") or ""
        if self.watch_seconds is not None and (asked.isdigit() or not asked):
            capped = min(int(asked or 0) or self.watch_seconds, self.watch_seconds)
            request.params["timeoutSeconds"] = str(capped)
        stream = super()._serve_watch(request)
        try:
            sent = 0
            async for item in stream:
                yield item
                sent += isinstance(item, dict)
                if cut is not None and sent >= cut[0]:
                    if cut[1].status is not None:
                        yield cut[1].error_event()
                    return
        finally:
            await stream.aclose()

    # Writes happen before the response, under the lock; the fallbacks answer their result.

    async def _write(self, request: kmock.Request) -> Any:
        resource = request.resource
        assert resource is not None
        self._require_known(resource)
        apply = "apply-patch" in request.headers.get("Content-Type", "")
        if request.method == kmock.method.PATCH:
            semantics.check_patch_options(request.params, apply=apply)
        if request.action == kmock.action.CREATE:
            return await self._create(resource, request)
        key = (resource, request.namespace, request.name or "")
        current = self._live(key)
        if apply:
            return await self._apply(key, request, current)
        if current is None:
            raise not_found(resource, request.name or "")
        if request.action == kmock.action.DELETE:
            return await self._delete(key, current, request.data)
        semantics.check_version(resource, request.name or "", request.data, current)
        put, content_type = request.method == kmock.method.PUT, request.headers.get("Content-Type")
        new = semantics.requested(current, request.data, put=put, content_type=content_type or "")
        return await self._store(key, request, current, new)

    async def _store(
        self, key: Key, request: kmock.Request, current: dict[str, Any], new: dict[str, Any]
    ) -> dict[str, Any]:
        """Store ``new`` over ``current`` as the server does (an apply brings its own
        managedFields); a write that changes nothing bumps nothing and emits nothing."""
        writer = self._writer(request)
        new = semantics.stored_update(
            current, new, subresource=request.subresource, has_status=writer.has_status
        )
        if "apply-patch" not in request.headers.get("Content-Type", ""):
            new = writer.updated(current, new)
        if new == current:
            return current
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            return await self._commit(key, new, "DELETED")
        return await self._commit(key, new, "MODIFIED")

    async def _apply(self, key: Key, request: kmock.Request, current: dict[str, Any] | None) -> Any:
        """Server-side apply; an apply to an object that does not exist creates it (201)."""
        (resource, namespace, name), writer = key, self._writer(request)
        if current is None and request.subresource:
            raise not_found(resource, name)
        config = semantics.apply_configuration(request.text, writer.api_version, writer.kind, name)
        semantics.check_apply_uid(resource, writer.kind, config, current)
        if current is None:
            new = writer.applied({}, config, force=False)
            _, new = semantics.new_object(new, namespace, namespace is not None, self._suffix)
            return await self._insert(key, new)
        semantics.check_version(resource, name, config, current)
        new = writer.applied(current, config, force=request.params.get("force") == "true")
        return await self._store(key, request, current, new)

    def _writer(self, request: kmock.Request) -> fields.Write:
        resource, manager = request.resource, fields.manager_of(request.params, request.headers)
        assert resource is not None
        kind = self.resources[resource].kind if resource in self.resources else ""
        api_version = f"{resource.group}/{resource.version}".lstrip("/")
        has_status = "status" in self._subresources(resource)
        return fields.Write(manager, api_version, kind, subresource=request.subresource,
                            has_status=has_status, now=_now())  # fmt: skip

    async def _create(self, resource: kmock.resource, request: kmock.Request) -> kmock.Response:
        info = self.resources.get(resource)
        namespaced = info is None or info.namespaced is not False
        data, namespace = request.data, request.namespace
        namespace, obj = semantics.new_object(data, namespace, namespaced, self._suffix)
        key = (resource, namespace, obj["metadata"]["name"])
        if self._live(key) is not None:
            raise already_exists(resource, key[2])
        return await self._insert(key, self._writer(request).created(obj))

    def _suffix(self) -> str:
        return "".join(self._rng.choices(_SUFFIX_ALPHABET, k=5))  # for generateName

    async def _insert(self, key: Key, obj: dict[str, Any]) -> kmock.Response:
        """Store a new object, with the metadata the server gives it (201)."""
        uid = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        obj["metadata"].update(uid=uid, creationTimestamp=_now(), generation=1)
        return kmock.Response(status=201, payload=await self._commit(key, obj, "ADDED"))

    async def _delete(self, key: Key, current: dict[str, Any], options: Any) -> dict[str, Any]:
        semantics.check_delete(options, current)
        meta = current["metadata"]
        if meta.get("deletionTimestamp"):
            return current
        if not meta.get("finalizers"):
            return await self._commit(key, current, "DELETED")
        meta.update(deletionTimestamp=_now(), deletionGracePeriodSeconds=0)
        return await self._commit(key, current, "MODIFIED")

    async def _commit(self, key: Key, obj: dict[str, Any], event: str) -> dict[str, Any]:
        """Store a version (or the deletion) under a new resourceVersion; emit its event."""
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        if event == "DELETED":
            self.objects[key].history.append(None)
        elif key in self.objects:
            self.objects[key].history.append(obj)
        else:
            self.objects[key] = obj
            self._note_resource(key[0])
        payload = {"type": event, "object": copy.deepcopy(obj)}
        self._log.append((self._rv, key[0], payload))
        await self._buses[key[0]].put(payload)
        return obj

    async def _serve_answer(self, request: kmock.Request) -> kmock.Response:
        return self._answers.pop(request.id)

    _serve_create = _serve_update = _serve_delete = _serve_answer

    def _live(self, key: Key) -> dict[str, Any] | None:
        if key not in self.objects or self.objects[key].deleted:
            return None
        return copy.deepcopy(self.objects[key].raw)

    def _subresources(self, resource: kmock.resource) -> set[str]:
        return self.resources[resource].subresources if resource in self.resources else set()


def _priority_key(payloads: list[Any]) -> Any:
    """kmock's payload order: higher priorities first, padded to the same depth."""
    depth = max((len(p.priorities) for p in payloads), default=0)

    def key(payload: Any) -> tuple[float, ...]:
        reverse = tuple(-p for p in payload.priorities)
        return reverse + (0,) * (depth - len(reverse))

    return key


def _sees(view: Any, request: kmock.Request, root: Any) -> bool | None:
    """Whether ``request`` passes a chain of filters and priorities down to ``root``; None
    when the chain holds anything else (slices, exclusions, groups)."""
    while view is not root:
        if type(view) is dsl.Filter:
            if not view.criteria(request):
                return False
        elif type(view) is not dsl.Priority:
            return None
        view = view._source
    return True


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _json(raw_request: aiohttp.web.BaseRequest) -> Any:
    try:
        return await raw_request.json()
    except ValueError:
        return None
