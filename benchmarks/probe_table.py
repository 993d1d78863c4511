"""Probe for issue 35: the columnar event table, typed decode vs. the dicts it would replace.

Run: python benchmarks/probe_table.py --path LEDGER [--rounds R]

Three routes over the same lines, each in a fresh process, GC paused as the reader
pauses it (``bench_load.run_route`` measures time and peak memory):

- ``floor_gc_paused_chunked``: orjson to dicts, chunk by chunk (``bench_load``'s floor);
- ``table_typed``: the read route's table (``reader.FileScan(tabled=True)``): per chunk the
  typed check (``typed.typed_block``) and the table filled from its structs, no dicts (a
  block it refuses goes the dict route: counted in the output);
- ``table_from_dicts``: the floor, then ``EventTable.of`` over the dicts (the route every
  other format takes, and what the dsh reader's dicts would cost on top of the floor).

``ledgerviz.load`` is the ``table_typed`` route plus what a session adds (diagnostics, keys,
events on demand): ``bench_load.py --route ledgerviz_load`` measures that.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
from pathlib import Path

from bench_load import (
    Built,
    floor_gc_paused_chunked,
    in_fresh_process,
    load_average,
    run_route,
)


def table_typed(path: Path) -> Built:
    """The read route's blocks of the file, each a table, GC paused (as the reader pauses it)."""
    from ledgerviz.ledger.reader import READ_BYTES, FileScan
    from ledgerviz.ledger.sources import iter_source_chunks

    ((_, chunks),) = iter_source_chunks(path, READ_BYTES)
    gc.disable()
    try:
        scan = FileScan(str(path), tabled=True)
        blocks = list(scan.blocks(chunks))
        refused = sum(block.held is not None for block in blocks)
        table = scan.session_log(blocks).table
        return len(table), (table, refused)
    finally:
        gc.freeze()
        gc.enable()


def table_from_dicts(path: Path) -> Built:
    """The floor's dicts, then the table built from them, GC paused."""
    from ledgerviz.ledger.table import EventTable

    rows, values = floor_gc_paused_chunked(path)
    gc.disable()
    try:
        return rows, (values, EventTable.of(values[1:]))
    finally:
        gc.freeze()
        gc.enable()


ROUTES = {"floor_gc_paused_chunked": floor_gc_paused_chunked, "table_typed": table_typed,
          "table_from_dicts": table_from_dicts}


def main() -> None:
    """Run every route once per round, each in a fresh process; print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, required=True, help="the ledger to decode")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs per route")
    parser.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(run_route(ROUTES[args.route], args.path)))
        return
    rounds = [{route: in_fresh_process(__file__, route, args.path) for route in ROUTES}
              for _ in range(args.rounds)]
    runs = {route: [measured[route] for measured in rounds] for route in ROUTES}
    size = args.path.stat().st_size / 2**20
    print(f"{args.path} ({size:.0f} MiB), median of {args.rounds} fresh processes "
          f"({load_average()} at the end):")
    floors = [run["cpu"] for run in runs["floor_gc_paused_chunked"]]
    for route, measured in runs.items():
        cpu = statistics.median(run["cpu"] for run in measured)
        ratio = statistics.median(run["cpu"] / floor
                                  for run, floor in zip(measured, floors, strict=True))
        peak = statistics.median(run["peak_mib"] for run in measured)
        print(f"  {route:>23}: {cpu:6.2f} s CPU ({ratio:4.2f}x the floor, same round)"
              f"   peak +{peak:5.0f} MiB ({peak / size:3.1f}x the file)")


if __name__ == "__main__":
    main()
