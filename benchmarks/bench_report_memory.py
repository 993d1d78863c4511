"""Peak memory of ``ledgerviz report`` over a folder of many sessions, against loading it.

Run: python benchmarks/bench_report_memory.py [--sessions 10000] [--folder DIR] [--rounds 2]

The folder is ``bench_fleet.py``'s fleet (``--folder`` keeps it, or names any folder of
ledgers: an existing one is used as it is). Each route runs in a fresh process, once per
round, imports included; the figures are its wall time, CPU time (user + system) and peak
resident memory (``ru_maxrss``, from ``os.wait4``):

- report: ``ledgerviz report DIR -o FILE``, the command as users run it;
- load: ``ledgerviz.load(DIR)`` and nothing else, the peer: what holding every session of
  the folder at once takes, the least a report that loads them all needs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_fleet import write_fleet
from bench_load import load_average, repository_environment


def run(command: list[str]) -> dict[str, float]:
    """Run ``command`` in a fresh process; return its wall and CPU seconds and peak MiB."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=repository_environment())
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: a session has errors, as reported
        raise SystemExit(f"{command} failed with status {status}")
    return {"seconds": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024}


def routes(folder: Path, page: Path) -> dict[str, list[str]]:
    """Return the command of each route."""
    return {
        "report": [sys.executable, "-m", "ledgerviz", "report", str(folder), "-o", str(page)],
        "load": [sys.executable, "-c", f"import ledgerviz; ledgerviz.load({str(folder)!r})"],
    }


def main() -> None:
    """Write (or reuse) the folder, run both routes per round, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--folder", type=Path, help="the fleet's folder (reused if it exists)")
    parser.add_argument("--rounds", type=int, default=2, help="fresh-process runs per route")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch, "fleet")
        if not folder.is_dir() or not any(folder.glob("*.jsonl")):
            folder.mkdir(parents=True, exist_ok=True)
            write_fleet(folder, args.sessions)
        files = sorted(folder.rglob("*.jsonl"))
        size = sum(path.stat().st_size for path in files) / 2**20
        print(f"{folder}: {len(files):,} files, {size:.0f} MiB")
        results: dict[str, list[dict[str, float]]] = {"report": [], "load": []}
        for number in range(1, args.rounds + 1):
            print(f"round {number}/{args.rounds} ({load_average()} at its start)")
            for route, command in routes(folder, Path(scratch, "report.html")).items():
                measured = run(command)
                results[route].append(measured)
                print(f"  {route:>6}: {measured['seconds']:7.2f} s wall {measured['cpu']:7.2f} s "
                      f"CPU   peak {measured['peak_mib']:6.0f} MiB")
        print(f"median of {args.rounds} rounds ({load_average()} at the end):")
        peaks = {}
        for route, measured in results.items():
            peaks[route] = statistics.median(m["peak_mib"] for m in measured)
            wall = statistics.median(m["seconds"] for m in measured)
            print(f"  {route:>6}: {wall:7.2f} s wall   peak {peaks[route]:6.0f} MiB")
        print(f"  report peak / load peak = {peaks['report'] / peaks['load']:.2f}x "
              "(for the record)")


if __name__ == "__main__":
    main()
