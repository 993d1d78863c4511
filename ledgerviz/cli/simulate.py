"""``ledgerviz simulate``: write the ledger of a named fault-injection scenario."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ledgerviz.simulate import SCENARIOS, write_scenario


def register(subparsers: Any) -> None:
    """Add the ``simulate`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "simulate",
        help="write a ledger from the deterministic reference agent loop",
        description="Run the scripted reference agent loop for a named scenario and write "
        "its ledger (a folder of ledgers for multi-session scenarios). Same scenario and "
        "seed give byte-identical files.",
    )
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--scenario", metavar="NAME", help="scenario to run (see --list)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--turns",
        type=int,
        default=None,
        help="number of ordinary turns (default: the scenario's own)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="file to write (a folder for multi-session scenarios)",
    )
    parser.set_defaults(run=run)


def list_scenarios() -> str:
    """Return one line per scenario: name, default turns, what it shows."""
    width = max(len(name) for name in SCENARIOS)
    lines = []
    for scenario in SCENARIOS.values():
        folder = " [folder]" if scenario.multi_session else ""
        lines.append(f"{scenario.name:<{width}}  {scenario.description}{folder}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the command described by ``args``; return the exit code."""
    if args.list:
        print(list_scenarios())
        return 0
    if not args.scenario or not args.output:
        print("ledgerviz simulate: give --scenario NAME and -o PATH, or --list", file=sys.stderr)
        return 2
    try:
        written = write_scenario(args.scenario, Path(args.output), seed=args.seed, turns=args.turns)
    except ValueError as error:  # UnknownScenario included
        print(f"ledgerviz simulate: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0
