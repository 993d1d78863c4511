"""``ledgerviz otlp``: send sessions as OpenTelemetry traces, or write them as OTLP/JSON."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from ledgerviz.cli.output import OUTPUT_ERROR_EXIT, OutputError, open_output
from ledgerviz.cli.text import say_error, terminal_safe
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES
from ledgerviz.wording import counted


def register(subparsers: Any) -> None:
    """Add the ``otlp`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "otlp",
        help="send sessions as OpenTelemetry traces (OTLP/HTTP), or write them as OTLP/JSON",
        description="Export every session in PATH as one trace (GenAI semantic conventions: "
        "invoke_agent per turn, chat per step, execute_tool per call; recovery facts as "
        "ledgerviz.* attributes) to an OTLP/HTTP endpoint, or to a file of OTLP/JSON lines "
        "that a collector's otlpjsonfile receiver reads. Ids derive from session ids and "
        "seqs: exporting again sends the same spans, never duplicates. Exit 0: sent; 1: a "
        "session has error-level diagnostics (it is still sent); 2: a PATH is unreadable, "
        "the endpoint refused or the file cannot be written, or the SDK is missing.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="ledger files, folders or globs")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--endpoint", metavar="URL",
                        help="OTLP/HTTP endpoint (http://127.0.0.1:4318, or the full "
                        ".../v1/traces URL)")
    target.add_argument("-o", "--output", metavar="FILE", help="write OTLP/JSON lines here")
    parser.add_argument("--policy", choices=POLICIES, default=DEFAULT_POLICY,
                        help=f"recovery policy the spans show (default: {DEFAULT_POLICY})")
    parser.add_argument("--headers", nargs="+", default=[], metavar="K=V",
                        help="HTTP headers sent with every request (an API key, say)")
    parser.set_defaults(run=run)


def parse_headers(pairs: list[str]) -> dict[str, str]:
    """Return ``K=V`` pairs as a dict; raise ValueError naming the first pair without ``=``."""
    headers = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"--headers {pair!r}: expected NAME=VALUE")
        headers[name.strip()] = value
    return headers


def run(args: argparse.Namespace) -> int:
    """Export ``args.paths`` as OTLP; return the exit code."""
    from ledgerviz.export.otlp import OtlpError, export_otlp
    from ledgerviz.ledger import UnreadableSourceError
    from ledgerviz.ledger.sources import expand_found

    # the exporter logs each refused batch; the one line below says so for the command
    logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
    try:
        if args.output is not None:  # never over an input, a folder or through a link
            inputs = [found.path for path in args.paths for found in expand_found(path)]
            open_output(args.output, inputs=inputs)
        summary = export_otlp(args.paths, args.endpoint, output=args.output,
                              policy=args.policy, headers=parse_headers(args.headers))
    except (OtlpError, OutputError, UnreadableSourceError, ImportError, ValueError) as error:
        say_error("otlp", error)
        return OUTPUT_ERROR_EXIT
    except OSError as error:
        say_error("otlp", f"cannot write {args.output}: {error.strerror or error}")
        return OUTPUT_ERROR_EXIT
    print(f"sent {counted(summary.spans, 'span')} of {counted(len(summary.sessions), 'session')}"
          f" to {terminal_safe(summary.target)} (policy {summary.policy})")
    failed = len(summary.error_sessions)
    if failed:
        say_error("otlp", f"{counted(failed, 'session')} {'has' if failed == 1 else 'have'} "
                  "error diagnostics (exported leniently; `ledgerviz check PATH` lists them)")
    return 1 if summary.error_sessions else 0
