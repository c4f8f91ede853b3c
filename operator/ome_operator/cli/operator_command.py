"""``ome-operator``: ``run`` starts the operator; ``render`` prints what it would do (S16.2).

Errors print ``error: <message>`` on stderr and exit 1, never a traceback.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..cluster.manifests import ManifestError, load_manifests
from ..core.operator_config import ConfigError
from ..models import InvalidResourceError
from ..settings import RunOptions, parse_bind_address, run_option_problems
from .commands import Parser, UsageError, run_command
from .render import format_report, render_report

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="ome-operator", description="The OME model-serving operator")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    run = commands.add_parser("run", help="Run the operator against the current cluster")
    run.add_argument(
        "-n",
        "--namespace",
        dest="namespaces",
        action="append",
        default=[],
        help="Watch only this namespace (repeatable); default: all namespaces",
    )
    run.add_argument(
        "--operator-namespace",
        default=os.environ.get("POD_NAMESPACE", "ome"),
        help="Namespace of the inferenceservice-config ConfigMap",
    )
    run.add_argument(
        "--metrics-bind-address",
        default=":8080",
        help="Address of the Prometheus /metrics endpoint; 0 disables it",
    )
    run.add_argument(
        "--health-probe-bind-address",
        default=":8081",
        help="Address of the /healthz liveness endpoint; 0 disables it",
    )
    run.add_argument("--webhook-port", type=int, default=9443, help="Admission webhook port")
    run.add_argument(
        "--webhook-bind-address", default="0.0.0.0", help="Address the webhook listens on"
    )
    run.add_argument(
        "--webhook-host", default=None, help="An extra host name the managed certificate covers"
    )
    run.add_argument(
        "--webhook-cert-dir",
        default=os.environ.get("WEBHOOK_CERT_DIR"),
        help="Directory holding tls.crt and tls.key (e.g. from cert-manager); default: the "
        "operator keeps its own certificate in a Secret and injects the CA bundle",
    )
    run.add_argument(
        "--webhook-secret",
        default="ome-webhook-server-cert",
        help="Secret (operator namespace) holding the managed webhook certificate",
    )
    run.add_argument(
        "--webhook-configuration",
        default="ome-webhook-server",
        help="ValidatingWebhookConfiguration whose caBundle the operator keeps",
    )
    run.add_argument(
        "--config-cache-ttl",
        type=float,
        default=30.0,
        help="Seconds between re-reads of the operator configuration",
    )
    run.add_argument("--workers", type=int, default=4, help="Concurrent reconciles")
    run.add_argument("--log-format", choices=("json", "plain", "full"), default="json")
    run.add_argument("-v", "--verbose", action="store_true")

    render = commands.add_parser(
        "render",
        help="Print the admission answer, objects, status, events and logs per "
        "InferenceService in the manifests, without a cluster",
    )
    render.add_argument(
        "-f",
        "--filename",
        dest="filenames",
        action="append",
        default=[],
        required=True,
        help="A manifest file, a directory, or - for stdin",
    )
    render.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    render.add_argument(
        "--now", default=None, help="RFC 3339 time used for lastTransitionTime (default: now)"
    )
    return parser


class NoClusterError(RuntimeError):
    """``run`` found no credentials for a cluster (in-cluster or a kubeconfig)."""


def _run(args: argparse.Namespace) -> int:
    import kopf  # the operator's dependencies load only for `run`

    from .. import handlers  # noqa: F401  (registers the handlers)
    from ..cluster.credentials import credentials_problem

    options = RunOptions(
        namespaces=tuple(args.namespaces),
        operator_namespace=args.operator_namespace,
        metrics_bind_address=args.metrics_bind_address,
        health_probe_bind_address=args.health_probe_bind_address,
        webhook_port=args.webhook_port,
        webhook_bind_address=args.webhook_bind_address,
        webhook_host=args.webhook_host,
        webhook_cert_dir=args.webhook_cert_dir,
        webhook_secret=args.webhook_secret,
        webhook_configuration=args.webhook_configuration,
        config_cache_ttl=args.config_cache_ttl,
        workers=args.workers,
    )
    problems = run_option_problems(options)
    if problems:
        raise UsageError("; ".join(problems))
    problem = credentials_problem()
    if problem is not None:
        raise NoClusterError(problem)
    kopf.configure(verbose=args.verbose, log_format=kopf.LogFormat[args.log_format.upper()])
    probe = parse_bind_address(options.health_probe_bind_address)
    liveness = f"http://{probe[0]}:{probe[1]}/healthz" if probe else None
    kopf.run(
        standalone=True,
        clusterwide=not options.namespaces,
        namespaces=options.namespaces,
        liveness_endpoint=liveness,
        memo=kopf.Memo(options=options),
    )
    return 0


def _render(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    now = args.now or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        datetime.datetime.fromisoformat(now.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f'--now "{now}" is not an RFC 3339 time, e.g. 2026-01-01T00:00:00Z'
        ) from None
    report = render_report(load_manifests(args.filenames, stdin), now=now)
    stdout.write(format_report(report, args.output))
    return 0


def _dispatch(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, _: TextIO) -> int:
    return _run(args) if args.command == "run" else _render(args, stdin, stdout)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    return run_command(
        build_parser(),
        _dispatch,
        argv,
        (ManifestError, InvalidResourceError, ConfigError, NoClusterError),
        usage_status=2,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
