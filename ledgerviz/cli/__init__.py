"""The ``ledgerviz`` command: one sub-command per module in this package."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

COMMANDS = ("check", "repair", "fork", "simulate", "report", "export")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="ledgerviz",
        description="Read, check, repair and draw agent session ledgers.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"ledgerviz.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code."""
    args = build_parser().parse_args(argv)
    return int(args.run(args))
