"""Streaming check benchmark: ``ledgerviz check --stream`` on a multi-gigabyte ledger.

Run: python benchmarks/bench_stream.py [--events N] [--path LEDGER] [--rounds R]

Generates (or takes) a v4 ledger (``bench_load.write_ledger``; the default 9,000,000
events are about 2 GiB) and measures, each in a fresh process (see ``bench_load.py``):

- floor_stream: read the file in the reader's chunks (1 MiB) and ``orjson.loads`` every
  line with the cyclic GC paused, each block's values dropped before the next: decoding
  alone, in bounded memory (holding every value, as the load floor does, would need ~15 GB);
- typed_decode: the streamed check's reading without its per-event Python: the line
  split, the number screens and the typed (msgspec) decode, each block dropped: the
  least ``summarize`` can cost as it is built (not a target, a bound);
- summarize: ``ledgerviz.streams.summary.summarize(path)``, what ``ledgerviz check --stream``
  runs: reading, every reader check, the recovery tracker, the call counts, the fork
  points and each policy's provider pairing (``streams.recovery``);
- repair: ``ledgerviz repair PATH`` in-process (stdout captured): the runtime's
  recoverable read, with its duplicate-key check, and the tracker;
- fork: what ``ledgerviz fork PATH --at SEQ`` runs (``fork_file.write_fork``) at the
  last seq but one, the child's lines counted and dropped: both reads of the file (the
  first with the typed decoder), and every event re-encoded into the child.

The targets (issue 35's, for the streamed check): peak memory <= 150 MB and at least the
floor's throughput. repair and fork are held to the same memory bound; their
throughput, which no target covers, is printed for the record.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import statistics
from pathlib import Path

import orjson
from bench_load import (
    Built,
    chunk_lines,
    given_or_generated,
    in_fresh_process,
    load_average,
    run_route,
)


def floor_stream(path: Path) -> Built:
    """Decode every line chunk by chunk with the GC paused, dropping each block's values."""
    lines_read = 0
    gc.disable()
    try:
        for lines in chunk_lines(path):
            values = [orjson.loads(line) for line in lines]
            lines_read += len(values)
            del values
    finally:
        gc.enable()
    return lines_read, None


def typed_decode(path: Path) -> Built:
    """What the streamed check does before any per-event Python: the reader's line split
    and number screens, then the typed decode of every line (``typed_schema.decoded``), each
    block's events dropped; GC paused, as the reader pauses it."""
    from ledgerviz.ledger.gcpause import paused_gc
    from ledgerviz.ledger.numbers import may_hold_big_integers, number_marks
    from ledgerviz.ledger.reader import READ_BYTES
    from ledgerviz.ledger.typed_schema import decoded

    events, carry, version = 0, b"", None
    with path.open("rb", buffering=0) as raw, paused_gc():
        while chunk := raw.read(READ_BYTES):
            block = carry + chunk
            lines = block.split(b"\n")
            carry = lines.pop()
            if version is None:  # the header line is no event
                version, lines = orjson.loads(lines[0])["version"], lines[1:]
            marks = number_marks(block)
            if may_hold_big_integers(block, marks):
                raise SystemExit(f"{path}: an integer beyond 64 bits, not a bench ledger")
            typed = decoded(lines, block, marks, version)
            if typed is None:
                raise SystemExit(f"{path}: a block the typed decoder refuses")
            events += len(typed)
            del typed, marks
    return events, None


def summarize(path: Path) -> Built:
    """``ledgerviz.streams.summary.summarize``: the streamed check of the file."""
    from ledgerviz.streams.summary import summarize

    (summary,) = summarize(path)
    return summary.events, summary


def repair(path: Path) -> Built:
    """``ledgerviz repair PATH``, its stdout (the closers) kept in memory."""
    from ledgerviz.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["repair", str(path)])
    if code != 0:
        raise SystemExit(f"ledgerviz repair {path} exited {code}")
    return len(printed.getvalue().splitlines()), printed


def fork(path: Path) -> Built:
    """``write_fork`` at the last seq but one, the lines written counted, not kept."""
    from ledgerviz.streams.fork_file import write_fork

    written = 0

    def count(text: str) -> None:
        nonlocal written
        written += text.count("\n")

    with path.open("rb") as handle:  # the last line holds the last seq
        handle.seek(max(0, path.stat().st_size - (64 << 10)))
        last_seq = orjson.loads(handle.read().splitlines()[-1])["seq"]
    write_fork(path, count, last_seq - 1, created_at=0)
    return written, None


ROUTES = {"floor_stream": floor_stream, "typed_decode": typed_decode, "summarize": summarize,
          "repair": repair, "fork": fork}
ROWS = {"repair": "closers printed", "fork": "lines written"}
SHARE_TARGET = 1.0
"""The streamed check's throughput / the floor's (issue 35)."""
PEAK_TARGET = 150e6
"""Bytes of peak memory above the start allowed (issue 35)."""


def main() -> None:
    """Generate (or take) a ledger, run both routes per round, print time, memory, ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=9_000_000)
    parser.add_argument("--path", type=Path, help="use this ledger instead of generating one")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs per route")
    parser.add_argument("--route", choices=list(ROUTES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(run_route(ROUTES[args.route], args.path)))
        return
    with given_or_generated(args.path, args.events, "stream.jsonl") as path:
        size = path.stat().st_size
        print(f"ledger: {path} ({size / 2**20:,.0f} MiB)")
        results = []
        for number in range(1, args.rounds + 1):
            print(f"round {number}/{args.rounds} ({load_average()} at its start)")
            result = {route: in_fresh_process(__file__, route, path) for route in ROUTES}
            for route, measured in result.items():
                print(
                    f"  {route:>12}: {measured['seconds']:7.2f} s wall {measured['cpu']:7.2f} s CPU"
                    f"  {size / 2**20 / measured['seconds']:6.0f} MiB/s"
                    f"   peak +{measured['peak_mib']:5.0f} MiB   ({measured['rows']:,} "
                    f"{ROWS.get(route, 'rows')})"
                )
            results.append(result)
        print(f"median of {len(results)} rounds ({load_average()} at the end):")
        for route in ROUTES:
            seconds = statistics.median(r[route]["seconds"] for r in results)
            peak = statistics.median(r[route]["peak_mib"] for r in results)
            print(f"  {route:>12}: {seconds:7.2f} s   peak +{peak:5.0f} MiB")
        for route in ("typed_decode", "summarize", "repair", "fork"):
            share = statistics.median(
                r["floor_stream"]["seconds"] / r[route]["seconds"] for r in results
            )
            peak = max(r[route]["peak_mib"] for r in results)
            verdict = f"target >= {SHARE_TARGET}: {'met' if share >= SHARE_TARGET else 'NOT met'}"
            print(f"  throughput {route} / floor_stream = {share:4.2f} "
                  f"({verdict if route == 'summarize' else 'no target, for the record'})")
            within = peak * 2**20 <= PEAK_TARGET
            print(f"  {route} peak (max of rounds) = {peak:.0f} MiB (target <= "
                  f"{PEAK_TARGET / 1e6:.0f} MB: {'met' if within else 'NOT met'})")

if __name__ == "__main__":
    main()
