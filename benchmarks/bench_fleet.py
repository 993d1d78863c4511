"""Fleet benchmark: many small sessions, ledgerviz.load + all frames vs. json + json_normalize.

Run: python benchmarks/bench_fleet.py [--sessions N] [--folder DIR] [--rounds R]

The fleet is written by the simulator (``ledgerviz.simulate``): every single-session
scenario in turn, with 1 or 2 turns and a different seed per session (about 35 events
per session), into DIR (default: a temporary folder; an existing DIR holding the
right number of ledgers is reused). Each route runs in a fresh process (see
``bench_load.py``); the figures are CPU time (user + system, ``time.process_time``),
wall time and peak memory above the start. The target (issue 35) is ledgerviz's CPU time
at most 2.0x the GC-paused floor's, the ratio taken per round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_load import Built, floor_gc_paused_lines, in_fresh_process, load_average, run_route


def write_fleet(folder: Path, sessions: int) -> int:
    """Write ``sessions`` simulated ledgers into ``folder`` (reused if complete); return events."""
    from ledgerviz.simulate import SCENARIOS, write_scenario

    names = [name for name, scenario in SCENARIOS.items() if not scenario.multi_session]
    existing = sorted(folder.glob("*.jsonl"))
    if len(existing) != sessions:
        for stale in existing:
            stale.unlink()
        for number in range(sessions):
            name = names[number % len(names)]
            turns = 1 + number // len(names) % 2
            write_scenario(name, folder / f"{number:05d}-{name}.jsonl", seed=number, turns=turns)
    return sum(len(path.read_bytes().splitlines()) - 1 for path in folder.glob("*.jsonl"))


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl"))


def _complete_lines(folder: Path) -> list[bytes]:
    """Return every newline-terminated line of every file (torn-write tails are dropped)."""
    lines = []
    for path in _files(folder):
        pieces = path.read_bytes().split(b"\n")
        pieces.pop()  # what follows the last newline: empty, or a torn write
        lines.extend(pieces)
    return lines


def floor_gc_paused(folder: Path) -> Built:
    """Read every file and decode every line with orjson, the GC paused: decoding alone."""
    return floor_gc_paused_lines(_complete_lines(folder))


def with_ledgerviz(folder: Path) -> Built:
    """ledgerviz.load of the folder plus every frame (the Ledger kept, see bench_load)."""
    import ledgerviz

    ledger = ledgerviz.load(folder)
    frames = ledger.frames.all()
    return len(frames["events"]), (ledger, frames)


def with_pandas(folder: Path) -> Built:
    """json.loads per complete line of every file, then one json_normalize over all rows."""
    import pandas as pd

    rows = [json.loads(line) for line in _complete_lines(folder)]
    frame = pd.json_normalize(rows)
    return len(frame), (rows, frame)


ROUTES = {"floor_gc_paused": floor_gc_paused, "ledgerviz": with_ledgerviz, "pandas": with_pandas}


def _report(results: list[dict[str, dict[str, float]]], sessions: int) -> None:
    """Print median CPU and wall time per route (and CPU per session) and the median
    per-round CPU ratios."""
    print(f"median of {len(results)} rounds ({load_average()} at the end):")
    cpu = {route: [r[route]["cpu"] for r in results] for route in ROUTES}
    for route in ROUTES:
        wall = statistics.median(r[route]["seconds"] for r in results)
        median = statistics.median(cpu[route])
        print(f"  {route:>16}: {median:6.2f} s CPU  {wall:6.2f} s wall  "
              f"{median / sessions * 1e6:6.0f} µs CPU per session")
    ratios = {
        "ledgerviz / floor_gc_paused": ("ledgerviz", "floor_gc_paused", 2.0, "<="),
        "pandas / ledgerviz (CPU)": ("pandas", "ledgerviz", 3.0, ">="),
    }
    for label, (top, bottom, target, sense) in ratios.items():
        ratio = statistics.median(t / b for t, b in zip(cpu[top], cpu[bottom], strict=True))
        met = ratio <= target if sense == "<=" else ratio >= target
        verdict = "met" if met else "NOT met"
        print(f"  {label:>28} = {ratio:5.2f}x   (target {sense} {target}x: {verdict})")


def main() -> None:
    """Write (or reuse) a fleet, run every route per round in fresh processes, print ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--folder", type=Path, help="write the fleet here (reused if complete)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs per route")
    parser.add_argument("--route", choices=list(ROUTES), help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(run_route(ROUTES[args.route], args.path)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        events = write_fleet(folder, args.sessions)
        print(
            f"fleet: {args.sessions:,} sessions, {events:,} events "
            f"({sum(p.stat().st_size for p in _files(folder)) / 2**20:.0f} MiB) "
            f"ready in {time.perf_counter() - started:.1f}s"
        )
        results: list[dict[str, Any]] = []
        for number in range(1, args.rounds + 1):
            print(f"round {number}/{args.rounds} ({load_average()} at its start)")
            result = {route: in_fresh_process(__file__, route, folder) for route in ROUTES}
            for route, measured in result.items():
                print(
                    f"  {route:>16}: {measured['cpu']:6.2f} s CPU {measured['seconds']:6.2f} s wall"
                    f"   peak +{measured['peak_mib']:5.0f} MiB   ({measured['rows']:,} rows)"
                )
            results.append(result)
        _report(results, args.sessions)


if __name__ == "__main__":
    sys.exit(main())
