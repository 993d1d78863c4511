"""Export benchmark: ``ledgerviz export`` of N sessions vs. json_normalize + to_parquet.

Run: python benchmarks/bench_export.py [--sessions N] [--folder DIR] [--rounds R]

The fleet is ``bench_fleet.py``'s (every single-session scenario of the simulator in
turn, 1 or 2 turns, one seed per session), written into DIR (default: a temporary folder;
an existing DIR holding the right number of ledgers is reused). Routes, each timed in this process
after every import is loaded (wall and CPU time, median of R rounds):

| route | what it does |
| --- | --- |
| export_cold | ``ledgerviz.export.export`` into an empty folder: every frame, every session |
| rerun_unchanged | the same export again: every file skipped on size + mtime |
| rerun_touched | every file's mtime moved, content kept: every file hashed, none rewritten |
| rerun_changed_1pct | 1% of the files rewritten with one line less: only those re-exported |
| frames_to_parquet | peer: ``ledgerviz.load`` + every frame, one flat ``to_parquet`` file each |
| pandas_to_parquet | peer: json.loads per line, one json_normalize, one ``to_parquet`` file |
| pandas_partitioned | peer: the same written with ``partition_cols=["session"]`` |
| duckdb_fleet_query | the fleet question (outcome-unknown calls by tool and day) on the export |

It also prints the files per frame of the export after the cold run and after the 1%
rerun, and export_cold's time over each peer's, wall and CPU (the target is <= 1.5x
frames_to_parquet; on a shared machine the CPU ratio is the steadier one).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_fleet import write_fleet


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """Return (wall seconds, CPU seconds) of one call of ``work``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def pandas_route(folder: Path, out: Path, partitioned: bool) -> None:
    """json.loads every complete line, json_normalize all rows, write them with to_parquet."""
    import pandas as pd

    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        pieces = path.read_bytes().split(b"\n")
        pieces.pop()  # the torn tail, if any
        for line in pieces:
            row = json.loads(line)
            row["session"] = path.stem
            rows.append(row)
    frame = pd.json_normalize(rows)
    frame = frame.astype({c: str for c in frame.columns if frame[c].dtype == object})
    if partitioned:
        frame.to_parquet(out, partition_cols=["session"])
    else:
        frame.to_parquet(out / "rows.parquet")


def frames_route(folder: Path, out: Path) -> None:
    """Load the folder, build every frame, write each with one flat ``to_parquet``."""
    import ledgerviz

    frames = ledgerviz.load(folder).recovery("recorded").frames
    for name, frame in frames.all().items():
        frame.to_parquet(out / f"{name}.parquet")


def files_per_frame(out: Path) -> int:
    """Return the largest number of files any frame of the export at ``out`` has."""
    return max(sum(1 for p in frame.rglob("*") if p.is_file())
               for frame in out.iterdir() if frame.is_dir() and not frame.name.startswith("."))


def fleet_query(out: Path) -> int:
    """Run the notebook's DuckDB fleet question on the export; return its row count."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return len(
        con.execute(
            f"""SELECT CAST(dispatch_time AS DATE) AS day, tool, count(*) AS calls
            FROM read_parquet('{out}/calls/*.parquet')
            WHERE status = 'outcome_unknown' GROUP BY ALL ORDER BY day, tool"""
        ).fetchall()
    )


def one_round(folder: Path, scratch: Path) -> dict[str, tuple[float, float]]:
    """Run every route once; return (wall, cpu) per route, and the export's files per frame
    (cold, after the 1% rerun) as ``files_cold`` and ``files_1pct``."""
    from ledgerviz.export import export

    out = scratch / "export"
    shutil.rmtree(out, ignore_errors=True)
    files = sorted(folder.glob("*.jsonl"))
    results = {"export_cold": timed(lambda: export([folder], out))}
    cold_files = files_per_frame(out)
    results["rerun_unchanged"] = timed(lambda: export([folder], out))
    for path in files:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    results["rerun_touched"] = timed(lambda: export([folder], out))
    changed = files[::100]  # 1% of the files
    originals = {path: path.read_bytes() for path in changed}
    for path, content in originals.items():
        path.write_bytes(b"".join(content.splitlines(keepends=True)[:-1]))
    results["rerun_changed_1pct"] = timed(lambda: export([folder], out))
    results["duckdb_fleet_query"] = timed(lambda: fleet_query(out))
    results["files_cold"] = (cold_files, 0.0)
    results["files_1pct"] = (files_per_frame(out), 0.0)
    for path, content in originals.items():
        path.write_bytes(content)
    target = scratch / "frames_to_parquet"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    results["frames_to_parquet"] = timed(lambda: frames_route(folder, target))
    for name, partitioned in (("pandas_to_parquet", False), ("pandas_partitioned", True)):
        target = scratch / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        results[name] = timed(lambda t=target, p=partitioned: pandas_route(folder, t, p))
    return results


def main() -> None:
    """Parse arguments, write the fleet, run the rounds and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import duckdb  # noqa: F401  (imports loaded before any clock starts)
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    import ledgerviz.export  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="ledgerviz-bench-export-") as temporary:
        folder = args.folder or Path(temporary) / "fleet"
        folder.mkdir(parents=True, exist_ok=True)
        events = write_fleet(folder, args.sessions)
        size = sum(p.stat().st_size for p in folder.glob("*.jsonl")) / 2**20
        rounds = [one_round(folder, Path(temporary)) for _ in range(args.rounds)]
    print(f"{args.sessions} sessions, {events} events, {size:.1f} MiB; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'route':<22}{'wall s':>10}{'cpu s':>10}")
    for route in (r for r in rounds[0] if not r.startswith("files_")):
        wall = statistics.median(r[route][0] for r in rounds)
        cpu = statistics.median(r[route][1] for r in rounds)
        print(f"{route:<22}{wall:>10.2f}{cpu:>10.2f}")
    cold = statistics.median(r["export_cold"][0] for r in rounds)
    for peer in ("frames_to_parquet", "pandas_to_parquet", "pandas_partitioned"):
        wall, cpu = (statistics.median(r["export_cold"][i] / r[peer][i] for r in rounds)
                     for i in (0, 1))
        print(f"export_cold / {peer}: {wall:.2f}x wall, {cpu:.2f}x CPU (median of rounds)")
    print(f"files per frame: {rounds[-1]['files_cold'][0]:.0f} after export_cold, "
          f"{rounds[-1]['files_1pct'][0]:.0f} after rerun_changed_1pct")
    unchanged = statistics.median(r["rerun_unchanged"][0] for r in rounds)
    print(f"rerun_unchanged is {cold / unchanged:.0f}x faster than export_cold")


if __name__ == "__main__":
    main()
