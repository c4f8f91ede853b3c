"""API-server semantics the emulator applies, as pure functions over JSON-like dicts.

* Selectors: label selectors with ``=``, ``==``, ``!=``, ``in``, ``notin``, ``key`` (exists)
  and ``!key``; field selectors on ``metadata.name`` and ``metadata.namespace`` with ``=``,
  ``==``, ``!=`` (what the API server offers for custom resources). Anything else is a
  ``QueryError``, which the emulator answers as 400 Bad Request.
* Continue tokens: a list resumes after the (namespace, name) key of its last object.
* Resources: the custom resources served (``DECLARED_RESOURCES``), with their scope,
  subresources and short names.
* Writes: RFC 7386 merge patch, RFC 6902 JSON patch, server-owned metadata, the status
  subresource split, and which changes bump ``metadata.generation``.
* Requests: what a create stores; the checks of an apply, of a delete and of a write.
"""

import base64
import binascii
import copy
import dataclasses
import json
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

import jsonpatch
import jsonpointer
import kmock
import yaml

from tests.support.kube_faults import api_error, qualified


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

#: Custom resources served besides kmock's bundled built-ins (``resources.load_bundled()``),
#: as their CustomResourceDefinitions declare them.
DECLARED_RESOURCES: tuple[DeclaredResource, ...] = (
    DeclaredResource(_OME, "inferenceservices", "InferenceService", True, _STATUS, ("isvc",)),
    DeclaredResource(_OME, "servingruntimes", "ServingRuntime", True),
    DeclaredResource(_OME, "clusterservingruntimes", "ClusterServingRuntime", False),
    DeclaredResource(_OME, "basemodels", "BaseModel", True),
    DeclaredResource(_OME, "clusterbasemodels", "ClusterBaseModel", False),
    DeclaredResource(_OME, "acceleratorclasses", "AcceleratorClass", False),
    DeclaredResource(_OME, "inferencereplicas", "InferenceReplica", True, _STATUS, ("irep",)),
    DeclaredResource(_LWS, "leaderworkersets", "LeaderWorkerSet", True, _STATUS),
    DeclaredResource("keda.sh/v1alpha1", "scaledobjects", "ScaledObject", True, _STATUS),
)
#: The alpha built-in PodGroup (gang placement), which kmock does not bundle and a cluster
#: serves only with its feature gates on: declared by the tests of gang placement alone.
POD_GROUPS = DeclaredResource("scheduling.k8s.io/v1alpha2", "podgroups", "PodGroup", True, _STATUS)

