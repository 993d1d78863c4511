"""``ledgerviz repair``: print the events a runtime would append to close a ledger."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ledgerviz.cli.text import say_error, terminal_safe
from ledgerviz.recovery.analysis import DEFAULT_POLICY

FORK_MOVED = (
    "the fork policy never appends to the parent ledger: it seeds a new child session. "
    "`ledgerviz fork {path} -o CHILD.jsonl` writes the child; the parent stays as it is"
)


def register(subparsers: Any) -> None:
    """Add the ``repair`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "repair",
        help="print the closers the runtime would append (JSONL on stdout; the file is untouched)",
        description="Read one ledger the way the runtime's recoverable reader does and print, "
        "as JSON lines, the crash closers the runtime would append to it (step/end, "
        "turn/end interrupted, synthetic results for unanswered calls). Appending them "
        "(`>> PATH`) is safe only when the exit code is 0. The file is never modified. "
        "Exit 0: closers printed, or nothing to repair; 1: the ledger must be fixed first "
        "(a torn last line or damaged lines to cut, or a log the runtime refuses; stderr "
        "says what to do, stdout stays empty); 2: PATH cannot be read or bad arguments.",
    )
    parser.add_argument("path", metavar="PATH", help="one ledger file")
    parser.add_argument(
        "--policy",
        choices=("synthesize", "fork"),
        default=DEFAULT_POLICY,
        help="synthesize (default): the runtime's crash closers (the only policy that appends). "
        "fork is not a repair: use `ledgerviz fork`",
    )
    parser.add_argument(
        "--allow-torn-tail",
        action="store_true",
        help="print the closers even though the file ends in a torn line, which you "
        "promise to cut first (stderr says exactly how many bytes, at which offset)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the repair events for ``args.path``; return the exit code."""
    from ledgerviz.ledger import UnreadableSourceError
    from ledgerviz.ledger.reader import read_session
    from ledgerviz.ledger.runtime_read import runtime_read
    from ledgerviz.ledger.sources import SourceProblem, iter_sources
    from ledgerviz.recovery import crash_closers, generation_for

    if args.policy == "fork":
        say_error("repair", FORK_MOVED.format(path=args.path))
        return 2
    try:
        found = list(iter_sources(args.path))
    except UnreadableSourceError as error:
        say_error("repair", error)
        return 2
    if len(found) != 1:
        say_error("repair", f"{args.path} holds {len(found)} ledgers; give one file")
        return 2
    ((path, content),) = found
    if isinstance(content, SourceProblem):
        say_error("repair", f"{path}: {content.message}")
        return 2
    log = read_session(path, content, duplicate_keys=True)
    for diagnostic in log.diagnostics:
        if diagnostic.severity != "info":
            say_error("repair", diagnostic)
    reading = runtime_read(log, content)
    shown = terminal_safe(path)
    if reading.refusal is not None:
        say_error("repair", f"{shown}: {reading.refusal}; nothing printed")
        return 1
    closers = crash_closers(reading.events, generation=generation_for(log.version))
    cut = reading.cut
    if cut is not None and reading.stop is not None:
        say_error(
            "repair",
            f"{shown}: the runtime stops reading at line {cut.line} and would discard lines "
            f"{cut.line}-end ({cut.size} bytes from byte offset {cut.offset}). Keep a copy, "
            f"cut them (`truncate -s {cut.offset} FILE`), then run repair again; nothing printed",
        )
        return 1
    if cut is not None:
        fragment = (
            f"{shown}: the last line is a torn fragment of {cut.size} bytes at byte offset "
            f"{cut.offset}; it must be cut before appending (`truncate -s {cut.offset} FILE`)"
        )
        if not args.allow_torn_tail:
            say_error("repair", f"{fragment}. Then run repair again, or pass --allow-torn-tail "
                      "to print the closers now; nothing printed")
            return 1
        say_error("repair", f"{fragment}, then append the lines printed")
    taken = {event.get("seq") for event in reading.events}
    clash = [event["seq"] for event in closers if event.get("seq") in taken]
    if clash:
        say_error("repair", f"{shown}: closer seqs {clash} are already taken; nothing printed")
        return 1
    if not closers:
        say_error("repair", f"{shown}: nothing to repair (no open turn)")
        return 0
    for event in closers:
        sys.stdout.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    return 0
