"""``ome-operator``: ``run`` starts the operator; ``render`` prints what it would do
(docs/reference/cli.md, ome-operator render).

Errors print ``error: <message>`` on stderr and exit 1, never a traceback. Each command imports
what it runs when it runs (``render`` the core, ``run`` kopf and the handlers).
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from typing import TextIO

from . import version_line
from .cli.commands import (
    DefaultsHelpFormatter,
    Errors,
    Parser,
    UsageError,
    collect_as_usual,
    run_command,
)
from .settings import RunOptions, add_run_flags, parse_bind_address, run_option_problems

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="ome-operator", description="The OME model-serving operator")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    with_defaults = {"formatter_class": DefaultsHelpFormatter}  # help shows what each defaults to
    run = commands.add_parser(
        "run", help="Run the operator against the current cluster", **with_defaults
    )
    add_run_flags(run)
    run.add_argument(
        "--log-format",
        choices=("json", "plain", "full"),
        default="json",
        help="How log records are written (kopf's log formats)",
    )
    run.add_argument("-v", "--verbose", action="store_true", help="Debug-level logging")

    render = commands.add_parser(
        "render",
        help="Print the admission answer, objects, status, events and logs per "
        "InferenceService in the manifests, without a cluster",
        **with_defaults,
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
    render.add_argument(
        "-o",
        "--output",
        choices=("yaml", "json", "summary"),
        default="yaml",
        help="yaml or json: the whole report; summary: one line per InferenceService "
        "(default: %(default)s)",
    )
    render.add_argument(
        "--fail-on-denied",
        action="store_true",
        help=f"Exit {DENIED_EXIT} when admission denies an InferenceService, or Pod Security "
        "refuses its pods (for CI), naming each on stderr",
    )
    commands.add_parser("version", help="Print the version of ome-operator")
    render.add_argument(
        "--now", default=None, help="RFC 3339 time used for lastTransitionTime (default: now)"
    )
    render.add_argument(
        "--gang-placement",
        choices=("off", "on"),
        default="off",
        help="on: print what the operator writes where the cluster serves PodGroups (each "
        "multi-pod OMENative Instance's PodGroup, joined by its pods) (default: %(default)s)",
    )
    return parser


class NoClusterError(RuntimeError):
    """``run`` found no credentials for a cluster (in-cluster or a kubeconfig)."""


class StartupError(RuntimeError):
    """``run`` could not start: the start-up refused the configuration (its message says why)."""


def _run(args: argparse.Namespace) -> int:
    import kopf  # the operator's dependencies load only for `run`

    from . import handlers  # noqa: F401  (registers the handlers)
    from .cluster.credentials import credentials_problem
    from .models.resources import build_validators

    options = RunOptions.from_args(args)
    problems = run_option_problems(options)
    if problems:
        raise UsageError("; ".join(problems))
    problem = credentials_problem()
    if problem is not None:
        raise NoClusterError(problem)
    build_validators()
    collect_as_usual()
    kopf.configure(verbose=args.verbose, log_format=kopf.LogFormat[args.log_format.upper()])
    probe = parse_bind_address(options.health_probe_bind_address)
    liveness = f"http://{probe[0]}:{probe[1]}/healthz" if probe else None
    memo = kopf.Memo(options=options)
    try:
        kopf.run(
            standalone=True,
            clusterwide=not options.namespaces,
            namespaces=options.namespaces,
            liveness_endpoint=liveness,
            memo=memo,
        )
    except Exception:
        failure = memo.get("startup_failure")
        if failure is None:
            raise
        raise StartupError(failure) from None
    return 0


#: Exit code of ``render --fail-on-denied`` when admission denies an InferenceService or Pod
#: Security refuses its pods.
DENIED_EXIT = 3


def _render(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    now = args.now or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        datetime.datetime.fromisoformat(now.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f'--now "{now}" is not an RFC 3339 time, e.g. 2026-01-01T00:00:00Z'
        ) from None
    from .cli.render import denied, format_report, is_ome, pods_refused, render_report
    from .cluster.manifests import read_stored_manifests

    def warn(line: object) -> None:
        stderr.write(f"{line}\n")

    found, notes = read_stored_manifests(args.filenames, stdin, "default", checked=is_ome)
    for note in notes:
        warn(note)
    objects, sources = [obj for _, obj in found], [where for where, _ in found]
    gang = args.gang_placement == "on"
    report = render_report(objects, now=now, sources=sources, warn=warn, gang=gang)
    stdout.write(format_report(report, args.output))
    refused, pods = denied(report), pods_refused(report)
    unserved = [note.where for note in notes if note.looks_ome]
    if args.fail_on_denied and (refused or pods or unserved):
        total = len(report["items"])
        if refused:
            stderr.write(f"render: admission denies {len(refused)} of {total} InferenceServices: ")
            stderr.write(", ".join(refused) + "\n")
        if pods:
            stderr.write(f"render: Pod Security refuses the pods of {len(pods)} of {total} ")
            stderr.write("InferenceServices: " + ", ".join(pods) + "\n")
        if unserved:
            stderr.write(f"render: {_objects(len(unserved))} of a kind the ome.io CRDs do not ")
            stderr.write("serve: " + ", ".join(unserved) + "\n")
        return DENIED_EXIT
    return 0


def _objects(count: int) -> str:
    return f"{count} object" if count == 1 else f"{count} objects"


def _errors() -> Errors:
    """What a command fails with for a reason of the user's: ``error: <message>``, exit 1."""
    from .cluster.manifests import ManifestError
    from .core.operator_config import ConfigError
    from .models import InvalidResourceError

    return (ManifestError, InvalidResourceError, ConfigError, NoClusterError, StartupError)


def _dispatch(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    if args.command == "version":
        stdout.write(version_line("ome-operator"))
        return 0
    return _run(args) if args.command == "run" else _render(args, stdin, stdout, stderr)


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
        _errors,
        usage_status=2,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
