"""Probe: one session per Parquet row group, or one row group per batch of sessions?

Run: python benchmarks/probe_export_row_groups.py [--sessions N] [--folder DIR]

Builds the ``events`` frame of ``bench_fleet.py``'s fleet (default 10,000 sessions, DIR
reused when it holds them), writes it as one file twice, one row group in all and one row
group per session, and times DuckDB reading one session and the whole file from each.
The figures decide the export's layout (docs/export.md, "Why row groups per batch").
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_fleet import write_fleet


def seconds(work: Callable[[], object]) -> float:
    """Return the wall seconds of one call of ``work``."""
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    """Write the fleet, the two files, and print each layout's figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    import duckdb
    import pyarrow.parquet as pq

    import ledgerviz
    from ledgerviz.export.parquet import frame_table, session_lengths

    with tempfile.TemporaryDirectory(prefix="ledgerviz-probe-rg-") as temporary:
        folder = args.folder or Path(temporary) / "fleet"
        folder.mkdir(parents=True, exist_ok=True)
        write_fleet(folder, args.sessions)
        events = ledgerviz.load(folder).frames.events
        table = frame_table(events, "events")
        one, per = Path(temporary) / "one.parquet", Path(temporary) / "per.parquet"

        def per_session() -> None:
            with pq.ParquetWriter(per, table.schema) as writer:
                offset = 0
                for length in session_lengths(events):
                    writer.write_table(table.slice(offset, length))
                    offset += length

        written = {one: seconds(lambda: pq.write_table(table, one)), per: seconds(per_session)}
        key = str(events["session"].iloc[len(events) // 2])
        print(f"{args.sessions} sessions, {len(events)} events")
        print(f"{'layout':<26}{'write s':>9}{'MiB':>8}{'row groups':>12}{'1 session s':>13}"
              f"{'all s':>8}")
        for path, name in ((one, "one row group"), (per, "a row group per session")):
            found = seconds(lambda p=path: duckdb.execute(
                f"SELECT type, count(*) FROM '{p}' WHERE session = ? GROUP BY 1", [key]
            ).fetchall())
            whole = seconds(lambda p=path: duckdb.sql(
                f"SELECT type, count(*) FROM '{p}' GROUP BY 1").fetchall())
            print(f"{name:<26}{written[path]:>9.2f}{path.stat().st_size / 2**20:>8.1f}"
                  f"{pq.ParquetFile(path).metadata.num_row_groups:>12}{found:>13.2f}"
                  f"{whole:>8.2f}")


if __name__ == "__main__":
    main()
