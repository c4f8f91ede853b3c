"""``kubectl-ome``: the kubectl plugin (docs/reference/cli.md).
``kubectl ome runtime explain|effective|impact``.

Argument parsing and the I/O edge only: errors print as ``error: <message>`` on stderr and
exit 1 (never 2, never a traceback); every decision comes from the core.

A command imports what it runs when it runs: ``version``, ``completion`` and help load neither
pydantic nor PyYAML, ``explain -f`` neither the kubernetes client nor the effective report.
Start-up is most of a command's time.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .. import version_line
from .commands import (
    SHELLS,
    DefaultsHelpFormatter,
    Errors,
    Parser,
    RawDescriptionHelpFormatter,
    offer,
    run_command,
)

if TYPE_CHECKING:
    from ..cluster.connection import ConnectionFlags
    from ..cluster.objects import ObjectReader

__all__ = ["build_parser", "main"]


def _errors() -> Errors:
    """What a command fails with for a reason of the user's: ``error: <message>``, exit 1."""
    from ..cluster.manifests import ManifestError
    from ..cluster.objects import ReadError
    from ..core.selection import SelectionError
    from ..models import InvalidResourceError

    return (ReadError, ManifestError, InvalidResourceError, SelectionError)


#: Every command's parser: usage errors exit 1, and help shows the defaults that say something.
_PARSER = functools.partial(Parser, formatter_class=DefaultsHelpFormatter)
_COMPLETION_HELP = """\
bash:        source <(kubectl-ome completion bash)
zsh:         source <(kubectl-ome completion zsh)   (after compinit), or save it as
             _kubectl-ome in a directory of $fpath
kubectl ome: kubectl-ome completion bash > DIR/kubectl_complete-ome &&
             chmod +x DIR/kubectl_complete-ome   (DIR on PATH; kubectl 1.26+ runs it to
             complete `kubectl ome`, in bash, zsh, fish or PowerShell alike)
"""


def _connection_flags(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("-n", "--namespace", help="If present, the namespace scope for this CLI request")
    add("--context", help="The name of the kubeconfig context to use")
    add("--kubeconfig", help="Path to the kubeconfig file to use for CLI requests")
    add("--cluster", help="The name of the kubeconfig cluster to use")
    add("--user", help="The name of the kubeconfig user to use")
    add("-s", "--server", help="The address and port of the Kubernetes API server")
    add("--token", help="Bearer token for authentication to the API server")
    add("--certificate-authority", help="Path to a cert file for the certificate authority")
    add("--client-certificate", help="Path to a client certificate file for TLS")
    add("--client-key", help="Path to a client key file for TLS")
    add("--tls-server-name", help="Server name to use for server certificate validation")
    add(
        "--insecure-skip-tls-verify",
        action="store_true",
        help="If true, the server's certificate will not be checked for validity",
    )
    add("--as", dest="as_user", help="Username to impersonate for the operation")
    add("--as-uid", help="UID to impersonate for the operation")
    add(
        "--as-group",
        dest="as_groups",
        action="append",
        default=[],
        help="Group to impersonate for the operation (repeatable)",
    )
    add(
        "--as-user-extra",
        action="append",
        default=[],
        help="User extras to impersonate for the operation (repeatable)",
    )
    add(
        "--request-timeout",
        default="0",
        help="The length of time to wait before giving up on a single server request",
    )
    add("--cache-dir", help="Default cache directory (accepted, unused)")
    add(
        "--disable-compression",
        action="store_true",
        help="If true, opt-out of response compression (accepted, unused)",
    )


def _output_flags(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """``-o`` and ``--no-headers``, worded as kubectl words them."""
    output = parser.add_argument(
        "-o",
        "--output",
        default="table",
        help=f"Output format. One of: ({', '.join(formats)}); jsonpath=TEMPLATE as kubectl's",
    )
    offer(output, tuple(f"{f}=" if f == "jsonpath" else f for f in formats))
    parser.add_argument(
        "--no-headers",
        action="store_true",
        help="When using the default or wide output format, don't print headers",
    )


def _state_flag(parser: argparse.ArgumentParser, *names: str, dest: str = "filenames") -> None:
    parser.add_argument(
        *names,
        dest=dest,
        action="append",
        default=[],
        metavar="PATH",
        help="Read objects from these manifests (file, directory or -) instead of a cluster",
    )


def _impact_parser(verbs: Any) -> None:
    impact = verbs.add_parser(
        "impact",
        help="Show which InferenceServices a runtime change moves to another runtime",
        description=(
            "Resolve every InferenceService's runtime before and after a change to the "
            "runtimes, and list those it moves."
        ),
    )
    impact.add_argument(
        "-f",
        "--filename",
        dest="changes",
        action="append",
        default=[],
        metavar="PATH",
        help="The proposed ServingRuntimes and ClusterServingRuntimes (file, directory or -), "
        "created or replaced as given",
    )
    impact.add_argument(
        "--delete",
        dest="deletes",
        action="append",
        default=[],
        metavar="KIND/NAME",
        help="A runtime the change deletes: ClusterServingRuntime/<name> or "
        "ServingRuntime/<namespace>/<name> (repeatable)",
    )
    impact.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        help="Every namespace's InferenceServices, not only the namespace's",
    )
    _output_flags(impact, ("json", "yaml", "name", "jsonpath"))
    impact.add_argument(
        "--fail-on-change",
        action="store_true",
        help="Exit 3 when the change moves some InferenceService",
    )
    _connection_flags(impact)
    _state_flag(impact, "--state")


def build_parser() -> argparse.ArgumentParser:
    parser = _PARSER(prog="kubectl ome", description="OME model-serving tools for kubectl")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_PARSER)
    runtime = commands.add_parser("runtime", help="Inspect serving runtime decisions")
    verbs = runtime.add_subparsers(dest="verb", required=True, parser_class=_PARSER)

    explain = verbs.add_parser(
        "explain", help="Explain why each serving runtime would or would not be selected"
    )
    explain.add_argument(
        "--isvc", help="Explain runtime selection for this InferenceService's model"
    )
    explain.add_argument(
        "--model", help="Explain runtime selection for this BaseModel/ClusterBaseModel"
    )
    explain.add_argument(
        "--ome-namespace", default="ome", help="Namespace where the OME control plane is installed"
    )
    explain.add_argument(
        "--with-effective",
        action="store_true",
        help="Append bounded effective context for --isvc (auto scan: 1,000 items/2 pages)",
    )
    explain.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        help="Explain --isvc NAME in every namespace that has an InferenceService NAME",
    )
    _output_flags(explain, ("wide", "json", "yaml", "name", "jsonpath"))
    _connection_flags(explain)
    _state_flag(explain, "-f", "--filename")

    effective = verbs.add_parser(
        "effective", help="Show the runtime and deployment modes an InferenceService runs with"
    )
    effective.add_argument("inferenceservice", metavar="INFERENCESERVICE")
    effective.add_argument(
        "--ome-namespace", default="ome", help="Namespace where the OME control plane is installed"
    )
    _output_flags(effective, ("wide", "json", "yaml", "name", "jsonpath"))
    _connection_flags(effective)
    _state_flag(effective, "-f", "--filename")
    _impact_parser(verbs)
    commands.add_parser("version", help="Print the version of kubectl-ome")
    completion = commands.add_parser(
        "completion",
        help="Print a shell completion script (bash or zsh)",
        description="Print a completion script for kubectl-ome and kubectl ome.",
        epilog=_COMPLETION_HELP,
        formatter_class=RawDescriptionHelpFormatter,
    )
    completion.add_argument("shell", choices=SHELLS, help="The shell to complete in")
    return parser