ALL_VERBS = frozenset(
    {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)
SUPPORTED_FIELDS = ("metadata.name", "metadata.namespace")

_TERM = re.compile(
    r"(?P<neg>!)?\s*(?P<key>[A-Za-z0-9][-A-Za-z0-9_./]*)\s*"
    r"(?:(?P<op>==|=|!=)\s*(?P<value>[-A-Za-z0-9_.]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<values>[^()]*)\))?"
)
_FIELD_TERM = re.compile(r"(?P<key>[^=!]+?)\s*(?P<op>==|=|!=)\s*(?P<value>[^,]*)")
_TOP_LEVEL_COMMA = re.compile(r",(?![^()]*\))")


class QueryError(ValueError):
    """A selector or continue token the API server would reject."""


class PatchError(ValueError):
    """A patch the API server would reject (a failed JSON-patch ``test`` included)."""


@dataclasses.dataclass(frozen=True)
class Requirement:
    """One selector term: ``values`` are the accepted values, ``None`` means "exists"."""

    key: str
    values: frozenset[str] | None
    negated: bool = False

    def holds(self, present: Mapping[str, str]) -> bool:
        found = self.key in present and (self.values is None or present[self.key] in self.values)
        return found != self.negated


@dataclasses.dataclass(frozen=True)
class Query:
    """What a list or watch request selects, beyond resource and namespace."""

    labels: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> "Query":
        return cls(
            labels=parse_label_selector(params.get("labelSelector", "")),
            fields=parse_field_selector(params.get("fieldSelector", "")),
        )

    def matches(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        fields = {f"metadata.{key}": meta.get(key) or "" for key in ("name", "namespace")}
        return all(r.holds(labels) for r in self.labels) and all(
            r.holds(fields) for r in self.fields
        )


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    return tuple(_label_term(term) for term in _terms(text, _TOP_LEVEL_COMMA.split))


def parse_field_selector(text: str) -> tuple[Requirement, ...]:
    requirements = []
    for term in _terms(text, lambda t: t.split(",")):
        match = _FIELD_TERM.fullmatch(term)
        if match is None:
            raise QueryError(f"invalid selector: '{term}'; can't understand '{term}'")
        if match["key"] not in SUPPORTED_FIELDS:
            raise QueryError(f"field label not supported: {match['key']}")
        value = frozenset({match["value"].strip()})
        requirements.append(Requirement(match["key"], value, negated=match["op"] == "!="))
    return tuple(requirements)


def encode_continue(namespace: str, name: str) -> str:
    """A continue token: the list resumes after this object's key."""
    return base64.urlsafe_b64encode(json.dumps([namespace, name]).encode()).decode()


def decode_continue(token: str) -> tuple[str, str]:
    try:
        namespace, name = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError, binascii.Error) as exc:
        raise QueryError(f"continue key is not valid: {token}") from exc
    return str(namespace), str(name)


def _terms(text: str, split: Callable[[str], list[str]]) -> list[str]:
    terms = [term.strip() for term in split(text)] if text.strip() else []
    if any(not term for term in terms):
        raise QueryError(f"unable to parse requirement: empty term in '{text}'")
    return terms


def _label_term(term: str) -> Requirement:
    match = _TERM.fullmatch(term)
    if match is None or (match["neg"] and (match["op"] or match["setop"])):
        raise QueryError(f"unable to parse requirement: '{term}'")
    if match["op"]:
        values = frozenset({match["value"]})
        return Requirement(match["key"], values, negated=match["op"] == "!=")
    if match["setop"]:
        values = frozenset(v.strip() for v in match["values"].split(",") if v.strip())
        return Requirement(match["key"], values, negated=match["setop"] == "notin")
    return Requirement(match["key"], None, negated=bool(match["neg"]))


#: Metadata the server owns: a write cannot change it (deletionTimestamp is set by DELETE).
SERVER_FIELDS = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "generation",
    "resourceVersion",
    "deletionTimestamp",
)


#: The lists a strategic merge patch merges item by item, by the key of their items, as the
#: built-in kinds' schemas declare it (``patchMergeKey``); other lists are replaced.
MERGE_KEYS = {"conditions": "type", "webhooks": "name"}


def patched(current: dict[str, Any], patch: Any, *, strategic: bool = False) -> dict[str, Any]:
    """``current`` after a JSON patch (a list), or a merge patch (an object): a strategic one
    merges the lists of ``MERGE_KEYS`` by their key."""
    if isinstance(patch, list):
        try:
            result = jsonpatch.apply_patch(current, patch)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
            raise PatchError(str(exc)) from exc
    elif isinstance(patch, dict):
        result = strategic_merge_patch(current, patch) if strategic else merge_patch(current, patch)
    else:
        raise PatchError("the body of the request must be a JSON object or a JSON patch")
    if not isinstance(result, dict) or not isinstance(result.get("metadata", {}), dict):
        raise PatchError("metadata: Invalid value: must be an object")
    return result


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any, field: str | None = None) -> Any:
    """A merge patch whose lists named in ``MERGE_KEYS`` merge their items by key (an item of
    the patch updates the item of the same key, or is appended)."""
    key = MERGE_KEYS.get(field or "")
    if key is not None and isinstance(patch, list) and isinstance(target, list):
        result = [copy.deepcopy(item) for item in target]
        for item in patch:
            at = next(
                (
                    n
                    for n, old in enumerate(result)
                    if isinstance(old, dict)
                    and isinstance(item, dict)
                    and old.get(key) == item.get(key)
                ),
                None,
            )
            if at is None:
                result.append(copy.deepcopy(item))
            else:
                result[at] = strategic_merge_patch(result[at], item)
        return result
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = strategic_merge_patch(result.get(name), value, name)
    return result


