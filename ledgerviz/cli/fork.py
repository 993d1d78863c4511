"""``ledgerviz fork``: write the child session a runtime seeds under the fork policy."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ledgerviz.cli.output import OUTPUT_ERROR_EXIT, OutputError, open_output
from ledgerviz.cli.text import say_error, shown_id, terminal_safe
from ledgerviz.wording import counted


def register(subparsers: Any) -> None:
    """Add the ``fork`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "fork",
        help="write the child session seeded from a ledger's trustworthy prefix "
        "(the parent is untouched)",
        description="Write the child session the runtime's fork seed builds (LEDGER_FORMAT "
        "§11): the parent's events up to the boundary, session/end-seed {inherited: true}, "
        "then the forked closers. Without --at the boundary is the fork policy's: the event "
        "before the assistant message that requested the first dispatched call without a "
        "result. The parent file is never modified.",
    )
    parser.add_argument("path", metavar="PATH", help="one ledger file (the parent)")
    parser.add_argument(
        "-o",
        "--output",
        metavar="CHILD",
        required=True,
        help="the child ledger to write ('-' for stdout); never an existing file or the input",
    )
    parser.add_argument(
        "--at", metavar="SEQ", type=int, help="fork at this seq of the parent instead"
    )
    parser.add_argument(
        "--id", metavar="ID", help="the child's session id (default: <parent id>-fork-<SEQ>)"
    )
    parser.add_argument(
        "--created-at",
        metavar="MS",
        type=int,
        help="the child's createdAt, epoch milliseconds (default: now)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the fork child of ``args.path``; return the exit code."""
    from ledgerviz.ledger import LedgerError, UnreadableSourceError
    from ledgerviz.recovery import ForkRefused
    from ledgerviz.streams.fork_file import NotOneFile, write_fork

    created_at = args.created_at if args.created_at is not None else time.time_ns() // 1_000_000
    try:
        output = open_output(args.output, inputs=[args.path], overwrite=False)
        with output.writing_text() as child:
            written = write_fork(args.path, child.write, args.at, session_id=args.id,
                                 created_at=created_at)
    except (OutputError, UnreadableSourceError, NotOneFile) as error:  # exit 2: the table
        say_error("fork", error)
        return OUTPUT_ERROR_EXIT
    except (LedgerError, ForkRefused) as error:
        say_error("fork", error)
        return 1
    print(
        terminal_safe(
            f"wrote {output.shown}: session {shown_id(written.header['id'])}, "
            f"{counted(written.inherited, 'inherited event')}, seed marker at seq "
            f"{written.marker_seq}, {counted(written.closers, 'forked closer')}"
        ),
        file=sys.stderr if output.target is None else sys.stdout,
    )
    return 0
