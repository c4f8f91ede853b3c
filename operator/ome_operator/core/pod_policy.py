"""The pod policy: what a tenant may not write in an InferenceService's pod fields.

Key ``podPolicy`` of the operator configuration (docs/configuration.md, "podPolicy"). Each rule
is one function over one pod part (a component's pod fields, its leader's or worker's) or one
container (``containers``, ``initContainers``, ``ephemeralContainers``, and the ``runner`` of the
component, its leader and its worker), returning the denials it finds. Only what the
InferenceService itself declares is checked: runtimes are written by platform admins, and the
model volume is the operator's own.

Denials come in a fixed order: components in reconcile order; in each, the component's pod
fields, its runner, the leader's pod fields and runner, then the worker's; in a pod part, the
pod rules in ``RULES`` order, then each container in list order with the container rules in
``RULES`` order. The webhook and the reconciler (``PodPolicyDenied``) give the same sentences.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..models import COMPONENTS, ComponentSpec, InferenceService, LeaderSpec, WorkerSpec
from .label_selectors import LabelSelector, parse_label_selector

__all__ = [
    "RULES",
    "PodPolicy",
    "PodPolicyConfigError",
    "PodPolicyException",
    "component_denials",
    "effective_policy",
    "parse_pod_policy",
    "pod_policy_denials",
]

#: Every rule, in the order a pod part's denials are listed.
RULES = (
    "hostNamespaces",
    "nodeName",
    "serviceAccountName",
    "automountServiceAccountToken",
    "hostPath",
    "privileged",
    "capabilities",
    "privilegeEscalation",
    "runAsRoot",
    "hostPorts",
)
#: Pod Security ``restricted`` allows adding this capability only (``baseline`` a longer list).
DEFAULT_CAPABILITIES = ("NET_BIND_SERVICE",)
#: The account a pod runs as when it names none: naming it changes nothing.
DEFAULT_SERVICE_ACCOUNTS = ("default",)
_HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_PARSE = "unable to parse podPolicy config json"
_FIELDS = ("rules", "allowedCapabilities", "allowedServiceAccountNames", "exceptions")
_EXCEPTION_FIELDS = (
    "namespaceSelector",
    "relax",
    "allowedCapabilities",
    "allowedServiceAccountNames",
)


class PodPolicyConfigError(ValueError):
    """``podPolicy`` cannot be used; the message is the whole log text."""


@dataclass(frozen=True)
class PodPolicyException:
    """Namespaces whose labels match ``selector`` get ``relax``'s rules off and more allowed."""

    selector: LabelSelector
    relax: frozenset[str] = frozenset()
    allowed_capabilities: tuple[str, ...] = ()
    allowed_service_account_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class PodPolicy:
    #: The rules in force (all by default).
    rules: frozenset[str] = frozenset(RULES)
    #: Capabilities ``capabilities.add`` may name.
    allowed_capabilities: tuple[str, ...] = DEFAULT_CAPABILITIES
    #: Service accounts ``serviceAccountName`` may name.
    allowed_service_account_names: tuple[str, ...] = DEFAULT_SERVICE_ACCOUNTS
    exceptions: tuple[PodPolicyException, ...] = ()


# -- parsing ---------------------------------------------------------------------------------


def _invalid(path: str, expected: str, got: Any) -> PodPolicyConfigError:
    return PodPolicyConfigError(
        f"invalid podPolicy config, {path} must be {expected}, got {json.dumps(got)}"
    )


def _known(given: Mapping[str, Any], fields: Sequence[str], where: str) -> None:
    for key in given:
        if key not in fields:
            raise PodPolicyConfigError(
                f"invalid podPolicy config, unknown field {where}{key} (known: {', '.join(fields)})"
            )


def _names(given: Any, path: str) -> tuple[str, ...]:
    if not isinstance(given, list) or not all(isinstance(n, str) and n for n in given):
        raise _invalid(path, "a list of names", given)
    return tuple(given)


def _rule_names(given: Any, path: str) -> frozenset[str]:
    if not isinstance(given, list) or not all(name in RULES for name in given):
        raise _invalid(path, f"a list of rules ({', '.join(RULES)})", given)
    return frozenset(given)


def _rules(given: Any) -> frozenset[str]:
    if not isinstance(given, dict):
        raise _invalid("rules", "an object of rule: true or false", given)
    _known(given, RULES, "rules.")
    for name, value in given.items():
        if not isinstance(value, bool):
            raise _invalid(f"rules.{name}", "true or false", value)
    return frozenset(r for r in RULES if given.get(r, True))


