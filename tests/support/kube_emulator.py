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
* list: label and field selectors, ``limit``/``continue`` paging, ``metadata.resourceVersion``;
* watch: the same selectors, replay of only the events newer than ``resourceVersion``,
  ``timeoutSeconds``;
* ``/api/v1/namespaces`` (plain kmock's URL parser crashes on it), with a quiet watch;
* ``inject_fault``: an error (or a delay) answered before any state change, or a watch cut
  after some events (ended, or ended with an ERROR event such as 410 Expired);
* ``watch_seconds``: every watch ends after that long, as with a real server's request timeout;
* API-style error bodies, e.g. NotFound ``<plural>.<group> "<name>" not found``.

Not emulated: strategic-merge merging of other lists, server-side apply, dryRun, admission,
defaulting, validation, garbage collection, controllers. Objects put into ``objects`` from
Python are served, but emit no events and carry no server metadata: seed through HTTP
(``kube_access.apply_object``) when that matters.
"""

import asyncio
import copy
import datetime
import random
import re
import uuid
from typing import Any, NamedTuple

import aiohttp.web
import attrs
import kmock
from kmock._internal import dsl, parsing, rendering

from tests.support import kube_semantics as semantics
from tests.support.kube_access_reviews import REVIEW_PATHS, AccessReviews
from tests.support.kube_faults import (
    Fault,
    already_exists,
    api_error,
    not_found,
    qualified,
    status_body,
)
from tests.support.kube_reads import NAMESPACES, ObjectReads


class DeclaredResource(NamedTuple):
    api_version: str
    plural: str
    kind: str
    namespaced: bool
    subresources: tuple[str, ...] = ()
    shortnames: tuple[str, ...] = ()


_OME = "ome.io/v1beta1"
_LWS = "leaderworkerset.x-k8s.io/v1"
_STATUS = ("status",)

#: Custom resources served besides kmock's bundled built-ins (``resources.load_bundled()``).
DECLARED_RESOURCES: tuple[DeclaredResource, ...] = (
    # api_version, plural, kind, namespaced, subresources, shortnames
    DeclaredResource(_OME, "inferenceservices", "InferenceService", True, _STATUS, ("isvc",)),
    DeclaredResource(_OME, "servingruntimes", "ServingRuntime", True),
    DeclaredResource(_OME, "clusterservingruntimes", "ClusterServingRuntime", False),
    DeclaredResource(_OME, "basemodels", "BaseModel", True),
    DeclaredResource(_OME, "clusterbasemodels", "ClusterBaseModel", False),
    DeclaredResource(_OME, "acceleratorclasses", "AcceleratorClass", False),
    DeclaredResource(_OME, "inferencereplicas", "InferenceReplica", True, _STATUS, ("irep",)),
    DeclaredResource(_LWS, "leaderworkersets", "LeaderWorkerSet", True, _STATUS),
)

ALL_VERBS = frozenset(
    {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)
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
    _answers: dict[int, dict[str, Any]] = attrs.field(factory=dict, init=False)
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
        self.fallback[kmock.method.PUT] << self._serve_update

    def declare(self, *resources: DeclaredResource) -> None:
        """Serve these resources in discovery (``resources.load_bundled()`` adds built-ins)."""
        for r in resources:
            self.resources[f"{r.api_version}/{r.plural}"] = kmock.ResourceInfo(
                kind=r.kind,
                singular=r.kind.lower(),
                namespaced=r.namespaced,
                verbs=ALL_VERBS,
                shortnames=r.shortnames,
                subresources=r.subresources,
            )

    def _get_resources(self) -> list[kmock.resource]:
        """kmock's list of served resources, without rebuilding it from every stored object.

        kmock walks all objects on each request, which makes a request cost O(objects). Here
        HTTP creates add their resource as they commit; the full walk only runs again when
        objects were stored some other way (tests seeding ``objects`` from Python) or when
        resources were declared.
        """
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

    def inject_fault(
        self,
        status: int | None,
        *,
        action: str | None = None,
        method: str | None = None,
        resource: Any = None,
        subresource: str | None = None,
        times: int = 1,
        delay: float = 0.0,
        probability: float = 1.0,
        message: str | None = None,
        cut_after: tuple[int, int] | None = None,
    ) -> Fault:
        """Answer matching requests with ``status`` before any state change.

        ``delay`` seconds pass first; ``status=None`` only delays. ``resource`` is anything
        ``kmock.resource()`` parses (``"apps/v1/deployments"``, an ``ome_operator``
        ``Resource``). ``probability`` draws from the emulator's seeded generator. With
        ``cut_after=(low, high)`` a matching watch is served, then cut after a seeded number
        of events in that range: ended, or ended with an ERROR event of ``status``.
        """
        fault = Fault(
            status,
            action=None if action is None else kmock.action(action),
            method=None if method is None else kmock.method(method),
            resource=None if resource is None else kmock.resource(resource),
            subresource=subresource,
            times=times,
            delay=delay,
            probability=probability,
            message=message,
            cut_after=cut_after,
        )
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
                    self._answers[request.id] = await self._write(request)
        # Skip KubernetesEmulator._handle: _write replaces its state changes.
        return await self._react(request)

    async def _react(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        """kmock's RawHandler._handle, without its scan of the whole request log per reaction.

        kmock decides whether a reaction sees a request with ``request in view``, which walks
        every request recorded so far: each request costs O(requests seen), and a thousand
        objects take minutes. For the usual chains (filters and priorities down to this root)
        the answer is the filters' criteria; slices and groups still take kmock's walk.
        """
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

    async def _write(self, request: kmock.Request) -> dict[str, Any]:
        resource = request.resource
        assert resource is not None
        self._require_known(resource)
        if request.action == kmock.action.CREATE:
            return await self._create(resource, request)
        key = (resource, request.namespace, request.name or "")
        current = self._live(key)
        if current is None:
            raise not_found(resource, request.name or "")
        if request.action == kmock.action.DELETE:
            options = request.data if isinstance(request.data, dict) else {}
            uid = (options.get("preconditions") or {}).get("uid")
            if uid and uid != current["metadata"].get("uid"):
                raise api_error(
                    409,
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {current['metadata'].get('uid')}",
                )
            return await self._delete(key, current)
        try:
            if request.method == kmock.method.PUT:
                new = self._replacement(resource, request, current)
            else:
                self._check_version(resource, request, current)
                strategic = "strategic-merge-patch" in request.headers.get("Content-Type", "")
                new = semantics.patched(current, request.data, strategic=strategic)
        except semantics.PatchError as exc:
            raise api_error(422, str(exc)) from exc
        has_status = "status" in self._subresources(resource)
        new = semantics.stored_update(
            current, new, subresource=request.subresource, has_status=has_status
        )
        if new == current:
            return current  # a no-op write: no resourceVersion bump, no event
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            return await self._commit(key, new, "DELETED")
        return await self._commit(key, new, "MODIFIED")

    async def _create(self, resource: kmock.resource, request: kmock.Request) -> dict[str, Any]:
        obj = copy.deepcopy(request.data)
        if not isinstance(obj, dict) or not isinstance(obj.setdefault("metadata", {}), dict):
            raise api_error(400, "the body of the request must be a JSON object")
        meta = obj["metadata"]
        if request.namespace and meta.get("namespace", request.namespace) != request.namespace:
            raise api_error(
                400,
                "the namespace of the provided object does not match the namespace sent on "
                "the request",
            )
        namespaced = (
            resource not in self.resources or self.resources[resource].namespaced is not False
        )
        namespace = (request.namespace or meta.get("namespace")) if namespaced else None
        if not meta.get("name"):
            if not meta.get("generateName"):
                message = "metadata.name: Required value: name or generateName is required"
                raise api_error(422, message)
            suffix = "".join(self._rng.choices(_SUFFIX_ALPHABET, k=5))
            meta["name"] = meta["generateName"] + suffix
        key = (resource, namespace, meta["name"])
        if self._live(key) is not None:
            raise already_exists(resource, meta["name"])
        meta.pop("namespace", None)
        if namespace:
            meta["namespace"] = namespace
        meta["uid"] = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        meta["creationTimestamp"] = _now()
        meta["generation"] = 1
        return await self._commit(key, obj, "ADDED")

    async def _delete(self, key: Key, current: dict[str, Any]) -> dict[str, Any]:
        meta = current["metadata"]
        if meta.get("deletionTimestamp"):
            return current
        if not meta.get("finalizers"):
            return await self._commit(key, current, "DELETED")
        meta.update(deletionTimestamp=_now(), deletionGracePeriodSeconds=0)
        return await self._commit(key, current, "MODIFIED")

    def _replacement(
        self, resource: kmock.resource, request: kmock.Request, current: dict[str, Any]
    ) -> dict[str, Any]:
        if not isinstance(request.data, dict):
            raise api_error(400, "the body of the request must be a JSON object")
        self._check_version(resource, request, current)
        return request.data

    @staticmethod
    def _check_version(
        resource: kmock.resource, request: kmock.Request, current: dict[str, Any]
    ) -> None:
        """A write naming a resourceVersion (a PUT, or a patch that sets it) is refused with a
        Conflict unless it is the stored one, as an API server's optimistic concurrency does."""
        data = request.data if isinstance(request.data, dict) else {}
        sent = (data.get("metadata") or {}).get("resourceVersion")
        if sent and sent != current["metadata"]["resourceVersion"]:
            raise api_error(
                409,
                f'Operation cannot be fulfilled on {qualified(resource)} "{request.name}": the '
                "object has been modified; please apply your changes to the latest version and "
                "try again",
            )

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

    async def _serve_create(self, request: kmock.Request) -> kmock.Response:
        return kmock.Response(status=201, payload=self._answers.pop(request.id))

    async def _serve_update(self, request: kmock.Request) -> dict[str, Any]:
        return self._answers.pop(request.id)

    async def _serve_delete(self, request: kmock.Request) -> dict[str, Any]:
        return self._answers.pop(request.id)

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
