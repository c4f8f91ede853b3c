"""Reading objects from a cluster with the official client: the package's only cluster reads.

``ClusterReader`` implements ``objects.ObjectReader`` over ``CustomObjectsApi``. Every failure
leaves as a ``ReadError`` whose text is the API server's message (or one short sentence for
transport failures), never a traceback. Answers are decoded here, not by the client library
(whose ``json.loads`` stops near 1,000 levels with a RecursionError), with the functions that
decode manifests: up to ``decoding.MAX_DOCUMENT_NESTING`` levels, JSON values only, and every
object with the identity ``decoding.checked_identity`` requires; an answer that is not so is
a ``ReadError`` saying what is wrong with it. ``api_client_from_flags`` turns kubectl's
connection flags into a client without touching the client library's global default
configuration.
"""

import os
import urllib.parse
from typing import Any

import urllib3
import yaml
from kubernetes import client as k8s_client
from kubernetes.client.exceptions import ApiException
from kubernetes.config import kube_config
from kubernetes.config.config_exception import ConfigException

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
    shown_value,
)
from ome_operator.cluster.objects import (
    NotFoundError,
    ObjectList,
    ReadError,
    ReadTimeoutError,
    Resource,
    require_namespace,
    too_many_objects,
)

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
    """Reads objects through ``CustomObjectsApi``; see ``objects.ObjectReader``.

    Any resource of a named API group (``ome.io``, ``apps``...) works; the core group
    (``v1`` pods, configmaps...) has other URLs and is refused.
    """

    def __init__(
        self, api_client: k8s_client.ApiClient, *, request_timeout: float | None = None
    ) -> None:
        self._api = k8s_client.CustomObjectsApi(api_client)
        self._host = api_client.configuration.host
        self._timeout = request_timeout

    @classmethod
    def from_flags(cls, flags: ConnectionFlags) -> tuple["ClusterReader", str]:
        """A reader configured by kubectl's flags, and the namespace those flags select."""
        timeout = parse_request_timeout(flags.request_timeout)
        api_client, namespace = api_client_from_flags(flags)
        return cls(api_client, request_timeout=timeout), namespace

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        _require_group(resource)
        namespace = require_namespace(resource, namespace)
        g, v, p = resource.group, resource.version, resource.plural
        try:
            if namespace is None:
                answer = self._call(self._api.get_cluster_custom_object, g, v, p, name)
            else:
                answer = self._call(
                    self._api.get_namespaced_custom_object, g, v, namespace, p, name
                )
        except ApiException as exc:
            details = _status(exc).get("details")
            if exc.status == 404 and isinstance(details, dict) and details.get("name") == name:
                raise NotFoundError(resource, name) from exc
            raise _api_error(exc) from exc
        return _object(answer, _ANSWER)

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        page_size: int = 500,
        limit: int | None = None,
    ) -> ObjectList:
        _require_group(resource)
        items: ObjectList = []
        token: str | None = None
        while True:
            page_items, token = _page(self._list_page(resource, namespace, page_size, token))
            items.extend(page_items)
            if limit is not None and (len(items) > limit or (token and len(items) >= limit)):
                raise too_many_objects(resource, limit)
            if token is None:
                return items

    def _list_page(
        self, resource: Resource, namespace: str | None, page_size: int, token: str | None
    ) -> Any:
        paging: dict[str, Any] = {"limit": page_size}
        if token is not None:
            paging["_continue"] = token
        g, v, p = resource.group, resource.version, resource.plural
        try:
            if resource.namespaced and namespace:
                return self._call(
                    self._api.list_namespaced_custom_object, g, v, namespace, p, **paging
                )
            return self._call(self._api.list_cluster_custom_object, g, v, p, **paging)
        except ApiException as exc:
            raise _api_error(exc) from exc

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        """Call one API method and decode its answer (a JSON tree); transport failures and
        answers that are not JSON become ``ReadError``, API errors pass."""
        try:
            response = method(
                *args, **kwargs, _request_timeout=self._timeout, _preload_content=False
            )
            body = response.data
        except urllib3.exceptions.HTTPError as exc:
            raise _transport_error(exc, self._host) from exc
        return _decoded(body)


