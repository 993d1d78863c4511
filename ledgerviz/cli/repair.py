"""``ledgerviz repair``: print the events a runtime would append to close a ledger."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ledgerviz.recovery.analysis import DEFAULT_POLICY

REPAIR_POLICIES = ("synthesize", "fork")


def register(subparsers: Any) -> None:
    """Add the ``repair`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "repair",
        help="print the closers a runtime would append (JSONL on stdout; the file is untouched)",
        description="Compute the events that close an interrupted ledger under a recovery "
        "policy and print them as JSON lines. The ledger file is never modified.",
    )
    parser.add_argument("path", metavar="PATH", help="one ledger file")
    parser.add_argument(
        "--policy",
        choices=REPAIR_POLICIES,
        default=DEFAULT_POLICY,
        help="synthesize (crash closers, the runtime's behaviour; default); "
        "fork appends nothing to the parent: use 'ledgerviz fork' to write the child",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the repair events for ``args.path``; return the exit code."""
    from ledgerviz.ledger import LedgerError, read_sessions
    from ledgerviz.recovery import crash_closers, generation_for

    if args.policy == "fork":
        print(
            "ledgerviz repair: the fork policy never appends to the parent; "
            f"write the seeded child with: ledgerviz fork {args.path} -o CHILD.jsonl",
            file=sys.stderr,
        )
        return 2
    try:
        sessions = read_sessions(args.path)
    except LedgerError as error:
        print(f"ledgerviz repair: {error}", file=sys.stderr)
        return 1
    if len(sessions) != 1:
        print(
            f"ledgerviz repair: {args.path} holds {len(sessions)} ledgers; give one file",
            file=sys.stderr,
        )
        return 2
    (session,) = sessions
    for diagnostic in session.diagnostics:
        if diagnostic.severity == "error":
            print(
                f"ledgerviz repair: {diagnostic.path}:{diagnostic.line}: {diagnostic.message}",
                file=sys.stderr,
            )
    closers = crash_closers(session.events, generation=generation_for(session.version))
    for event in closers:
        sys.stdout.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    return 0
