"""Load benchmark: ledgerviz.load + all frames vs. the orjson floor, json + json_normalize, DuckDB.

Run: python benchmarks/bench_load.py [--events N] [--path LEDGER] [--rounds R] [--stages]

Each route runs in a fresh Python process so its peak memory is its own: the figure
reported is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end minus the resident
set size just before the work starts (both in MiB; imports excluded). A route's time
stops before what it built is freed (no route pays its teardown). Every route runs
once per round; the report gives median times and the median of the per-round ratios,
against both floors: the issue's (cyclic GC on) and the GC-paused one.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

T0 = 1_787_000_000_000


def _turn_events(turn: int, seq: int) -> Iterator[dict[str, Any]]:
    """Yield the events of one realistic v4 turn: a tool step with two calls, then an answer."""
    source = {"kind": "model", "provider": "deepseek", "model": "deepseek-v4"}
    calls = [(f"call-{turn}-{i}", name) for i, name in enumerate(("read", "bash"))]
    usage = {"inputTokens": 1200 + turn % 500, "outputTokens": 80, "cacheReadTokens": 900}
    yield {"type": "turn/start", "data": {"turn": turn}}
    yield {
        "type": "user/message",
        "data": {
            "id": f"u{turn}",
            "role": "user",
            "source": {"kind": "user"},
            "content": [
                {"type": "text", "text": f"Please inspect module {turn} and run its tests."}
            ],
        },
        "surfaceOp": "append",
    }
    yield {"type": "step/start", "data": {"turn": turn, "step": 1}}
    blocks = [{"type": "reasoning", "text": "I should read the file first, then run the tests."}]
    blocks += [
        {
            "type": "tool-call",
            "id": cid,
            "name": name,
            "arguments": json.dumps({"path": f"src/mod{turn}.py", "limit": 200}),
        }
        for cid, name in calls
    ]
    yield {
        "type": "assistant/message",
        "data": {
            "turn": turn,
            "step": 1,
            "message": {
                "id": f"a{turn}-1",
                "role": "assistant",
                "content": blocks,
                "source": source,
            },
            "stream": [
                {
                    "type": "text-chunks",
                    "time0": 0,
                    "index": 0,
                    "dt": [3, 4],
                    "texts": ["I should", " read the file", " first."],
                }
            ],
            "usage": usage,
        },
        "surfaceOp": "append",
    }
    for cid, name in calls:
        yield {
            "type": "tool/call",
            "data": {
                "turn": turn,
                "step": 1,
                "callId": cid,
                "name": name,
                "arguments": '{"path":"src/mod.py"}',
            },
        }
        yield {
            "type": "tool/result",
            "data": {
                "turn": turn,
                "step": 1,
                "message": {
                    "id": f"r-{cid}",
                    "role": "tool",
                    "toolCallId": cid,
                    "source": {"kind": "tool", "callId": cid},
                    "content": [{"type": "text", "text": "def f(x):\n    return x * 2\n" * 4}],
                },
                "meta": {"lines": 8},
            },
            "surfaceOp": "append",
            "sourceEventSeqs": [seq + 4 if name == "read" else seq + 6],
        }
    yield {"type": "step/end", "data": {"turn": turn, "step": 1}}
    yield {"type": "step/start", "data": {"turn": turn, "step": 2}}
    yield {
        "type": "assistant/message",
        "data": {
            "turn": turn,
            "step": 2,
            "message": {
                "id": f"a{turn}-2",
                "role": "assistant",
                "source": source,
                "content": [
                    {"type": "text", "text": "All tests pass; the module doubles its input."}
                ],
            },
            "stream": [],
            "usage": usage,
        },
        "surfaceOp": "append",
    }
    yield {"type": "step/end", "data": {"turn": turn, "step": 2}}
    yield {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}}


def write_ledger(path: Path, events: int) -> int:
    """Write a v4 ledger of at least ``events`` events to ``path``; return the event count."""
    header = {
        "type": "session",
        "version": 4,
        "id": "bench",
        "createdAt": T0,
        "isSeeded": False,
        "delegationDepth": 0,
    }
    seq, turn = 0, 1
    with path.open("wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        while seq < events:
            lines = []
            for event in _turn_events(turn, seq):
                event["seq"], event["time"] = seq, T0 + 7 * seq
                lines.append(orjson.dumps(event))
                seq += 1
            out.write(b"\n".join(lines) + b"\n")
            turn += 1
    return seq


Built = tuple[int, Any]
"""What a route returns: its row count, and everything it built (kept until timed)."""


def floor(path: Path) -> Built:
    """Read the file and decode every line with orjson; nothing else (the issue's floor)."""
    values = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return len(values), values


def floor_gc_paused_lines(lines: list[bytes]) -> Built:
    """Decode every line with orjson, the cyclic GC kept out: the cost of decoding alone.

    The GC is disabled while decoding and the decoded values are frozen before it is
    enabled again (``gc.freeze``), so no collection over them lands in the timing;
    ledgerviz likewise leaves them to a later full collection (its ``paused_gc``).
    """
    gc.disable()
    try:
        values = [orjson.loads(line) for line in lines]
        return len(values), values
    finally:
        gc.freeze()
        gc.enable()


def floor_gc_paused(path: Path) -> Built:
    """The floor with the GC paused (see ``floor_gc_paused_lines``), reading included."""
    return floor_gc_paused_lines(path.read_bytes().splitlines())


def chunk_lines(path: Path) -> Iterator[list[bytes]]:
    """Yield the complete lines of each ``READ_BYTES`` the file is read in, as the reader
    reads it (what follows the last newline, a torn write, is dropped)."""
    from ledgerviz.ledger.reader import READ_BYTES

    with path.open("rb", buffering=0) as raw:
        carry = b""
        while chunk := raw.read(READ_BYTES):
            lines = (carry + chunk).split(b"\n")
            carry = lines.pop()
            yield lines


def floor_gc_paused_chunked(path: Path) -> Built:
    """The GC-paused floor reading the file a chunk at a time, as ledgerviz does, each
    chunk's lines dropped once decoded: decoding alone, without holding the whole file
    and its million split lines (about 500 MiB more for 1M events) while decoding."""
    values: list[Any] = []
    gc.disable()
    try:
        for lines in chunk_lines(path):
            values += map(orjson.loads, lines)
        return len(values), values
    finally:
        gc.freeze()
        gc.enable()


def with_ledgerviz(path: Path) -> Built:
    """ledgerviz.load plus every frame.

    The ``Ledger`` is returned with the frames: dropping it inside the route would free
    the million decoded event dicts within the timing, a teardown no other route pays.
    """
    import ledgerviz

    ledger = ledgerviz.load(path)
    frames = ledger.frames.all()
    return len(frames["events"]), (ledger, frames)


def ledgerviz_load(path: Path) -> Built:
    """ledgerviz.load alone: the read route (checks, typed table, events on demand)."""
    import ledgerviz

    ledger = ledgerviz.load(path)
    return sum(len(log.events) for log in ledger.sessions), ledger


def with_pandas(path: Path) -> Built:
    """What a user would write without ledgerviz: json.loads per line + pandas.json_normalize."""
    import pandas as pd

    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    frame = pd.json_normalize(rows)
    return len(frame), (rows, frame)


def with_duckdb(path: Path) -> Built:
    """DuckDB's ``read_ndjson_auto`` into a table: a peer that infers a schema from a sample
    and checks nothing (it runs on every core; its CPU time counts all of them)."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    quoted = str(path).replace("'", "''")
    connection.execute(f"CREATE TABLE events AS SELECT * FROM read_ndjson_auto('{quoted}')")
    (rows,) = connection.execute("SELECT count(*) FROM events").fetchone()  # type: ignore[misc]
    return rows, connection


ROUTES: dict[str, Callable[[Path], Built]] = {
    "floor": floor,
    "floor_gc_paused": floor_gc_paused,
    "floor_gc_paused_chunked": floor_gc_paused_chunked,
    "ledgerviz": with_ledgerviz,
    "ledgerviz_load": ledgerviz_load,
    "pandas": with_pandas,
    "duckdb": with_duckdb,
}


def ledgerviz_stages(path: Path) -> dict[str, float]:
    """Return the seconds of each stage of the ledgerviz route, in this process."""
    import ledgerviz
    from ledgerviz.frames import FRAME_NAMES

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    ledger = ledgerviz.load(path)
    seconds["load"] = time.perf_counter() - start
    start = time.perf_counter()
    for log in ledger.sessions:  # the typed table, when the reader did not fill it
        log.event_table()
    seconds["table"] = time.perf_counter() - start
    start = time.perf_counter()
    frames = ledger.recovery("recorded").frames
    seconds["analyze"] = time.perf_counter() - start
    for name in FRAME_NAMES:
        start = time.perf_counter()
        getattr(frames, name)
        seconds[name] = time.perf_counter() - start
    return seconds


def _rss_mib() -> float:
    """Return the current resident set size in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_route(route: Callable[[Path], Built], path: Path) -> dict[str, float]:
    """Time one route in this process; return wall and CPU seconds and peak memory (MiB).

    Peak memory is the peak resident set size above the one just before the work.
    """
    import duckdb  # noqa: F401
    import pandas  # noqa: F401

    import ledgerviz.api  # noqa: F401  (imports are not part of the measured work)

    start_rss = _rss_mib()
    start, start_cpu = time.perf_counter(), time.process_time()
    rows, built = route(path)
    # stopped before ``built`` is freed: no route times its teardown
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - start_rss
    del built
    return {"seconds": seconds, "cpu": cpu, "peak_mib": peak, "rows": rows}


def repository_environment() -> dict[str, str]:
    """Return this process's environment with this repository first on ``PYTHONPATH``, so
    that a new interpreter imports the ledgerviz measured here."""
    repository = str(Path(__file__).resolve().parents[1])
    search_path = os.pathsep.join(filter(None, [repository, os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": search_path}


def in_fresh_process(script: str, route: str, path: Path) -> dict[str, Any]:
    """Run ``script --route route --path path`` in a new interpreter; return its JSON line."""
    result = subprocess.run(
        [sys.executable, script, "--route", route, "--path", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=repository_environment(),
    )
    return json.loads(result.stdout)


def load_average() -> str:
    """Return the 1-minute load average and the CPU count, for the record."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def _measure(path: Path, rounds: int) -> list[dict[str, dict[str, float]]]:
    """Run every route once per round, each in a fresh process; print each round."""
    results = []
    for number in range(1, rounds + 1):
        print(f"round {number}/{rounds} ({load_average()} at its start)")
        result = {route: in_fresh_process(__file__, route, path) for route in ROUTES}
        for route, measured in result.items():
            print(
                f"  {route:>23}: {measured['seconds']:7.2f} s"
                f"   peak +{measured['peak_mib']:6.0f} MiB   ({measured['rows']:,} rows)"
            )
        results.append(result)
    return results


def _report(results: list[dict[str, dict[str, float]]]) -> None:
    """Print the median time per route and the median of the per-round ratios."""
    seconds = {route: [r[route]["seconds"] for r in results] for route in ROUTES}
    print(f"median of {len(results)} rounds ({load_average()} at the end):")
    for route, values in seconds.items():
        print(f"  {route:>23}: {statistics.median(values):7.2f} s")
    ratios = {  # issue 35's targets (the GC-on floor is the older issues' reference)
        "ledgerviz / floor": ("ledgerviz", "floor", 2.0, "<="),
        "ledgerviz / floor_gc_paused": ("ledgerviz", "floor_gc_paused", 2.0, "<="),
        "ledgerviz / floor_gc_paused_chunked": ("ledgerviz", "floor_gc_paused_chunked", 2.0,
                                                "<="),
        "pandas / ledgerviz": ("pandas", "ledgerviz", 6.0, ">="),
        "ledgerviz / duckdb": ("ledgerviz", "duckdb", 1.5, "<="),
    }
    for label, (top, bottom, target, sense) in ratios.items():
        ratio = statistics.median(t / b for t, b in zip(seconds[top], seconds[bottom], strict=True))
        met = ratio <= target if sense == "<=" else ratio >= target
        verdict = "met" if met else "NOT met"
        print(f"  {label:>36} = {ratio:5.2f}x   (target {sense} {target}x: {verdict})")
    cpu = {route: [r[route]["cpu"] for r in results] for route in ("ledgerviz", "duckdb")}
    ratio = statistics.median(t / b for t, b in zip(cpu["ledgerviz"], cpu["duckdb"], strict=True))
    print(f"  {'ledgerviz / duckdb (CPU, every core)':>36} = {ratio:5.2f}x")
    print("memory: ru_maxrss at the end minus VmRSS before the work, fresh process per route")


def _print_stages(path: Path, rounds: int) -> None:
    """Print the ledgerviz route's stage timings (median of ``rounds`` fresh processes)."""
    runs = [in_fresh_process(__file__, "stages", path) for _ in range(rounds)]
    print(f"ledgerviz stages, median of {rounds} fresh processes ({load_average()}):")
    for stage in runs[0]:
        print(f"  {stage:>10}: {statistics.median(run[stage] for run in runs):6.2f} s")
    after_load = statistics.median(sum(run.values()) - run["load"] for run in runs)
    total = statistics.median(sum(run.values()) for run in runs)
    print(f"  {'after load':>10}: {after_load:6.2f} s (the analysis and every frame)")
    print(f"  {'total':>10}: {total:6.2f} s")


@contextmanager
def given_or_generated(path: Path | None, events: int, name: str) -> Iterator[Path]:
    """Yield ``path``, or a ledger of ``events`` events written to a temporary folder."""
    if path is not None:
        yield path
        return
    with tempfile.TemporaryDirectory() as folder:
        generated = Path(folder) / name
        started = time.perf_counter()
        count = write_ledger(generated, events)
        print(
            f"generated {count:,} events ({generated.stat().st_size / 2**20:.0f} MiB) "
            f"in {time.perf_counter() - started:.1f}s"
        )
        yield generated


def main() -> None:
    """Generate (or take) a ledger, run every route, print times, memory and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--path", type=Path, help="use this ledger instead of generating one")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs per route")
    parser.add_argument(
        "--stages", action="store_true", help="also time each stage of the ledgerviz route"
    )
    parser.add_argument("--route", choices=[*ROUTES, "stages"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route == "stages":
        print(json.dumps(ledgerviz_stages(args.path)))
        return
    if args.route:
        print(json.dumps(run_route(ROUTES[args.route], args.path)))
        return
    with given_or_generated(args.path, args.events, "bench.jsonl") as path:
        if args.stages:
            _print_stages(path, args.rounds)
        _report(_measure(path, args.rounds))


if __name__ == "__main__":
    main()
