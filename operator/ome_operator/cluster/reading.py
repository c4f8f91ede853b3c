"""Reading objects from a cluster with the official client: the package's only cluster reads.

``ClusterReader`` implements ``objects.ObjectReader`` over ``api.KubeApi``, the operator's own
transport. Every failure leaves as a ``ReadError`` whose text is the API server's message (or
one short sentence for transport failures, as kubectl words them), never a traceback. Answers
are decoded here, not by the client library (whose ``json.loads`` stops near 1,000 levels with a
RecursionError), with the functions that
decode manifests: up to ``decoding.MAX_DOCUMENT_NESTING`` levels, JSON values only, and every
object with the identity ``decoding.checked_identity`` requires; an answer that is not so is
a ``ReadError`` saying what is wrong with it. ``api_client_from_flags`` turns kubectl's
connection flags into a client without touching the client library's global default
configuration.
"""

import os
import urllib.parse
from collections.abc import Sequence
from typing import Any

import urllib3
import yaml
from kubernetes import client as k8s_client
from kubernetes.config import kube_config
from kubernetes.config.config_exception import ConfigException

from ome_operator.cluster.api import KubeApi
from ome_operator.cluster.connection import (
    ConnectionFlags,
    parse_request_timeout,
    parse_user_extra,
)
from ome_operator.cluster.decoding import (
    DocumentError,
    checked_identity,
    checked_object,
    decode_json,
    json_tree,
)
from ome_operator.cluster.errors import ApiError, NotFound, TimedOut, Unreachable
from ome_operator.cluster.objects import (
    NotFoundError,
    ObjectList,
    ReadError,
    ReadTimeoutError,
    Resource,
    require_namespace,
    too_many_objects,
)
from ome_operator.models.base import shown

__all__ = ["ClusterReader", "api_client_from_flags"]

#: The kubeconfig used when neither --kubeconfig nor $KUBECONFIG names one (read per call:
#: the client library reads $KUBECONFIG once, at import).
_DEFAULT_KUBECONFIG = "~/.kube/config"
#: Name of the context (and cluster) built from the flags inside the loaded kubeconfig.
_FLAGS_ENTRY = "kubectl-ome-flags"
#: Characters allowed unescaped in an ``Impersonate-Extra-<key>`` header name (HTTP token
#: characters except ``%``), as client-go escapes the key.
_HEADER_KEY_SAFE = "!#$&'*+-.^_`|~"
#: What reading a kubeconfig of the wrong shape raises in the client library and here.
_MALFORMED_KUBECONFIG = (
    AttributeError,
    IndexError,
    KeyError,
    RecursionError,
    TypeError,
    ValueError,
)
#: How error messages name what the API server sent.
_ANSWER = "the server's answer"


class ClusterReader:
    """Reads objects through the operator's transport (``api.KubeApi``); see
    ``objects.ObjectReader``."""

    def __init__(
        self,
        api_client: k8s_client.ApiClient,
        *,
        request_timeout: float | None = None,
        header_lines: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._api = KubeApi(api_client, request_timeout, decode=_decoded, header_lines=header_lines)

    @classmethod
    def from_flags(cls, flags: ConnectionFlags) -> tuple["ClusterReader", str]:
        """A reader configured by kubectl's flags, and the namespace those flags select."""
        timeout = parse_request_timeout(flags.request_timeout)
        api_client, namespace = api_client_from_flags(flags)
        # The API server reads every Impersonate-Group line as one group: one line per value.
        lines = _impersonation_lines(flags)
        return cls(api_client, request_timeout=timeout, header_lines=lines), namespace

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        path = f"{resource.collection(require_namespace(resource, namespace))}/{name}"
        try:
            answer = self._read(path)
        except NotFound as exc:
            if exc.name == name:
                raise NotFoundError(resource, name) from exc
            raise self._read_error(exc) from exc
        return _object(answer, _ANSWER)

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        page_size: int = 500,
        limit: int | None = None,
    ) -> ObjectList:
        path = resource.collection(namespace if resource.namespaced else None)
        items: ObjectList = []
        token: str | None = None
        while True:
            query = {"limit": str(page_size)}
            if token is not None:
                query["continue"] = token
            try:
                answer = self._read(path, query)
            except NotFound as exc:
                raise self._read_error(exc) from exc
            page_items, token = _page(answer)
            items.extend(page_items)
            if limit is not None and (len(items) > limit or (token and len(items) >= limit)):
                raise too_many_objects(resource, limit)
            if token is None:
                return items

    def _read(self, path: str, query: dict[str, str] | None = None) -> Any:
        """One GET's decoded answer (a JSON tree); a failure leaves as ``ReadError`` in
        kubectl's words, except NotFound, which the caller words."""
        try:
            return self._api.request("GET", path, query=query)
        except NotFound:
            raise
        except ApiError as exc:
            raise self._read_error(exc) from exc
        except DocumentError as exc:
            raise ReadError(exc.where(_ANSWER)) from None
        except ValueError as exc:  # UnicodeDecodeError too
            raise ReadError(f"{_ANSWER} is not JSON: {_one_line(exc)}") from None

    def _read_error(self, exc: ApiError) -> ReadError:
        if isinstance(exc, Unreachable):
            return _transport_error(exc, self._api.host)
        if exc.from_server:
            return ReadError(_one_line(exc.message))
        return ReadError(f"the server responded with HTTP {exc.status} {exc.phrase}".strip())