def _exception(given: Any, path: str) -> PodPolicyException:
    if not isinstance(given, dict):
        raise _invalid(path, "an object", given)
    _known(given, _EXCEPTION_FIELDS, f"{path}.")
    if "namespaceSelector" not in given:
        raise PodPolicyConfigError(
            f"invalid podPolicy config, {path}.namespaceSelector must be set"
        )
    try:
        selector = parse_label_selector(given["namespaceSelector"])
    except ValueError as exc:
        raise PodPolicyConfigError(
            f"invalid podPolicy config, {path}.namespaceSelector: {exc}"
        ) from None
    return PodPolicyException(
        selector,
        _rule_names(given.get("relax", []), f"{path}.relax"),
        _names(given.get("allowedCapabilities", []), f"{path}.allowedCapabilities"),
        _names(given.get("allowedServiceAccountNames", []), f"{path}.allowedServiceAccountNames"),
    )


def parse_pod_policy(text: str | None) -> PodPolicy:
    """The policy of ``podPolicy``'s JSON (None: the defaults); PodPolicyConfigError names the
    first field that is wrong."""
    if text is None:
        return PodPolicy()
    try:
        given = json.loads(text)
    except ValueError:
        raise PodPolicyConfigError(_PARSE) from None
    if not isinstance(given, dict):
        raise PodPolicyConfigError(_PARSE)
    _known(given, _FIELDS, "")
    defaults = PodPolicy()
    exceptions = given.get("exceptions", [])
    if not isinstance(exceptions, list):
        raise _invalid("exceptions", "a list", exceptions)
    return PodPolicy(
        _rules(given.get("rules", {})),
        _names(
            given.get("allowedCapabilities", list(defaults.allowed_capabilities)),
            "allowedCapabilities",
        ),
        _names(
            given.get("allowedServiceAccountNames", list(defaults.allowed_service_account_names)),
            "allowedServiceAccountNames",
        ),
        tuple(_exception(e, f"exceptions[{i}]") for i, e in enumerate(exceptions)),
    )


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    """Both lists' names, each once, in order."""
    return tuple(dict.fromkeys((*first, *second)))


def effective_policy(policy: PodPolicy, namespace_labels: Mapping[str, str]) -> PodPolicy:
    """The policy for a namespace with ``namespace_labels``: every matching exception's rules
    relaxed and its names allowed too."""
    result = replace(policy, exceptions=())
    for exception in policy.exceptions:
        if not exception.selector.matches(namespace_labels):
            continue
        result = replace(
            result,
            rules=result.rules - exception.relax,
            allowed_capabilities=_union(
                result.allowed_capabilities, exception.allowed_capabilities
            ),
            allowed_service_account_names=_union(
                result.allowed_service_account_names, exception.allowed_service_account_names
            ),
        )
    return result


