"""The operator's settings, in one place: the flags of ``ome-operator run`` with their defaults
and help (docs/configuration.md), and the ConfigMap that it watches while it runs.

``RunOptions`` is the one declaration of every flag: ``add_run_flags`` builds the command line
from its fields and ``RunOptions.from_args`` reads it back, so a default is written once. What the
ConfigMap ``inferenceservice-config`` holds is ``core.operator_config.OperatorConfig`` (pure, it
holds every default a decision reads); ``ConfigSource`` (``controller.configuring``) reads it from
``operator_namespace`` at start, then keeps it current by a watch, for each pass's snapshot.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from .core.operator_config import CONFIG_MAP_NAME, OperatorConfig

__all__ = [
    "CONFIG_MAP_NAME",
    "OperatorConfig",
    "RunOptions",
    "RunOptionsError",
    "add_run_flags",
    "parse_bind_address",
    "run_option_problems",
]


class RunOptionsError(ValueError):
    """A flag of ``ome-operator run`` that cannot work; the message names the flag and value."""


def _flag(default: Any, help: str, *names: str, env: str | None = None, **argparse: Any) -> Any:
    """A field that is also a flag: its names, help text, the
    environment variable that replaces its default, and any other ``add_argument`` keywords."""
    return field(
        default=default,
        metadata={"names": names, "help": help, "env": env, "argparse": argparse},
    )


#: The values of ``--gang-placement``.
GANG_PLACEMENTS = ("auto", "off")


@dataclass(frozen=True)
class RunOptions:
    """The flags of ``ome-operator run``, with their defaults."""

    namespaces: tuple[str, ...] = _flag(
        (),
        "Watch only this namespace (repeatable); default: all namespaces",
        "-n",
        "--namespace",
        action="append",
    )
    operator_namespace: str = _flag(
        "ome",
        f"Namespace of the {CONFIG_MAP_NAME} ConfigMap (and the managed webhook Secret)",
        "--operator-namespace",
        env="POD_NAMESPACE",
    )
    metrics_bind_address: str = _flag(
        ":8080",
        "Address of the Prometheus /metrics endpoint (and /readyz); 127.0.0.1:PORT serves it "
        "to the pod only; 0 disables it",
        "--metrics-bind-address",
    )
    #: controller-runtime's secure metrics: HTTPS with the webhook's serving certificate, each
    #: scrape's bearer token reviewed (TokenReview) and authorized for GET /metrics
    #: (SubjectAccessReview); /readyz stays open to the kubelet.
    metrics_secure: bool = _flag(
        False,
        "Serve /metrics over HTTPS (the webhook's certificate) only to clients whose bearer "
        "token the API server authenticates and allows to get the non-resource URL /metrics",
        "--metrics-secure",
        action="store_true",
    )
    health_probe_bind_address: str = _flag(
        ":8081",
        "Address of the /healthz liveness endpoint; 0 disables it",
        "--health-probe-bind-address",
    )
    webhook_port: int = _flag(9443, "Admission webhook port", "--webhook-port", type=int)
    webhook_bind_address: str = _flag(
        "0.0.0.0", "Address the webhook listens on", "--webhook-bind-address"
    )
    webhook_host: str | None = _flag(
        None, "An extra host name the managed certificate covers", "--webhook-host"
    )
    #: Without ``tls.crt`` and ``tls.key`` here the operator keeps its own certificate in
    #: ``webhook_secret`` and injects its CA bundle into ``webhook_configuration``.
    webhook_cert_dir: str | None = _flag(
        None,
        "Directory holding tls.crt and tls.key (e.g. from cert-manager); default: the "
        "operator keeps its own certificate in a Secret and injects the CA bundle",
        "--webhook-cert-dir",
        env="WEBHOOK_CERT_DIR",
    )
    webhook_secret: str = _flag(
        "ome-webhook-server-cert",
        "Secret (operator namespace) holding the managed webhook certificate",
        "--webhook-secret",
    )
    webhook_configuration: str = _flag(
        "ome-webhook-server",
        "ValidatingWebhookConfiguration whose caBundle the operator keeps",
        "--webhook-configuration",
    )
    #: A stopping replica fails /readyz at once and keeps answering reviews this long before it
    #: closes the webhook port: the time the Service takes to drop it from its endpoints.
    webhook_shutdown_grace: float = _flag(
        5.0,
        "Seconds a stopping replica keeps answering admission reviews (failing /readyz) "
        "before it closes the webhook port",
        "--webhook-shutdown-grace",
        type=float,
    )
    #: How long the API server may keep a connection open for its next review (it keeps idle
    #: ones up to 90 s); headers and body have the 10 s of a review (docs/webhook.md).
    webhook_idle_timeout: float = _flag(
        30.0,
        "Seconds an open webhook connection may wait for its next review before it is closed",
        "--webhook-idle-timeout",
        type=float,
    )
    config_cache_ttl: float = _flag(
        30.0,
        "Seconds a namespace's labels are held before they are read again (the pod policy's "
        "exceptions select namespaces by label)",
        "--config-cache-ttl",
        type=float,
    )
    workers: int = _flag(4, "Concurrent reconciles", "--workers", type=int)
    #: With several replicas: only the holder of the Lease ``leader_election_id`` (operator
    #: namespace) reconciles; every replica serves the webhook.
    leader_elect: bool = _flag(
        False,
        "Reconcile only while holding the leader Lease (run several replicas for availability; "
        "each serves the webhook)",
        "--leader-elect",
        action="store_true",
    )
    leader_election_id: str = _flag(
        "ome-operator", "Name of the leader Lease in the operator namespace", "--leader-election-id"
    )
    #: The Lease's timings (controller-runtime's flag names; client-go's defaults): a leader
    #: renews every retry period, writes and leads only while its last renewal is younger than
    #: the renew deadline, and another replica takes over a Lease not renewed for the duration.
    leader_elect_lease_duration: float = _flag(
        15.0,
        "Seconds a Lease not renewed is held before another replica may take it over",
        "--leader-elect-lease-duration",
        type=float,
    )
    leader_elect_renew_deadline: float = _flag(
        10.0,
        "Seconds the leader keeps writing and leading since its last renewal; less than the "
        "lease duration",
        "--leader-elect-renew-deadline",
        type=float,
    )
    leader_elect_retry_period: float = _flag(
        2.0,
        "Seconds between attempts to take or renew the Lease; less than the renew deadline",
        "--leader-elect-retry-period",
        type=float,
    )
    #: OME's manager and webhook configurations act on the same ome.io objects
    #: (``core.other_controllers``): the start refuses to run beside them without this.
    allow_other_controller: bool = _flag(
        False,
        "Start even when another controller of ome.io InferenceServices (OME's manager or its "
        "webhook configurations) is in the cluster, logging a warning that names it",
        "--allow-other-controller",
        env="OME_ALLOW_OTHER_CONTROLLER",
        action="store_true",
    )
    #: Multi-pod OMENative Instances are placed whole, by the scheduler's gang scheduling, when
    #: the cluster serves PodGroups (``auto``), or pod by pod (``off``).
    gang_placement: str = _flag(
        "auto",
        "auto: place each multi-pod OMENative Instance whole (a scheduling.k8s.io PodGroup per "
        "Instance) when the cluster serves PodGroups; off: pod by pod",
        "--gang-placement",
        env="OME_GANG_PLACEMENT",
        choices=GANG_PLACEMENTS,
    )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options ``add_run_flags``'s parser read."""
        values = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls)}
        values["namespaces"] = tuple(values["namespaces"] or ())
        return cls(**values)


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Add one flag per ``RunOptions`` field, with its default (or its environment variable's
    value when that is set)."""
    for option in dataclasses.fields(RunOptions):
        meta = option.metadata
        default = option.default
        if meta["env"] is not None:
            default = os.environ.get(meta["env"], default)
            if isinstance(option.default, bool):
                default = _switch(default)
        if meta["argparse"].get("action") == "append":
            default = []
        parser.add_argument(
            *meta["names"],
            dest=option.name,
            default=default,
            help=meta["help"],
            **meta["argparse"],
        )


#: The values an environment variable of an on/off flag may take, whatever their case.
_SWITCH_VALUES = {"true": True, "1": True, "false": False, "0": False}


def _switch(value: bool | str) -> bool | str:
    """An on/off flag's environment variable as a bool; any other value stays a string, which
    ``run_option_problems`` reports."""
    return _SWITCH_VALUES.get(value.lower(), value) if isinstance(value, str) else value


def _switch_problems(options: RunOptions) -> list[str]:
    """The on/off flags whose environment variable said neither true nor false."""
    return [
        f'{f.metadata["env"]} "{getattr(options, f.name)}" is not true or false'
        for f in dataclasses.fields(RunOptions)
        if isinstance(f.default, bool) and not isinstance(getattr(options, f.name), bool)
    ]


def parse_bind_address(
    address: str, flag: str = "--metrics-bind-address"
) -> tuple[str, int] | None:
    """``":8080"`` → ("0.0.0.0", 8080); ``"127.0.0.1:9"`` → ("127.0.0.1", 9); ``"0"`` → None."""
    if address in ("0", ""):
        return None
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise RunOptionsError(
            f'{flag} "{address}" is not HOST:PORT or :PORT with a port from 1 to 65535 '
            "(or 0 to disable)"
        )
    return (host or "0.0.0.0", int(port))


def _bind_address_problem(flag: str, address: str) -> str | None:
    try:
        parse_bind_address(address, flag)
    except RunOptionsError as exc:
        return str(exc)
    return None


def _cert_dir_problem(folder: str | None) -> str | None:
    if folder is None:
        return None
    missing = [f for f in ("tls.crt", "tls.key") if not os.path.isfile(os.path.join(folder, f))]
    return f'--webhook-cert-dir "{folder}" has no {" or ".join(missing)}' if missing else None


def _lease_terms_problem(options: RunOptions) -> str | None:
    duration = options.leader_elect_lease_duration
    deadline = options.leader_elect_renew_deadline
    retry = options.leader_elect_retry_period
    if duration > deadline > retry > 0:
        return None
    return (
        "--leader-elect-lease-duration must be more than --leader-elect-renew-deadline, which "
        "must be more than --leader-elect-retry-period, which must be more than 0 seconds "
        f"(got {duration:g}, {deadline:g} and {retry:g})"
    )


def run_option_problems(options: RunOptions) -> list[str]:
    """Why ``options`` cannot run, one sentence per flag, in flag order (empty: they can)."""
    found = [
        _bind_address_problem("--metrics-bind-address", options.metrics_bind_address),
        _bind_address_problem("--health-probe-bind-address", options.health_probe_bind_address),
        None
        if 1 <= options.webhook_port <= 65535
        else f"--webhook-port must be from 1 to 65535 (got {options.webhook_port})",
        _cert_dir_problem(options.webhook_cert_dir),
        None
        if options.webhook_shutdown_grace >= 0
        else "--webhook-shutdown-grace must be 0 seconds or more "
        f"(got {options.webhook_shutdown_grace:g})",
        None
        if options.webhook_idle_timeout > 0
        else "--webhook-idle-timeout must be more than 0 seconds "
        f"(got {options.webhook_idle_timeout:g})",
        None
        if options.config_cache_ttl > 0
        else f"--config-cache-ttl must be more than 0 seconds (got {options.config_cache_ttl:g})",
        None if options.workers >= 1 else f"--workers must be at least 1 (got {options.workers})",
        _lease_terms_problem(options),
        None
        if options.gang_placement in GANG_PLACEMENTS
        else f'OME_GANG_PLACEMENT "{options.gang_placement}" is not auto or off',
        *_switch_problems(options),
    ]
    return [problem for problem in found if problem is not None]