def stored_update(
    current: dict[str, Any], new: dict[str, Any], *, subresource: str | None, has_status: bool
) -> dict[str, Any]:
    """What the server stores for a write of ``new`` over ``current``.

    Server-owned metadata is kept; with a status subresource, a ``/status`` write changes
    only ``status`` and a write to the object itself leaves ``status`` alone.
    """
    result = copy.deepcopy(new)
    meta = result.setdefault("metadata", {})
    for field in SERVER_FIELDS:
        if field in current["metadata"]:
            meta[field] = current["metadata"][field]
        else:
            meta.pop(field, None)
    if has_status:
        base, source = (current, result) if subresource == "status" else (result, current)
        managed = meta.get("managedFields")  # the field managers' record of this very write
        result = copy.deepcopy({key: value for key, value in base.items() if key != "status"})
        if source.get("status") is not None:
            result["status"] = source["status"]
        result["metadata"].pop("managedFields", None)
        if managed is not None:
            result["metadata"]["managedFields"] = managed
    if _generated(result, has_status) != _generated(current, has_status):
        result["metadata"]["generation"] = current["metadata"].get("generation", 0) + 1
    return result


def _generated(obj: dict[str, Any], has_status: bool) -> dict[str, Any]:
    """The part of an object whose changes bump ``metadata.generation``."""
    ignored: Collection[str] = ("metadata", "status") if has_status else ("metadata",)
    return {key: value for key, value in obj.items() if key not in ignored}


def check_version(resource: kmock.resource, name: str, sent: Any, current: dict[str, Any]) -> None:
    """A write naming a resourceVersion (a PUT, or a patch that sets it) is refused with a
    Conflict unless it is the stored one, as an API server's optimistic concurrency does."""
    version = (sent.get("metadata") or {}).get("resourceVersion") if isinstance(sent, dict) else 0
    if version and version != current["metadata"]["resourceVersion"]:
        raise api_error(
            409,
            f'Operation cannot be fulfilled on {qualified(resource)} "{name}": the object has '
            "been modified; please apply your changes to the latest version and try again",
        )


def check_patch_options(params: Mapping[str, str], *, apply: bool) -> None:
    """An apply names its manager; only an apply may force."""
    if apply and not params.get("fieldManager"):
        field, why = "fieldManager", "Required value: is required for apply patch"
    elif not apply and "force" in params:
        field, why = "force", "Forbidden: may not be specified for non-apply patch"
    else:
        return
    reason = "FieldValue" + why.split(":")[0].split()[0]
    raise _invalid("PatchOptions.meta.k8s.io", "", field, why, reason, group="meta.k8s.io",
                   kind="PatchOptions")  # fmt: skip


def new_object(
    data: Any, namespace: str | None, namespaced: bool, suffix: Callable[[], str]
) -> tuple[str | None, dict[str, Any]]:
    """What a create stores: the object's namespace (the URL's) and the object, named
    (``generateName`` and a ``suffix()``); refused where the server refuses it."""
    obj = copy.deepcopy(data)
    if not isinstance(obj, dict) or not isinstance(obj.setdefault("metadata", {}), dict):
        raise api_error(400, "the body of the request must be a JSON object")
    meta = obj["metadata"]
    if namespace and meta.get("namespace", namespace) != namespace:
        message = "the namespace of the provided object does not match the namespace sent on the"
        raise api_error(400, f"{message} request")
    namespace = (namespace or meta.pop("namespace", None)) if namespaced else None
    meta.pop("namespace", None)
    if namespace:
        meta["namespace"] = namespace
    if not meta.get("name"):
        if not meta.get("generateName"):
            raise api_error(422, "metadata.name: Required value: name or generateName is required")
        meta["name"] = meta["generateName"] + suffix()
    return namespace, obj