def _decoded(body: bytes) -> Any:
    return json_tree(decode_json(body.decode("utf-8")))


def _object(answer: Any, where: str) -> dict[str, Any]:
    """``answer`` if it is an object an API server could hold, else ReadError."""
    try:
        return checked_identity(checked_object(answer))
    except DocumentError as exc:
        raise ReadError(exc.where(where)) from None


def _page(answer: Any) -> tuple[ObjectList, str | None]:
    """A list answer's objects and its continue token, or ReadError naming the bad field."""
    if not isinstance(answer, dict):
        raise ReadError(f"{_ANSWER} is not a mapping")
    items, meta = answer.get("items"), answer.get("metadata")
    token = meta.get("continue") if isinstance(meta, dict) else None
    for path, value, expected, holds in (
        ("items", items, "a list", isinstance(items, list | None)),
        ("metadata", meta, "an object", isinstance(meta, dict | None)),
        ("metadata.continue", token, "a string", isinstance(token, str | None)),
    ):
        if not holds:
            raise ReadError(f"{_ANSWER}: {path}: must be {expected} (got {shown(value)})")
    found = [_object(item, f"{_ANSWER} item {n}") for n, item in enumerate(items or [], 1)]
    return found, token or None


def api_client_from_flags(flags: ConnectionFlags) -> tuple[k8s_client.ApiClient, str]:
    """A client for the cluster the flags select, and the namespace to use.

    The namespace is ``-n``, else the kubeconfig context's namespace, else ``default``.
    Impersonation flags that cannot go together are refused here, before anything is read.
    """
    _impersonation_lines(flags)
    configuration = k8s_client.Configuration()
    try:
        context_namespace = _load_kubeconfig(flags, configuration)
    except _MALFORMED_KUBECONFIG as exc:
        # The client library reads a kubeconfig of the wrong shape (a list for a map, a number
        # for a name, nesting past the YAML loader's recursion) with these, not ConfigException.
        raise ReadError(f"invalid kubeconfig: {type(exc).__name__}: {_one_line(exc)}") from None
    _apply_overrides(flags, configuration)
    refresh = configuration.refresh_api_key_hook
    if refresh is not None:
        # The kubeconfig loader refreshes expiring credentials by re-applying the whole
        # kubeconfig (server included): re-apply the flags after it.
        def refresh_then_override(refreshed: k8s_client.Configuration) -> None:
            refresh(refreshed)
            _apply_overrides(flags, refreshed)

        configuration.refresh_api_key_hook = refresh_then_override
    # One request, one answer: a timeout or refusal is reported, not retried three times.
    configuration.retries = False
    if not configuration.verify_ssl:
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    api_client = k8s_client.ApiClient(configuration)
    if flags.as_user:
        api_client.set_default_header("Impersonate-User", flags.as_user)
    if flags.as_uid:
        api_client.set_default_header("Impersonate-Uid", flags.as_uid)
    return api_client, flags.namespace or context_namespace or "default"


def _impersonation_lines(flags: ConnectionFlags) -> list[tuple[str, str]]:
    extra = parse_user_extra(flags.as_user_extra)
    if (flags.as_uid or flags.as_groups or extra) and not flags.as_user:
        raise ReadError("requesting uid, groups or user-extra without impersonating a user")
    lines = [("Impersonate-Group", group) for group in flags.as_groups]
    for key, values in extra.items():
        header = "Impersonate-Extra-" + urllib.parse.quote(key, safe=_HEADER_KEY_SAFE)
        lines.extend((header, value) for value in values)
    return lines


