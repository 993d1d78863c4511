"""The ``--format`` option of the commands that read transcripts (check, report, export)."""

from __future__ import annotations

import argparse

from ledgerviz.ledger.formats import format_named, format_names


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--format NAME``: read every PATH in that format (default: each file's own)."""
    names = format_names()
    described = "; ".join(f"{name}: {format_named(name).description}" for name in names)
    parser.add_argument("--format", choices=names, default=None, metavar="FORMAT",
                        help="read every file in this format instead of the one its content "
                        f"shows ({described})")
