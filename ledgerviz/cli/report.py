"""``ledgerviz report``: write a self-contained HTML report of one or more ledgers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ledgerviz.recovery.analysis import POLICIES


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
    parser.add_argument("-o", "--output", default="report.html",
                        help="where to write the report (default: report.html)")
    parser.add_argument("--examples", action="store_true",
                        help="include the example ledgers bundled with ledgerviz")
    parser.add_argument("--policy", choices=POLICIES, default="fork",
                        help="recovery policy the timelines are drawn under (default: fork)")
    parser.add_argument("--axis", choices=("order", "time", "auto"), default="order",
                        help="timeline x axis: event order (default), time, or time when "
                        "every event has one")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the report described by ``args``; return the exit code."""
    from ledgerviz.api import load
    from ledgerviz.examples import example_paths
    from ledgerviz.ledger import LedgerError
    from ledgerviz.report import write_report

    sources: list[str | Path] = [*args.paths, *(example_paths() if args.examples else [])]
    if not sources:
        print("ledgerviz report: give at least one PATH or --examples", file=sys.stderr)
        return 2
    try:
        ledger = load(sources)
    except LedgerError as error:
        print(f"ledgerviz report: {error}", file=sys.stderr)
        return 1
    written = write_report(ledger, args.output, policy=args.policy, axis=args.axis)
    print(f"wrote {written} ({len(ledger.keys)} sessions, policy {args.policy})")
    return 0