def _decoded(body: bytes) -> Any:
    try:
        return json_tree(decode_json(body.decode("utf-8")))
    except DocumentError as exc:
        raise ReadError(exc.where(_ANSWER)) from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise ReadError(f"{_ANSWER} is not JSON: {_one_line(exc)}") from None


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
            raise ReadError(f"{_ANSWER}: {path}: must be {expected} (got {shown_value(value)})")
    found = [_object(item, f"{_ANSWER} item {n}") for n, item in enumerate(items or [], 1)]
    return found, token or None


def api_client_from_flags(flags: ConnectionFlags) -> tuple[k8s_client.ApiClient, str]:
    """A client for the cluster the flags select, and the namespace to use.

    The namespace is ``-n``, else the kubeconfig context's namespace, else ``default``.
    """
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
    api_client = _ApiClient(configuration, _impersonation_lines(flags))
    if flags.as_user:
        api_client.set_default_header("Impersonate-User", flags.as_user)
    if flags.as_uid:
        api_client.set_default_header("Impersonate-Uid", flags.as_uid)
    return api_client, flags.namespace or context_namespace or "default"


class _ApiClient(k8s_client.ApiClient):
    """An ``ApiClient`` that sends some headers once per value, as impersonation requires.

    The API server reads every ``Impersonate-Group`` line as one group, so several groups
    cannot share one comma-joined header, and default headers are a plain dict.
    """

    def __init__(
        self, configuration: k8s_client.Configuration, header_lines: list[tuple[str, str]]
    ) -> None:
        super().__init__(configuration)
        self._header_lines = header_lines

    def call_api(  # type: ignore[override]
        self,
        method: str,
        url: str,
        header_params: dict[str, str] | None = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> Any:
        headers = urllib3.HTTPHeaderDict(header_params or {})
        for name, value in self._header_lines:
            headers.add(name, value)
        return super().call_api(method, url, headers, body, post_params, _request_timeout)


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


def _require_group(resource: Resource) -> None:
    if not resource.group:
        raise ValueError(f"ClusterReader cannot read the core group's {resource.qualified}")


def _named(entries: list[Any], name: str) -> dict[str, Any] | None:
    """The kubeconfig list entry (cluster, context, user) called ``name``."""
    for entry in entries:
        value = entry.value if isinstance(entry, kube_config.ConfigNode) else entry
        if isinstance(value, dict) and value.get("name") == name:
            return value
    return None


def _status(exc: ApiException) -> dict[str, Any]:
    """The ``kind: Status`` body of an API error, or ``{}`` when there is none."""
    body = exc.body.decode(errors="replace") if isinstance(exc.body, bytes) else exc.body
    try:
        status = decode_json(body if isinstance(body, str) else "")
    except ValueError:  # not JSON, or nested too deeply: no Status to read
        return {}
    return status if isinstance(status, dict) else {}


def _api_error(exc: ApiException) -> ReadError:
    message = _status(exc).get("message")
    if isinstance(message, str) and message.strip():
        return ReadError(_one_line(message))
    if not exc.status:
        return ReadError(f"Unable to connect to the server: {_one_line(exc.reason)}")
    return ReadError(f"the server responded with HTTP {exc.status} {exc.reason or ''}".strip())


def _transport_error(exc: urllib3.exceptions.HTTPError, host: str) -> ReadError:
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        return _transport_error(exc.reason, host)
    server = urllib.parse.urlsplit(host).netloc or host
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        if isinstance(exc.__cause__, ConnectionRefusedError):
            return ReadError(
                f"The connection to the server {server} was refused"
                " - did you specify the right host or port?"
            )
    elif isinstance(exc, urllib3.exceptions.TimeoutError):
        return ReadTimeoutError(f"Unable to connect to the server: {server} timed out")
    return ReadError(f"Unable to connect to the server: {_one_line(exc)}")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