# -- the rules -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Denial:
    path: str
    what: str
    rule: str
    allowed: tuple[str, ...] | None = field(default=None)

    def __str__(self) -> str:
        listed = ""
        if self.allowed is not None:
            listed = f"; allowed: {', '.join(self.allowed) or 'none'}"
        return f"{self.path}: {self.what} refused by the pod policy (rule {self.rule}{listed})"


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def _host_namespaces(pod: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    for name in _HOST_NAMESPACES:
        if pod.get(name) is True:
            yield _Denial(f"{path}.{name}", "host namespaces are", "hostNamespaces")


def _node_name(pod: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    if pod.get("nodeName"):
        yield _Denial(f"{path}.nodeName", "choosing the node by name is", "nodeName")


def _service_account(pod: Mapping[str, Any], path: str, policy: PodPolicy) -> Iterator[_Denial]:
    allowed = policy.allowed_service_account_names
    for name in ("serviceAccountName", "serviceAccount"):
        account = pod.get(name)
        if account and account not in allowed:
            what = f"service account {json.dumps(account)} is"
            yield _Denial(f"{path}.{name}", what, "serviceAccountName", allowed)


def _token(pod: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    if pod.get("automountServiceAccountToken") is True:
        what = "mounting the service account token is"
        yield _Denial(f"{path}.automountServiceAccountToken", what, "automountServiceAccountToken")


def _host_path(pod: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    for index, volume in enumerate(_list(pod.get("volumes"))):
        if _dict(volume).get("hostPath") is not None:
            yield _Denial(f"{path}.volumes[{index}].hostPath", "hostPath volumes are", "hostPath")


def _pod_root(pod: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    yield from _root(_dict(pod.get("securityContext")), f"{path}.securityContext")


def _root(context: Mapping[str, Any], path: str) -> Iterator[_Denial]:
    user = context.get("runAsUser")
    if user == 0 and not isinstance(user, bool):
        yield _Denial(f"{path}.runAsUser", "running as root (user 0) is", "runAsRoot")


def _privileged(container: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    if _dict(container.get("securityContext")).get("privileged") is True:
        what = "privileged containers are"
        yield _Denial(f"{path}.securityContext.privileged", what, "privileged")


def _capabilities(container: Mapping[str, Any], path: str, policy: PodPolicy) -> Iterator[_Denial]:
    capabilities = _dict(_dict(container.get("securityContext")).get("capabilities"))
    allowed = policy.allowed_capabilities
    for index, name in enumerate(_list(capabilities.get("add"))):
        if name not in allowed:
            where = f"{path}.securityContext.capabilities.add[{index}]"
            yield _Denial(where, f"capability {name} is", "capabilities", allowed)


def _escalation(container: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    if _dict(container.get("securityContext")).get("allowPrivilegeEscalation") is True:
        where = f"{path}.securityContext.allowPrivilegeEscalation"
        yield _Denial(where, "privilege escalation is", "privilegeEscalation")


def _container_root(container: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    yield from _root(_dict(container.get("securityContext")), f"{path}.securityContext")


def _host_ports(container: Mapping[str, Any], path: str, _: PodPolicy) -> Iterator[_Denial]:
    for index, port in enumerate(_list(container.get("ports"))):
        if _dict(port).get("hostPort"):
            yield _Denial(f"{path}.ports[{index}].hostPort", "host ports are", "hostPorts")


#: (rule, check) of a pod part, then of a container, each in ``RULES`` order.
_POD_RULES = (
    ("hostNamespaces", _host_namespaces),
    ("nodeName", _node_name),
    ("serviceAccountName", _service_account),
    ("automountServiceAccountToken", _token),
    ("hostPath", _host_path),
    ("runAsRoot", _pod_root),
)
_CONTAINER_RULES = (
    ("privileged", _privileged),
    ("capabilities", _capabilities),
    ("privilegeEscalation", _escalation),
    ("runAsRoot", _container_root),
    ("hostPorts", _host_ports),
)


def _container_denials(container: Any, path: str, policy: PodPolicy) -> Iterator[_Denial]:
    for rule, check in _CONTAINER_RULES:
        if rule in policy.rules:
            yield from check(_dict(container), path, policy)


def _part_denials(part: Mapping[str, Any], path: str, policy: PodPolicy) -> Iterator[_Denial]:
    """One pod part (pod fields and containers), then its runner."""
    for rule, check in _POD_RULES:
        if rule in policy.rules:
            yield from check(part, path, policy)
    for name in _CONTAINER_LISTS:
        for index, container in enumerate(_list(part.get(name))):
            yield from _container_denials(container, f"{path}.{name}[{index}]", policy)
    if isinstance(part.get("runner"), Mapping):
        yield from _container_denials(part["runner"], f"{path}.runner", policy)


def _as_written(part: ComponentSpec | LeaderSpec | WorkerSpec) -> Mapping[str, Any]:
    """A component's or leader's or worker's pod fields (kept as written: the model's extras)
    and its runner, without dumping the model."""
    return {**(part.model_extra or {}), "runner": part.runner}


def component_denials(
    component: str, declared: ComponentSpec, policy: PodPolicy
) -> tuple[str, ...]:
    """The denials of one component as the InferenceService declares it, for a namespace's
    effective policy."""
    path = f"spec.{component}"
    found = list(_part_denials(_as_written(declared), path, policy))
    for role in ("leader", "worker"):
        part = getattr(declared, role)
        if part is not None:
            found.extend(_part_denials(_as_written(part), f"{path}.{role}", policy))
    return tuple(map(str, found))


def pod_policy_denials(
    isvc: InferenceService, policy: PodPolicy, namespace_labels: Mapping[str, str]
) -> tuple[str, ...]:
    """Every denial of ``isvc``'s components, in the module's order."""
    effective = effective_policy(policy, namespace_labels)
    found: list[str] = []
    for name in COMPONENTS:
        spec = isvc.spec.component(name)
        if spec is not None:
            found.extend(component_denials(name, spec, effective))
    return tuple(found)