def _load_kubeconfig(flags: ConnectionFlags, configuration: k8s_client.Configuration) -> str | None:
    """Load the selected context (with --cluster/--user applied); return its namespace."""
    paths = flags.kubeconfig or os.environ.get("KUBECONFIG") or _DEFAULT_KUBECONFIG
    if flags.kubeconfig and not os.path.exists(os.path.expanduser(flags.kubeconfig)):
        raise ReadError(f"stat {flags.kubeconfig}: no such file or directory")
    try:
        merged = kube_config.KubeConfigMerger(paths).config
    except (OSError, yaml.YAMLError, ConfigException) as exc:
        raise ReadError(f"invalid kubeconfig: {_one_line(exc)}") from exc
    if merged is None:
        merged = kube_config.ConfigNode("kube-config", {"clusters": [], "contexts": []})
    root: dict[str, Any] = merged.value

    context_name = flags.context or root.get("current-context") or None
    context: dict[str, Any] = {}
    if context_name:
        found = _named(root.get("contexts") or [], context_name)
        if found is None:
            raise ReadError(f'context "{context_name}" does not exist')
        context = dict(found.get("context") or {})
    if flags.cluster and _named(root.get("clusters") or [], flags.cluster) is None:
        raise ReadError(f'no server found for cluster "{flags.cluster}"')
    if flags.user and _named(root.get("users") or [], flags.user) is None:
        raise ReadError(f'auth info "{flags.user}" does not exist')

    cluster = flags.cluster or context.get("cluster")
    if not cluster or _named(root.get("clusters") or [], cluster) is None:
        if not flags.server:
            raise ReadError(
                "no cluster to connect to: set a current context in the kubeconfig, "
                "or pass --context, --cluster or --server"
            )
        root.setdefault("clusters", []).append(
            {"name": _FLAGS_ENTRY, "cluster": {"server": flags.server}}
        )
        cluster = _FLAGS_ENTRY
    selected = {"cluster": cluster, "user": flags.user or context.get("user")}
    root.setdefault("contexts", []).append({"name": _FLAGS_ENTRY, "context": selected})
    try:
        loader = kube_config.KubeConfigLoader(
            config_dict=merged, active_context=_FLAGS_ENTRY, config_base_path=None
        )
        loader.load_and_set(configuration)
    except (OSError, ConfigException) as exc:
        raise ReadError(f"invalid kubeconfig: {_one_line(exc)}") from exc
    return context.get("namespace") or None


def _apply_overrides(flags: ConnectionFlags, configuration: k8s_client.Configuration) -> None:
    if flags.server:
        configuration.host = flags.server.rstrip("/")
    if flags.token:
        configuration.api_key = {"BearerToken": f"Bearer {flags.token}"}
        configuration.refresh_api_key_hook = None
    if flags.certificate_authority:
        configuration.ssl_ca_cert = flags.certificate_authority
    if flags.client_certificate:
        configuration.cert_file = flags.client_certificate
    if flags.client_key:
        configuration.key_file = flags.client_key
    if flags.tls_server_name:
        configuration.tls_server_name = flags.tls_server_name
    if flags.insecure_skip_tls_verify:
        configuration.verify_ssl = False


def _named(entries: list[Any], name: str) -> dict[str, Any] | None:
    """The kubeconfig list entry (cluster, context, user) called ``name``."""
    for entry in entries:
        value = entry.value if isinstance(entry, kube_config.ConfigNode) else entry
        if isinstance(value, dict) and value.get("name") == name:
            return value
    return None


def _transport_error(exc: Unreachable, host: str) -> ReadError:
    """kubectl's words for a request that got no answer (the transport typed it: ``TimedOut``,
    else why, in ``__cause__``)."""
    server = urllib.parse.urlsplit(host).netloc or host
    if isinstance(exc, TimedOut):
        return ReadTimeoutError(f"Unable to connect to the server: {server} timed out")
    cause = exc.__cause__
    if isinstance(cause, urllib3.exceptions.NewConnectionError) and isinstance(
        cause.__cause__, ConnectionRefusedError
    ):
        return ReadError(
            f"The connection to the server {server} was refused"
            " - did you specify the right host or port?"
        )
    return ReadError(f"Unable to connect to the server: {_one_line(cause)}")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
