"""``ledgerviz export``: write every frame as a Parquet dataset of size-bounded files."""

from __future__ import annotations

import argparse
from typing import Any

from ledgerviz.cli.output import OUTPUT_ERROR_EXIT
from ledgerviz.cli.source_format import add_format_argument
from ledgerviz.cli.text import say_error, terminal_safe
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.wording import counted, one_or_many


def register(subparsers: Any) -> None:
    """Add the ``export`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "export",
        help="write every frame as Parquet, one dataset per frame, many sessions per file",
        description="Write the events, turns, steps, calls, messages and lineage frames of "
        "every session in PATH as Parquet (DIR/<frame>/part-<run>-<n>.parquet, each file "
        "closed once it holds 128 MiB, session a column) with a manifest of where each "
        "session's rows are. A run is all or nothing. Incremental: files unchanged since "
        "the last export into DIR are skipped; changed and new files are written to a new "
        "part, files no longer given are removed, and a part that held a changed or "
        "removed session is rewritten from its own rows. Exit 0: written; 1: a session could "
        "not be exported or has error-level "
        "diagnostics (it is still exported), or a file found in a folder is no regular file "
        "or cannot be read (skipped, named); 2: a PATH is "
        "unreadable, DIR is unsafe, or pyarrow is missing.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="ledger files, folders or globs")
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="the export folder: new, empty, or an earlier export; never an "
                        "input folder, inside one, or holding an input")
    parser.add_argument("--policy", choices=POLICIES, default="recorded",
                        help="recovery policy the frames are built under (default: recorded)")
    add_format_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Export ``args.paths`` into ``args.output``; return the exit code."""
    from ledgerviz.export import ExportError, export
    from ledgerviz.ledger import UnreadableSourceError

    try:
        summary = export(args.paths, args.output, args.policy, format=args.format)
    except (ExportError, UnreadableSourceError, ImportError) as error:
        say_error("export", error)
        return OUTPUT_ERROR_EXIT
    except OSError as error:
        say_error("export", f"cannot write {args.output}: {error.strerror or error}")
        return OUTPUT_ERROR_EXIT
    except ValueError as error:
        say_error("export", error)
        return 1
    print(
        f"exported {counted(len(summary.sessions), 'session')} to "
        f"{terminal_safe(str(summary.root))} "
        f"(policy {summary.policy}): {len(summary.written)} written, "
        f"{len(summary.unchanged)} unchanged, {len(summary.removed)} removed"
    )
    for path, problem in summary.skipped:
        say_error("export", f"{path}: {problem}")
    if summary.error_sessions:
        say_error(
            "export",
            f"{counted(len(summary.error_sessions), 'written session')} "
            f"{one_or_many(len(summary.error_sessions), 'has', 'have')} error diagnostics "
            "(exported leniently; `ledgerviz check PATH` lists them)",
        )
    return 1 if summary.error_sessions or summary.skipped else 0  # every command's exit codes