def check_delete(options: Any, current: dict[str, Any]) -> None:
    """A delete whose uid precondition names another object is a Conflict."""
    uid = ((options if isinstance(options, dict) else {}).get("preconditions") or {}).get("uid")
    if uid and uid != current["metadata"].get("uid"):
        message = f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
        raise api_error(409, message + str(current["metadata"].get("uid")))


def apply_configuration(text: str, api_version: str, kind: str, name: str) -> dict[str, Any]:
    """The object an apply sends (YAML, JSON being YAML), refused where the server refuses it."""
    try:
        config = json.loads(text)
    except ValueError:
        try:
            config = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise api_error(400, f"error decoding YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(config, dict) or not isinstance(config.setdefault("metadata", {}), dict):
        raise api_error(400, "error decoding YAML: the object must be a map")
    meta = config["metadata"]
    sent = (str(config.get("apiVersion") or ""), str(config.get("kind") or ""))
    if sent != (api_version, kind):
        group, _, version = sent[0].rpartition("/")
        raise api_error(400, f"invalid object type: {group}/{version}, Kind={sent[1]}")
    if meta.get("managedFields") is not None:
        raise api_error(400, "metadata.managedFields must be nil")
    if meta.get("name") != name:
        message = f"the name of the object ({meta.get('name', '')}) does not match the name on"
        raise api_error(400, f"{message} the URL ({name})")
    return config


def check_apply_uid(
    resource: kmock.resource, kind: str, config: dict[str, Any], current: dict[str, Any] | None
) -> None:
    """An apply naming a uid must name the object's (an absent object has none)."""
    name, uid = config["metadata"]["name"], config["metadata"].get("uid")
    if not uid or (current is not None and uid == current["metadata"].get("uid")):
        return
    if current is None:
        message = (
            f'Operation cannot be fulfilled on {qualified(resource)} "{name}": uid mismatch: the '
            f"provided object specified uid {uid}, and no existing object was found"
        )
        group = {"group": resource.group} if resource.group else {}
        details = {"name": name, **group, "kind": resource.plural}
        raise kmock.KubernetesError(status=409, reason="Conflict", message=message, details=details)
    what = f"{kind}.{resource.group}" if resource.group else kind
    why = f'Invalid value: "{uid}": field is immutable'
    # The server checks the uid twice (common fields, then the kind's own), and says so twice.
    raise _invalid(what, name, "metadata.uid", why, "FieldValueInvalid", 2, group=resource.group,
                   kind=kind)  # fmt: skip


def _invalid(what: str, name: str, field: str, why: str, reason: str, times: int = 1,
             **details: Any) -> kmock.KubernetesError:  # fmt: skip
    details = {**({"name": name} if name else {}), **{k: v for k, v in details.items() if v}}
    details["causes"] = [{"reason": reason, "message": why, "field": field}] * times
    message = f'{what} "{name}" is invalid: {field}: {why}'
    return kmock.KubernetesError(status=422, reason="Invalid", message=message, details=details)


def requested(current: dict[str, Any], body: Any, *, put: bool, content_type: str) -> Any:
    """The object a PUT (the body) or a patch of ``current`` asks to store."""
    if put and not isinstance(body, dict):
        raise api_error(400, "the body of the request must be a JSON object")
    try:
        strategic = "strategic-merge-patch" in content_type
        return body if put else patched(current, body, strategic=strategic)
    except PatchError as exc:
        raise api_error(422, str(exc)) from exc
