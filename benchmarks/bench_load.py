"""Load benchmark: ledgerviz.load + all frames vs. the orjson floor vs. json + json_normalize.

Run: python benchmarks/bench_load.py [--events N] [--path LEDGER]

Each route runs in a fresh Python process so its peak memory is its own: the figure
reported is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end minus the resident
set size just before the work starts (both in MiB; imports excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

ROUTES = ("floor", "ledgerviz", "pandas")
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


def floor(path: Path) -> int:
    """Read the file and decode every line with orjson; nothing else."""
    return len([orjson.loads(line) for line in path.read_bytes().splitlines()])


def with_ledgerviz(path: Path) -> int:
    """ledgerviz.load plus every frame."""
    import ledgerviz

    frames = ledgerviz.load(path).frames
    return len(frames.all()["events"])


def with_pandas(path: Path) -> int:
    """What a user would write without ledgerviz: json.loads per line + pandas.json_normalize."""
    import pandas as pd

    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return len(pd.json_normalize(rows))


def _rss_mib() -> float:
    """Return the current resident set size in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_route(route: str, path: Path) -> dict[str, float]:
    """Time one route in this process; return seconds and peak memory above the start (MiB)."""
    work: Callable[[Path], int] = {
        "floor": floor,
        "ledgerviz": with_ledgerviz,
        "pandas": with_pandas,
    }[route]
    if route == "ledgerviz":
        import ledgerviz.api  # noqa: F401  (imports are not part of the measured work)
    if route == "pandas":
        import pandas  # noqa: F401
    start_rss = _rss_mib()
    start = time.perf_counter()
    rows = work(path)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - start_rss
    return {"seconds": seconds, "peak_mib": peak, "rows": rows}


def _in_fresh_process(route: str, path: Path) -> dict[str, float]:
    """Run one route in a new interpreter and return its measurement."""
    repository = str(Path(__file__).resolve().parents[1])
    search_path = os.pathsep.join(filter(None, [repository, os.environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, __file__, "--route", route, "--path", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": search_path},
    )
    return json.loads(result.stdout)


def main() -> None:
    """Generate (or take) a ledger, run the three routes, print times, memory and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--path", type=Path, help="use this ledger instead of generating one")
    parser.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(run_route(args.route, args.path)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = args.path
        if path is None:
            path = Path(folder) / "bench.jsonl"
            started = time.perf_counter()
            count = write_ledger(path, args.events)
            print(
                f"generated {count:,} events ({path.stat().st_size / 2**20:.0f} MiB) "
                f"in {time.perf_counter() - started:.1f}s"
            )
        results = {route: _in_fresh_process(route, path) for route in ROUTES}
    for route, result in results.items():
        print(
            f"{route:>10}: {result['seconds']:7.2f} s   peak +{result['peak_mib']:7.0f} MiB"
            f"   ({result['rows']:,} rows)"
        )
    floor_s, lv_s, pd_s = (results[r]["seconds"] for r in ROUTES)
    print(f"ledgerviz / floor  = {lv_s / floor_s:.2f}x   (target <= 2.5x)")
    print(f"pandas / ledgerviz = {pd_s / lv_s:.2f}x   (target >= 3x)")
    print("memory: ru_maxrss at the end minus VmRSS before the work, fresh process per route")


if __name__ == "__main__":
    main()
