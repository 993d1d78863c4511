"""``ledgerviz report``: write a self-contained HTML report of one or more ledgers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ledgerviz.cli.output import (
    OUTPUT_ERROR_EXIT,
    Output,
    OutputError,
    add_output_arguments,
    open_output,
)
from ledgerviz.cli.source_format import add_format_argument
from ledgerviz.cli.text import file_uri, say_error, terminal_safe
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES
from ledgerviz.wording import counted


def register(subparsers: Any) -> None:
    """Add the ``report`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report (timelines, unanswered calls, fork points)",
        description="Write one self-contained HTML file (works offline) with, per session: "
        "summary, timeline, unanswered calls, fork points, provider validity, diagnostics.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="ledger files, folders or globs")
    add_output_arguments(parser, default="report.html", what="where to write the report")
    add_format_argument(parser)
    parser.add_argument("--examples", action="store_true",
                        help="include the example ledgers bundled with ledgerviz")
    parser.add_argument("--policy", choices=POLICIES, default=DEFAULT_POLICY,
                        help="recovery policy the timelines are drawn under "
                        f"(default: {DEFAULT_POLICY})")
    parser.add_argument("--axis", choices=("order", "time", "auto"), default="order",
                        help="timeline x axis: event order (default), time, or time when "
                        "every event has one")
    parser.add_argument("--diff", action="store_true",
                        help="given two ledgers of one session each: write their diff (the two "
                        "sessions aligned, where they part, what differs) instead")
    parser.add_argument("--no-pack", dest="packed", action="store_false",
                        help="write every session's summary and tables as plain HTML, readable "
                        "without JavaScript and by diff (by default they are stored compressed "
                        "and unpacked as they scroll into view, so large reports open at once)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the report described by ``args``; return the exit code."""
    from ledgerviz.examples import example_paths
    from ledgerviz.ledger import UnreadableSourceError
    from ledgerviz.report import report_pieces
    from ledgerviz.report.sessions import LedgerFiles

    if args.diff:
        return _run_diff(args)
    sources: list[str | Path] = [*args.paths, *(example_paths() if args.examples else [])]
    if not sources:
        say_error("report", "give at least one PATH or --examples")
        return 2
    try:
        files = LedgerFiles.read(sources, format=args.format)
        output = open_output(args.output, inputs=files.paths,
                             follow_symlinks=args.follow_symlinks)
        pieces = report_pieces(files, policy=args.policy, axis=args.axis, packed=args.packed)
        with output.writing_text() as page:
            page.writelines(pieces)  # never joined into one string
    except (OutputError, UnreadableSourceError) as error:  # a file gone between the reads too
        say_error("report", error)
        return OUTPUT_ERROR_EXIT
    sessions = len(files.keys)
    print(_written_note(output, sessions, args.policy),
          file=sys.stderr if output.target is None else sys.stdout)
    with_errors = sum(files.has_errors)
    if with_errors:
        say_error("report", f"{with_errors} of {counted(sessions, 'session')} have error-level "
                  "diagnostics (listed in the report)")
    return 1 if with_errors else 0


def _run_diff(args: argparse.Namespace) -> int:
    """Write the diff report of the two PATHs; return the exit code."""
    from ledgerviz.api import load
    from ledgerviz.compare import diff
    from ledgerviz.ledger import LedgerError
    from ledgerviz.report.diff import render_diff_report

    if len(args.paths) != 2 or args.examples:
        say_error("report", "--diff takes exactly two PATHs (one session each)")
        return 2
    try:
        output = open_output(args.output, inputs=args.paths,
                             follow_symlinks=args.follow_symlinks)
        result = diff(*(load(path) for path in args.paths), policy=args.policy)
        output.write(render_diff_report(result))
    except (OutputError, LedgerError, ValueError) as error:
        say_error("report", error)
        return OUTPUT_ERROR_EXIT
    shown = terminal_safe(output.shown)
    where = "" if output.target is None else f"; open it in a browser: {file_uri(output.target)}"
    print(f"wrote the diff of the two sessions to {shown}{where}",
          file=sys.stderr if output.target is None else sys.stdout)
    return 0


def _written_note(output: Output, sessions: int, policy: str) -> str:
    """Return the line saying where the report went and how to open it."""
    what = f"({counted(sessions, 'session')}, policy {policy})"
    if output.target is None:
        return f"wrote the report to stdout {what}; save it as .html and open it in a browser"
    shown, uri = terminal_safe(output.shown), file_uri(output.target)
    return f"wrote {shown} {what}; open it in a browser: {uri}"
