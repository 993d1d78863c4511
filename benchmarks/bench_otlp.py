"""OTLP export of a 1M-event ledger to an OTLP/JSON file, beside ``ledgerviz export`` (Parquet)
of the same ledger in the same run.

Run on demand: ``python benchmarks/bench_otlp.py [--path 1m.jsonl] [--turns 73000] [--rounds 1]``

Without ``--path`` the ledger is written by the simulator (``ledgerviz simulate --scenario
large --turns 73000``: about 1M events). Each route runs as its own ``ledgerviz`` command
in a fresh process, so that its wall time includes the imports a user waits for and its
peak memory (``ru_maxrss`` of that child) and CPU time are its own:

| route | command |
| --- | --- |
| otlp_json | ``ledgerviz otlp PATH -o spans.json --policy fork`` (over 64 MiB: streamed) |
| otlp_json_loaded | the same with the file loaded (``otlp.STREAM_BYTES`` raised in the child) |
| parquet_export | ``ledgerviz export PATH -o DIR --policy fork`` |

The last line is JSON: per route the median wall and CPU seconds and peak MiB, the span count,
the OTLP/JSON file size and whether both OTLP routes wrote the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOADED = ("import sys, ledgerviz.export.otlp as otlp; from ledgerviz.cli import main; "
          "otlp.STREAM_BYTES = 2**62; sys.exit(main(sys.argv[1:]))")
"""A ``ledgerviz`` command that loads every file, however large."""


def run(command: list[str], loaded: bool = False) -> tuple[float, float, float]:
    """Return (wall seconds, CPU seconds, peak MiB) of one ``ledgerviz`` command in a child
    process (CPU time too: the machine may be shared, and wall time includes waiting)."""
    started = time.perf_counter()
    entry = ["-c", LOADED] if loaded else ["-m", "ledgerviz"]
    child = subprocess.Popen([sys.executable, *entry, *command],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    out, err = child.stdout.read().decode(), child.stderr.read().decode()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"ledgerviz {' '.join(command)} failed:\n{out}{err}")
    cpu = usage.ru_utime + usage.ru_stime
    print(f"  {command[0]}{' (loaded)' if loaded else ''}: {wall:.1f} s wall, {cpu:.1f} s CPU, "
          f"{usage.ru_maxrss / 1024:.0f} MiB; "
          f"{out.strip()}")
    return wall, cpu, usage.ru_maxrss / 1024


def main() -> None:
    """Write or take the ledger, run both routes per round and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=73_000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ledgerviz-bench-otlp-") as temporary:
        scratch = Path(temporary)
        path = args.path or scratch / "1m.jsonl"
        if args.path is None:
            subprocess.run([sys.executable, "-m", "ledgerviz", "simulate", "--scenario", "large",
                            "--turns", str(args.turns), "-o", str(path)], check=True,
                           stdout=subprocess.DEVNULL)
        with open(path, "rb") as stream:
            events = sum(1 for _ in stream) - 1
        print(f"{path}: {events:,} events, {path.stat().st_size / 2**20:.0f} MiB")
        results: dict[str, list[tuple[float, float, float]]] = {
            "otlp_json": [], "otlp_json_loaded": [], "parquet_export": []}
        spans_file, loaded_file = scratch / "spans.json", scratch / "loaded.json"
        for _ in range(args.rounds):
            results["otlp_json"].append(
                run(["otlp", str(path), "-o", str(spans_file), "--policy", "fork"]))
            results["otlp_json_loaded"].append(
                run(["otlp", str(path), "-o", str(loaded_file), "--policy", "fork"], loaded=True))
            shutil.rmtree(scratch / "parquet", ignore_errors=True)
            results["parquet_export"].append(
                run(["export", str(path), "-o", str(scratch / "parquet"), "--policy", "fork"]))
        with open(spans_file, "rb") as stream:
            spans = sum(line.count(b'"spanId"') for line in stream)
        summary = {
            "events": events,
            "spans": spans,
            "otlp_json_mib": round(spans_file.stat().st_size / 2**20, 1),
            "same_bytes": spans_file.read_bytes() == loaded_file.read_bytes(),
            **{route: {"wall_s": round(statistics.median(w for w, _, _ in runs), 1),
                       "cpu_s": round(statistics.median(c for _, c, _ in runs), 1),
                       "peak_mib": round(statistics.median(m for _, _, m in runs))}
               for route, runs in results.items()},
        }
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
