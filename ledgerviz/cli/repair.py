"""``ledgerviz repair``: print the events a runtime would append to close a ledger."""

from __future__ import annotations

import argparse
import json
from functools import partial
from itertools import chain
from typing import Any

from ledgerviz.cli.output import write_stdout
from ledgerviz.cli.text import say_error, terminal_safe
from ledgerviz.progress import BYTES_THRESHOLD, progress, source_size
from ledgerviz.recovery.analysis import DEFAULT_POLICY
from ledgerviz.wording import counted

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
    from ledgerviz.ledger.compressed import stream_cut
    from ledgerviz.ledger.fields import EventFields
    from ledgerviz.ledger.reader import READ_BYTES, reported_chunks
    from ledgerviz.ledger.runtime_read import runtime_read
    from ledgerviz.ledger.sources import SourceProblem, iter_source_chunks
    from ledgerviz.recovery import PendingCalls, generation_for
    from ledgerviz.recovery.closers import tail_closers

    if args.policy == "fork":
        say_error("repair", FORK_MOVED.format(path=args.path))
        return 2
    tracker = PendingCalls()

    def use(events: EventFields) -> None:
        tracker.observe_columns(events.types, events.seqs, events.times, events.datas)

    try:
        found = list(iter_source_chunks(args.path, READ_BYTES))
        if len(found) != 1:
            say_error("repair", f"{args.path} holds {len(found)} ledgers; give one file")
            return 2
        ((path, chunks),) = found
        first = next(chunks, b"")
        if isinstance(first, SourceProblem):
            say_error("repair", f"{path}: {first.message}")
            return 2
        end = getattr(chunks, "end", None)  # how a compressed file's stream ended
        chunks = chain([first], chunks)
        with progress(partial(source_size, path), BYTES_THRESHOLD, "reading",
                      unit="B") as step:
            reading = runtime_read(path, reported_chunks(chunks, step), use)
    except UnreadableSourceError as error:
        say_error("repair", error)
        return 2
    for diagnostic in reading.diagnostics:
        if diagnostic.severity != "info":
            say_error("repair", diagnostic)
    shown = terminal_safe(path)
    cut_short = stream_cut(shown, end, strict=False)
    if cut_short:  # the closers of what was read are not those of the file
        say_error("repair", f"{cut_short[0]}; nothing printed")
        return 1
    if reading.refusal is not None:
        say_error("repair", f"{shown}: {reading.refusal}; nothing printed")
        return 1
    cut = reading.cut
    if cut is not None and reading.stop is not None:
        say_error(
            "repair",
            f"{shown}: the runtime stops reading at line {cut.line} and would discard lines "
            f"{cut.line}-end ({counted(cut.size, 'byte')} from byte offset {cut.offset}). Keep "
            f"a copy, cut them (`truncate -s {cut.offset} FILE`), then run repair again; "
            "nothing printed",
        )
        return 1
    if cut is not None:
        fragment = (
            f"{shown}: the last line is a torn fragment of {counted(cut.size, 'byte')} at byte "
            f"offset {cut.offset}; it must be cut before appending "
            f"(`truncate -s {cut.offset} FILE`)"
        )
        if not args.allow_torn_tail:
            say_error("repair", f"{fragment}. Then run repair again, or pass --allow-torn-tail "
                      "to print the closers now; nothing printed")
            return 1
        say_error("repair", f"{fragment}, then append the lines printed")
    # The runtime stops at the first seq out of order, so the events it uses are numbered
    # one after another and the closers, numbered on from the last, take no seq in use.
    closers = tail_closers(tracker, generation=generation_for(reading.version))
    if not closers:
        say_error("repair", f"{shown}: nothing to repair (no open turn)")
        return 0
    write_stdout("".join(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
                         for event in closers).encode("utf-8"))
    return 0
