"""``ledgerviz simulate``: write the ledger of a named fault-injection scenario."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ledgerviz.cli.output import (
    OUTPUT_ERROR_EXIT,
    OutputError,
    add_output_arguments,
    open_output,
)
from ledgerviz.cli.text import say_error, terminal_safe
from ledgerviz.ledger.overwrite import ledger_held, refusal
from ledgerviz.progress import TURNS_THRESHOLD, progress
from ledgerviz.simulate import SCENARIOS, write_scenario
from ledgerviz.simulate.writer import watching


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
    add_output_arguments(
        parser, default=None, what="file to write (a folder for multi-session scenarios)"
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
        say_error("simulate", "give --scenario NAME and -o PATH, or --list")
        return 2
    scenario = SCENARIOS.get(args.scenario)
    try:
        if scenario is not None and scenario.multi_session:
            written = _write_folder(args)
        else:
            written = [_write_file(args)]
    except ValueError as error:  # UnknownScenario included
        say_error("simulate", error)
        return 2
    except OutputError as error:
        say_error("simulate", error)
        return OUTPUT_ERROR_EXIT
    for shown in written:
        print(f"wrote {terminal_safe(shown)}", file=sys.stderr if shown == "stdout" else sys.stdout)
    return 0


def _write_file(args: argparse.Namespace) -> str:
    """Write a one-file scenario atomically to ``args.output``; return where it went."""
    output = open_output(args.output, follow_symlinks=args.follow_symlinks)
    with output.writing() as temporary, _turns_drawn(args):
        write_scenario(args.scenario, temporary, seed=args.seed, turns=args.turns)
    return output.shown


@contextmanager
def _turns_drawn(args: argparse.Namespace) -> Iterator[None]:
    """Draw a bar over the turns the scenario ends, where someone watches a long run."""
    scenario = SCENARIOS.get(args.scenario)  # an unknown one is refused by write_scenario
    default = scenario.default_turns if scenario is not None else None
    turns = default if args.turns is None else args.turns
    with progress(turns, TURNS_THRESHOLD, "simulating", unit="turn") as step:
        if step is None:
            yield
            return

        def count_turn_ends(event: dict[str, Any]) -> None:
            if event["type"] == "turn/end":
                step(1)

        with watching(count_turn_ends):
            yield


def _write_folder(args: argparse.Namespace) -> list[str]:
    """Write a multi-session scenario into the folder ``args.output``; return the files.

    The ledgers are written into a staging folder inside it first, then moved into place,
    none of them if one would replace a file holding a ledger (``overwrite.ledger_held``).
    """
    if args.output == "-":
        raise OutputError(f"scenario {args.scenario!r} writes a folder of ledgers, not one stream")
    folder = Path(args.output)
    if folder.is_symlink() and not args.follow_symlinks:
        raise OutputError(
            f"{folder} is a symbolic link; refusing to write through it (or pass --follow-symlinks)"
        )
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file; scenario {args.scenario!r} writes a folder of "
                         "ledgers")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".ledgerviz-simulate-", dir=folder) as staging:
            written = write_scenario(args.scenario, Path(staging), seed=args.seed,
                                     turns=args.turns)
            places = [folder / path.relative_to(staging) for path in written]
            for place in places:
                held = ledger_held(place)
                if held is not None:
                    raise OutputError(refusal(place, held))
            for path, place in zip(written, places, strict=True):
                place.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, place)
    except OSError as error:
        raise OutputError(f"cannot write {folder}: {error.strerror or error}") from error
    return [str(place) for place in places]