def _flags(args: argparse.Namespace) -> ConnectionFlags:
    from ..cluster.connection import ConnectionFlags

    return ConnectionFlags(
        namespace=args.namespace,
        context=args.context,
        kubeconfig=args.kubeconfig,
        cluster=args.cluster,
        user=args.user,
        server=args.server,
        token=args.token,
        certificate_authority=args.certificate_authority,
        client_certificate=args.client_certificate,
        client_key=args.client_key,
        tls_server_name=args.tls_server_name,
        insecure_skip_tls_verify=args.insecure_skip_tls_verify,
        as_user=args.as_user,
        as_uid=args.as_uid,
        as_groups=tuple(args.as_groups),
        as_user_extra=tuple(args.as_user_extra),
        request_timeout=args.request_timeout,
        cache_dir=args.cache_dir,
        disable_compression=args.disable_compression,
    )


def _reader(args: argparse.Namespace, stdin: TextIO, stderr: TextIO) -> tuple[ObjectReader, str]:
    """Manifests with ``-f`` (no cluster contacted, namespace ``-n`` else ``default``; what a
    cluster would not hold as written is a ``Warning:`` line on stderr), else the cluster the
    kubeconfig flags point at."""
    if args.filenames:
        from ..cluster.manifests import ManifestReader

        namespace = args.namespace or "default"
        reader = ManifestReader.from_paths(
            args.filenames,
            stdin,
            default_namespace=namespace,
            warn=lambda line: print(line, file=stderr),
        )
        return reader, namespace
    from ..cluster.reading import ClusterReader  # imports the kubernetes client only when needed

    return ClusterReader.from_flags(_flags(args))


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    if args.command == "version":
        stdout.write(version_line("kubectl-ome"))
        return 0
    if args.command == "completion":
        from .completion import completion_script

        stdout.write(completion_script(build_parser(), args.shell))
        return 0
    if args.verb == "explain":
        return _run_explain(args, stdin, stdout, stderr)
    if args.verb == "impact":
        return _run_impact(args, stdin, stdout, stderr)
    from .effective import run_effective

    reader, namespace = _reader(args, stdin, stderr)
    return run_effective(
        args.inferenceservice,
        args.output,
        args.ome_namespace,
        reader,
        namespace,
        stdout,
        stderr,
        no_headers=args.no_headers,
    )


def _run_explain(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from .explain import ExplainRequest, run_explain

    request = ExplainRequest(
        args.model,
        args.isvc,
        args.ome_namespace,
        args.with_effective,
        args.output,
        all_namespaces=args.all_namespaces,
        namespace_flag=args.namespace,
        no_headers=args.no_headers,
    )
    request.validate()  # before any read: a usage error needs no cluster
    reader, namespace = _reader(args, stdin, stderr)
    if request.all_namespaces:
        from .all_namespaces import explain_all_namespaces

        return explain_all_namespaces(request, reader, stdout, stderr)
    return run_explain(request, reader, namespace, stdout, stderr)


def _run_impact(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from .impact import ImpactRequest, run_impact

    request = ImpactRequest(
        tuple(args.changes),
        tuple(args.deletes),
        args.all_namespaces,
        args.namespace,
        args.output,
        args.fail_on_change,
        args.no_headers,
    )
    request.validate()
    reader, namespace = _reader(args, stdin, stderr)
    return run_impact(request, reader, namespace, stdin, stdout, stderr)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    return run_command(
        build_parser(), _run, argv, _errors, stdin=stdin, stdout=stdout, stderr=stderr
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
